"""Reading the final answer: lenient about formatting, never about meaning.

Only the text after the last ``Answer:`` counts (the original's convention). Markdown emphasis,
code ticks, LaTeX dollars and a trailing full stop are ignored; lists may be written ``[0, 1]``,
``(0, 1)``, ``0, 1`` or ``0 -> 1``. Values are read with ``ast.literal_eval`` on a bounded text,
never ``eval``.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Sequence
from typing import Any

from verifiers.opt.base import Infeasible, InvalidAnswer

MAX_ANSWER_CHARS = 20_000
_ANSWER = re.compile(r"answer\s*:", re.IGNORECASE)
_DECORATION = re.compile(r"[*`$]")
_WRAPPER = re.compile(r"\\(?:boxed|text)\{")
_OPENERS = {"[": "]", "(": ")", "{": "}"}


def final_answer(response: str) -> str:
    """The cleaned text after the last ``Answer:``; raises ``InvalidAnswer`` when there is none
    or it is empty or too long."""
    matches = list(_ANSWER.finditer(response))
    if not matches:
        raise InvalidAnswer("no 'Answer:' in the response")
    text = response[matches[-1].end() :].strip()
    if len(text) > MAX_ANSWER_CHARS:
        raise InvalidAnswer(f"the answer is longer than {MAX_ANSWER_CHARS} characters")
    text = _unwrap(_DECORATION.sub("", text)).strip().rstrip(".").strip()
    if not text:
        raise InvalidAnswer("the answer after 'Answer:' is empty")
    return text


def _unwrap(text: str) -> str:
    # "\boxed{[0, 1]}" -> "[0, 1]": drop each LaTeX wrapper with its own closing brace.
    while (match := _WRAPPER.search(text)) is not None:
        depth, end = 1, match.end()
        while end < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        closing = end - 1 if depth == 0 else len(text)
        text = text[: match.start()] + text[match.end() : closing] + text[closing + 1 :]
    return text


def first_group(text: str) -> str | None:
    """The first balanced ``[...]``, ``(...)`` or ``{...}`` group in ``text``, or None."""
    start = next((i for i, char in enumerate(text) if char in _OPENERS), None)
    if start is None:
        return None
    stack: list[str] = []
    for index in range(start, len(text)):
        char = text[index]
        if char in _OPENERS:
            stack.append(_OPENERS[char])
        elif char in ")]}":
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return text[start : index + 1]
    return None


def literal(text: str) -> Any:
    """The Python literal in the first bracketed group (or the whole text); ``InvalidAnswer``
    when it is not one."""
    group = first_group(text) or text
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)  # junk like "1a" would log a warning
            return ast.literal_eval(group)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise InvalidAnswer(f"cannot read {group[:60]!r} as a list") from None


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidAnswer(f"{value!r} is not an integer")
    return value


def int_list(text: str) -> list[int]:
    """A flat list of integers: ``[0, 2, 3]``, ``(0, 2, 3)``, ``0, 2, 3`` or ``0 -> 2 -> 3``."""
    if "->" in text:
        parts = [part.strip().strip("[]() ") for part in text.split("->")]
        if not all(re.fullmatch(r"-?\d+", part) for part in parts):
            raise InvalidAnswer("a path written with '->' must list integers only")
        return [int(part) for part in parts]
    value = literal(text if first_group(text) else f"[{text}]")
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise InvalidAnswer("expected a list of integers")
    return [_integer(item) for item in value]


def check_ids(ids: Sequence[int], count: int, what: str) -> None:
    """Every id names one of ``count`` things; ``InvalidAnswer`` otherwise."""
    for item in ids:
        if not 0 <= item < count:
            raise InvalidAnswer(f"{what} {item} does not exist (valid: 0..{count - 1})")


def check_distinct(ids: Sequence[Any], what: str) -> None:
    """No id appears twice; ``Infeasible`` otherwise (the original accepted repeats)."""
    seen: set[Any] = set()
    for item in ids:
        if item in seen:
            raise Infeasible(f"{what} {item} appears more than once")
        seen.add(item)
