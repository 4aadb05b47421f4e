"""Finding the program in a model's response."""

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


def extract_code(response: str, language: str) -> str:
    """The last fenced block tagged as ``language``; else the last untagged block; else the
    whole response (a bare completion). Models often show examples before the final answer,
    so the last block wins."""
    blocks: list[tuple[str, str]] = [
        (str(tag).lower(), str(body)) for tag, body in _FENCE.findall(response)
    ]
    if not blocks:
        return response.strip("\n")
    wanted = _TAGS.get(language, (language,))
    for tags in (wanted, ("",)):
        chosen = [body for tag, body in blocks if tag in tags]
        if chosen:
            return chosen[-1].strip("\n")
    return blocks[-1][1].strip("\n")
