r"""Reading the final answer: lenient about decoration around it, exact about the value.

Only the text after the last ``Answer:`` counts (the original's convention). Around the value,
and only around it, decoration is peeled from the outside in, at most ``MAX_WRAPPERS`` layers:
the emphasis that closes a bold ``**Answer:**`` right after the colon, surrounding white space,
one trailing full stop per layer, and a pair of ``**``, ``*``, backticks or ``$`` (or a LaTeX
``\boxed{...}``/``\text{...}``) that encloses the whole rest. Nothing is removed inside: what is
left must be exactly one value of the answer grammar, with nothing before or after it:

    value   := integer | "[" items "]" | "(" items ")"
    items   := empty | value ("," value)* [","]
    integer := "0" | [1-9][0-9]*        (no sign, no digit separators, at most 18 digits)

White space may surround any token. ``[...]`` reads as a list and ``(...)`` as a tuple. A flat
list of integers may also be written without brackets (``0, 1``) or as a path ``0 -> 1 -> 2``
(optionally inside one pair of brackets); the schedule and bisection tasks accept their tuples or
lists without the outer brackets. Anything else (``1_2``, ``-0``, ``[0]*50``, ``<[0, 1]>``,
``[1*2]``, ``[1$2]``, ``[1, \text{2}]``, prose around the value) is ``invalid``: an earlier
reader deleted every ``*``, backtick and ``$`` first, and so read ``[1*2]`` as ``[12]``.

One answer per response: an earlier ``Answer:`` offers an answer when the first non-empty line
after it (decoration peeled as above) is a value in any of these spellings or ``Impossible``,
or begins with a bracketed value (``[0, 0], or rather``); unless it is the final answer (white
space aside), the response offers several answers and is ``invalid``. Reading only the last one paid
``Answer: [0, 0] ... Answer: [1, 3]`` for the last of two answers (issue 38's searching
adversary). Prose after an earlier ``Answer:`` (``the answer: we sort by ratio``, a numbered
list) offers none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from verifiers.opt.base import Infeasible, InvalidAnswer

MAX_ANSWER_CHARS = 20_000
MAX_DIGITS = 18  # larger than any id, colour, time or size; int() of huge text is slow
MAX_DEPTH = 3  # the deepest answer, a schedule, is a list of tuples
MAX_WRAPPERS = 8  # "$\boxed{**[0]**}$" is four; a deeper onion is not decoration
_ANSWER = re.compile(r"answer\s*:", re.IGNORECASE)
_EMPHASIS_CLOSER = re.compile(r"\A[*_]+")  # "**Answer:** [0]": the bold closes after the colon
_PAIRS = ("**", "*", "`", "$")  # enclosing markdown and LaTeX maths, as (opener, closer)
_WRAPPERS = ("\\boxed{", "\\text{")
_CLOSERS = {"[": "]", "(": ")"}
_DIGITS = frozenset("0123456789")
_SPACE = frozenset(" \t\r\n")
_INTEGER = re.compile(r"0|[1-9][0-9]*")
IMPOSSIBLE = re.compile(r"[\[({\"']*\s*impossible\s*[\])}\"']*", re.IGNORECASE)
"""The one word the grammar reads: set cover's claim that no cover exists (quoted, bracketed or
left in a ``\\boxed{...}``), so that it can be refuted rather than rejected as unreadable."""


def final_answer(response: str) -> str:
    """The text after the last ``Answer:`` with its surrounding decoration peeled (see the
    module docstring); raises ``InvalidAnswer`` when there is none or it is empty or too
    long."""
    matches = list(_ANSWER.finditer(response))
    if not matches:
        raise InvalidAnswer("no 'Answer:' in the response")
    text = response[matches[-1].end() :]
    if len(text) > MAX_ANSWER_CHARS:
        raise InvalidAnswer(f"the answer is longer than {MAX_ANSWER_CHARS} characters")
    text = _undecorated(_EMPHASIS_CLOSER.sub("", text))
    if not text:
        raise InvalidAnswer("the answer after 'Answer:' is empty")
    for earlier, later in pairwise(matches):
        offered = _offered(response[earlier.end() : later.start()])
        if offered is not None and _squashed(offered) != _squashed(text):
            raise InvalidAnswer(
                f"several answers: an earlier 'Answer:' offers {offered[:40]!r} and the last "
                f"{text[:40]!r}; end with one answer"
            )
    return text


def _undecorated(text: str) -> str:
    """``text`` with the decoration around it peeled, from the outside in."""
    for _ in range(MAX_WRAPPERS):
        text = text.strip().removesuffix(".").strip()
        peeled = _peel(text)
        if peeled is None:
            break
        text = peeled
    return text


def _offered(segment: str) -> str | None:
    """The answer that the text after an earlier ``Answer:`` offers (see the module
    docstring), or None when it is prose."""
    line = _undecorated(_EMPHASIS_CLOSER.sub("", segment).lstrip().split("\n", 1)[0])
    if line and (IMPOSSIBLE.fullmatch(line) or _reads(line)):
        return line
    if line[:1] not in _CLOSERS:
        return None
    reader = _Reader(line)
    try:
        reader.value(0)
    except InvalidAnswer:
        return None
    return line[: reader.pos]


def _reads(text: str) -> bool:
    """Whether ``text`` is one value in some spelling: bracketed, bare, a path."""
    for read in (literal, lambda bare: literal(f"[{bare}]"), int_list):
        try:
            read(text)
            return True
        except InvalidAnswer:
            pass
    return False


def _squashed(text: str) -> str:
    return re.sub(r"\s", "", text)


def _peel(text: str) -> str | None:
    """``text`` without the one pair of markers that encloses all of it; None when none does."""
    for marker in _PAIRS:
        if len(text) > 2 * len(marker) and text.startswith(marker) and text.endswith(marker):
            return text[len(marker) : -len(marker)]
    for wrapper in _WRAPPERS:
        if text.startswith(wrapper) and text.endswith("}"):
            return text[len(wrapper) : -1]
    return None


def integer(text: str) -> int:
    """One integer of the grammar (white space around it allowed); ``InvalidAnswer`` else."""
    token = text.strip(" \t\r\n")
    if not _INTEGER.fullmatch(token) or len(token) > MAX_DIGITS:
        raise InvalidAnswer(f"cannot read {token[:30]!r} as a non-negative integer in digits")
    return int(token)


class _Reader:
    """A recursive-descent reader of one value of the grammar (see the module docstring)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> InvalidAnswer:
        near = self.text[self.pos : self.pos + 20]
        return InvalidAnswer(f"cannot read the answer: {what} at {near!r}" if near else what)

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _SPACE:
            self.pos += 1

    def value(self, depth: int) -> Any:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("the answer ends where a value was expected")
        char = self.text[self.pos]
        if char in _DIGITS:
            start = self.pos
            while self.pos < len(self.text) and self.text[self.pos] in _DIGITS:
                self.pos += 1
            return integer(self.text[start : self.pos])
        if char not in _CLOSERS:
            raise self.fail("expected a non-negative integer, '[' or '('")
        if depth >= MAX_DEPTH:
            raise self.fail(f"brackets nested deeper than {MAX_DEPTH}")
        closer = _CLOSERS[char]
        self.pos += 1
        items: list[Any] = []
        while True:
            self.skip()
            if self.text[self.pos : self.pos + 1] == closer:
                self.pos += 1
                return items if closer == "]" else tuple(items)
            items.append(self.value(depth + 1))
            self.skip()
            if self.text[self.pos : self.pos + 1] == ",":
                self.pos += 1
            elif self.text[self.pos : self.pos + 1] != closer:
                raise self.fail(f"expected ',' or {closer!r}")


def literal(text: str) -> Any:
    """The one value of the answer grammar that is the whole of ``text``: an integer, a list
    (``[...]``) or a tuple (``(...)``); ``InvalidAnswer`` for anything else, text before or
    after the value included."""
    reader = _Reader(text)
    value = reader.value(0)
    reader.skip()
    if reader.pos != len(text):
        raise reader.fail("unexpected text after the answer")
    return value


def _integer(value: Any) -> int:
    if not isinstance(value, int):
        raise InvalidAnswer(f"{str(value)[:60]} is not an integer")
    return value


def int_list(text: str) -> list[int]:
    """A flat list of integers: ``[0, 2, 3]``, ``(0, 2, 3)``, ``0, 2, 3`` or ``0 -> 2 -> 3``
    (also ``[0 -> 2 -> 3]``)."""
    if "->" in text:
        body = text.strip()
        if body[:1] in _CLOSERS and body[-1:] == _CLOSERS[body[0]]:
            body = body[1:-1]
        return [integer(part) for part in body.split("->")]
    value = literal(text if text.lstrip()[:1] in _CLOSERS else f"[{text}]")
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
