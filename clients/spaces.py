"""The Gym space of free text: any string that can travel in JSON, not only "printable" ones.

Why a subclass of ``gymnasium.spaces.Text`` rather than ``Text`` with a large charset:

- ``Text.contains`` accepts only characters of a charset that it materialises (a frozenset, a
  tuple and an index dict). All of Unicode is 1.1 million code points; even the 144 thousand
  that ``str.isprintable`` accepts take about half a second and 13 MB per space, and
  ``gymnasium.vector.utils.batch_space`` deep-copies the space once per sub-environment.
- "Printable" is too narrow for real text anyway: newlines and tabs, the no-break space, the
  zero-width joiner inside emoji sequences, soft hyphens and byte-order marks are all
  non-printable and all occur in real prompts and model outputs.

So ``UnicodeText`` keeps a small charset for ``sample()`` (and for ``Text``'s own bookkeeping)
and checks membership by rule: a ``str`` within the length bounds whose code points are all
Unicode scalar values (no lone surrogates), i.e. exactly the strings UTF-8 and JSON carry.
Flattening and shared-memory vector envs index characters by the sampling charset, so use
``shared_memory=False`` with ``AsyncVectorEnv`` (the batched ``EnvServerVectorEnv`` needs none).
"""

from __future__ import annotations

import string
from typing import Any

from gymnasium import spaces

SAMPLE_CHARSET = frozenset(string.ascii_letters + string.digits + string.punctuation + " \n")
"""What ``sample()`` draws from: enough to exercise an environment, small enough to be cheap."""


def _is_scalar_text(text: str) -> bool:
    # Lone surrogates are the only code points UTF-8 cannot encode, and encoding runs in C.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class UnicodeText(spaces.Text):
    """Strings of ``min_length`` to ``max_length`` characters of any Unicode text."""

    def __init__(
        self,
        max_length: int,
        *,
        min_length: int = 0,
        seed: int | Any | None = None,
    ) -> None:
        super().__init__(max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a string of allowed length made of Unicode scalar values."""
        return (
            isinstance(x, str)
            and self.min_length <= len(x) <= self.max_length
            and _is_scalar_text(x)
        )

    def __eq__(self, other: object, /) -> bool:
        # A plain Text with the same sampling charset holds far fewer strings: not equal.
        return (
            type(other) is type(self)
            and isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.min_length, self.max_length))

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"
