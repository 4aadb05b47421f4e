"""What a verifier is: a named, versioned pure function with an options schema."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic

from pydantic import BaseModel
from typing_extensions import TypeVar

from verifiers.numbers import Options
from verifiers.score import Score


@dataclass(frozen=True)
class Unavailable:
    """Why a verifier or environment can serve nothing on this server, and what would fix it
    (the extra to install, the variable to set, the binary to put on PATH).

    A family's declaration lists what it defines but cannot serve here
    (``environments.family.Contents.unavailable``, keyed by typed ids); the server lists those
    under ``disabled`` in its catalogue and answers 503 with this reason and fix when they are
    asked for.
    """

    reason: str
    fix: str

    def __str__(self) -> str:
        return f"{self.reason}; to enable it: {self.fix}" if self.fix else self.reason


class NoOptions(Options):
    """Options schema of a check that takes none."""


OptionsT = TypeVar("OptionsT", bound=BaseModel, default=Any)
"""A verifier's options model; a bare ``Verifier`` is one whose options are any model."""


@dataclass(frozen=True)
class Verifier(Generic[OptionsT]):
    """A pure check ``(response, reference, options) -> Score``, generic over its options model
    (``Verifier[MathOptions]``), as ``TaskFamily`` is: the check receives the model it names.

    ``reference`` is whatever JSON value the family's references are (a LaTeX answer for math,
    hidden tests for code). ``options`` is validated against ``options_model`` before the call;
    it is a pydantic model because it arrives from the wire and its JSON Schema is published in
    the catalogue. ``timeout_s`` is the default hard limit per item; the server kills the worker
    when it is exceeded. ``example`` is a ``(response, reference)`` pair that scores 1: the
    contract tests check it, and workers run it once at start-up so the first real item is warm.
    ``components`` names every component (a part of the reward) and ``metrics`` every metric (a
    diagnostic beside it) an ``ok``/``invalid`` score of this check may carry, so a trainer that
    needs the same keys for every sample (verl) can fill the ones a score lacks.
    ``version`` names the verdicts: bump it whenever an answer would score differently
    (``tests/golden_verdicts.py`` holds the family to it).
    """

    name: str
    version: str
    description: str
    check: Callable[[str, Any, OptionsT], Score]
    options_model: type[OptionsT] = NoOptions  # type: ignore[assignment]  # the check takes none
    timeout_s: float = 10.0
    example: tuple[str, Any] | None = None
    components: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()

    def __call__(self, response: str, reference: Any, options: OptionsT | None = None) -> Score:
        """Score ``response`` against ``reference``; options default to the model's defaults."""
        return self.check(response, reference, options or self.options_model())
