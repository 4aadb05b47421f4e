"""Finding the program in a model's response: one program, in a fenced block or bare."""

from __future__ import annotations

import re

# ```lang\n...``` with an optional language tag; the closing fence may be missing at the end of
# a truncated completion.
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_TAGS = {
    "python": ("python", "python3", "py"),
    "cpp": ("cpp", "c++", "cc", "cxx"),
    "c": ("c",),
    "bash": ("bash", "sh", "shell"),
}


class SeveralPrograms(ValueError):
    """The response holds two different programs where it must give one."""


def extract_code(response: str, language: str) -> str:
    """The program: the fenced block tagged as ``language``, else the untagged block, else the
    block in another tag; without a fence, the whole response (a bare completion).

    Several different blocks of the chosen kind are several programs (``SeveralPrograms``):
    running only the last one paid a response that offered a wrong program and then a right one
    (issue 38's searching adversary). The same block repeated is one program, and blocks of
    another kind beside the chosen one (an example input in an untagged block, a shell command
    in a ``bash`` block beside the ``python`` one) are not programs of this response."""
    blocks: list[tuple[str, str]] = [
        (str(tag).lower(), str(body).strip("\n")) for tag, body in _FENCE.findall(response)
    ]
    if not blocks:
        return response.strip("\n")
    wanted = _TAGS.get(language, (language,))
    chosen = [body for tag, body in blocks if tag in wanted]
    chosen = chosen or [body for tag, body in blocks if not tag] or [body for _, body in blocks]
    if len(set(chosen)) > 1:
        raise SeveralPrograms(
            f"the response holds {len(set(chosen))} different programs in fenced blocks; give one"
        )
    return chosen[-1]
