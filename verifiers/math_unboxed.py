r"""An unboxed math answer: where math-verify found it, and the whole expression around it.

Outside math delimiters (no box, no ``$...$``), math-verify reads an answer from a regex match:
a plain number, a simple expression such as ``1/2``, or its bare-LaTeX fallback, the last
simple ``\frac{a}{b}``. Such a match can be a fragment of a larger expression: ``2^{\frac{1}{2}}``
is read as 1/2, ``\frac{1}{2} + \frac{1}{3}`` as 1/3, ``x^2 + 3`` as 3, ``2\sqrt{3}`` as 2. This
module finds which match math-verify used and where it sits in the response, and grows it to
the whole expression it is part of, so that the verifier can read that expression instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from math_verify.parser import ExtractionTarget, extract_match, get_extraction_regexes

Span = tuple[int, int]


@dataclass(frozen=True)
class Extraction:
    """The answer math-verify reads in a response, and where it read it."""

    value: Any  # the parsed answer (a sympy object)
    shown: str  # math-verify's text for it
    spans: tuple[Span, ...]  # where its parts are in the response
    kinds: frozenset[str]  # what it was read from: "latexBoxed", "latexFraction", "expr", ...

    @property
    def bare(self) -> bool:
        """Read from plain text (a number, "1/2", a bare \\frac), not from delimited math."""
        return bool(self.kinds & {"latexFraction", "expr"})


@dataclass(frozen=True)
class Refused:
    """The answer math-verify would read next is not read at all (``admit`` said why)."""

    reason: str


def extract(
    response: str,
    targets: tuple[ExtractionTarget, ...],
    admit: Callable[[str], str | None] | None = None,
    budget: int | None = None,
) -> Extraction | Refused | None:
    """math-verify's own choice of answer (``math_verify.parse`` with its defaults: the best
    priority with a match, rightmost match first, the first that parses), with where it is.
    ``parse`` gives the value only; the match is needed to see what surrounds it.

    ``admit`` sees each candidate's text before it is parsed and may refuse it (the answer is
    then that refusal: reading an earlier candidate instead would read a fragment of the
    response); ``budget`` bounds the characters parsed in all (a response of many unreadable
    candidates would otherwise be parsed one by one until the item's time ran out)."""
    patterns = [
        (pattern, target, priority)
        for target_patterns, target in get_extraction_regexes(targets)
        for pattern, priority in target_patterns
    ]
    patterns.sort(key=lambda entry: entry[2])
    for _, group in groupby(patterns, key=lambda entry: entry[2]):
        matches = [(m, target) for pattern, target, _ in group for m in pattern.finditer(response)]
        matches.sort(key=lambda entry: (entry[0].end(), -entry[0].start()), reverse=True)
        for match, target in matches:
            spans, kinds = _where(match)
            text = response[spans[0][0] : spans[-1][1]]
            if admit is not None and (reason := admit(text)) is not None:
                return Refused(reason)
            if budget is not None:
                budget -= len(text)
                if budget < 0:
                    return None
            value, shown = extract_match(match, target)
            if value is not None:
                return Extraction(value, shown, spans, kinds)
    return None


def _where(match: re.Match[str]) -> tuple[tuple[Span, ...], frozenset[str]]:
    groups = {name: match.span(name) for name, text in match.groupdict().items() if text}
    latex = {name: span for name, span in groups.items() if "_latex" in name}
    if latex:
        # One group per answer ("\\frac{1}{2} and \\frac{1}{3}" is two), named for what it
        # was read from: a box, $...$, or "latexFraction", a fraction outside delimiters.
        kinds = frozenset(name.split("_", 1)[1] for name in latex)
        return tuple(sorted(latex.values())), kinds
    # A plain number or expression: its parts (sign, digits, decimals, percent) in one span.
    starts, ends = zip(*groups.values(), strict=True)
    return ((min(starts), max(ends)),), frozenset({"expr"})


# What an expression is made of, outside braces: commands, escaped characters, numbers (also
# with thousands separators), operators and brackets, spaces, single letters (variables), and
# a word glued to a number ("4pi", "4km", "4oCL"), which is read as its box would read it (4km
# is 4 in kilometres; 4pi is 4·p·i, not 4π), never as the bare number before it. Any other word
# of two letters or more is prose, and ends the expression; so does any other character (a
# sentence's full stop or colon, a comma outside brackets, a dollar sign). A single letter
# followed by a word is prose too ("a day", "I got").
_TOKEN = re.compile(
    r"\\[A-Za-z]+|\\.|\d{1,3}(?:,\d{3})+(?![\d.])|\d+(?:\.\d+)?|\.\d+"
    r"|[-+*/^_=()\[\]|!<>'&%~\u00d7\u00f7\u00b7\u2212\u03c0\u221a\u221e]|[ \t]+"
    r"|(?<=\d)[A-Za-z]+|(?<![A-Za-z])[A-Za-z](?![A-Za-z])(?![ \t]+[A-Za-z]{2})"
)
_WORD = re.compile(r"[A-Za-z]+|.", re.DOTALL)
_OPEN, _CLOSE = "([", ")]"


def brace_end(line: str, start: int) -> int | None:
    """The index after the ``}`` that closes the ``{`` at ``start``; None when none does."""
    depth = 0
    index = start
    while index < len(line):
        char = line[index]
        if char == "\\":
            index += 2
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        index += 1
        if depth == 0:
            return index
    return None


def _expression_runs(line: str) -> list[Span]:
    """The spans of ``line`` that are math: runs of expression tokens, a brace group whole."""
    runs: list[Span] = []
    index = 0
    run_start: int | None = None
    while index < len(line):
        end: int | None = None
        if line[index] == "{":  # a group never closed runs to the end: it is not prose
            end = brace_end(line, index) or len(line)
        elif (token := _TOKEN.match(line, index)) is not None:
            end = token.end()
        if end is None:  # prose or punctuation: the run, if any, ends here
            if run_start is not None:
                runs.append((run_start, index))
                run_start = None
            word = _WORD.match(line, index)
            index = word.end() if word else index + 1
            continue
        if run_start is None:
            run_start = index
        index = end
    if run_start is not None:
        runs.append((run_start, len(line)))
    return runs


def _trim(text: str, start: int, end: int, keep: Span) -> Span:
    """``[start, end)`` without the spaces, relation signs and unmatched brackets at its ends
    ("4 (see above)" leaves "4 ("), never cutting into ``keep``."""
    while start < keep[0] and (text[start].isspace() or text[start] in "=" + _CLOSE):
        start += 1
    while end > keep[1] and (text[end - 1].isspace() or text[end - 1] in "=" + _OPEN):
        end -= 1
    return start, end


_BRACE = re.compile(r"\\.|[{}]", re.DOTALL)


def _open_group(response: str, position: int) -> Span | None:
    """The outermost brace group still open at ``position``, to its closing brace (or the end
    of the response, where it never closes); None when ``position`` is outside braces."""
    opened: list[int] = []
    outer: int | None = None
    for brace in _BRACE.finditer(response):
        char = brace.group(0)
        if brace.start() >= position:
            if outer is None:
                return None
            if char == "{":
                opened.append(brace.start())
            elif char == "}":
                opened.pop()
                if not opened:
                    return outer, brace.end()
            continue
        if char == "{":
            opened.append(brace.start())
        elif char == "}" and opened:
            opened.pop()
        outer = opened[0] if opened else None
    return None if outer is None else (outer, len(response))


def whole_expression(response: str, spans: tuple[Span, ...]) -> str | None:
    """The whole expression that the parts at ``spans`` belong to, when it is more than they
    are: ``2^{\\frac{1}{2}}`` around ``\\frac{1}{2}``, ``x^2 + 3`` around ``3``. None when each
    part is an expression on its own (``the answer is 4.``, ``x = 2`` is ``x = 2``)."""
    first, last = spans[0][0], spans[-1][1]
    # The line, or lines where a brace group around the parts spans several ("2^{" and then
    # "\\frac{1}{2}}" on the next line): a group is read whole.
    group = _open_group(response, first)
    if group is not None:
        first, last = min(first, group[0]), max(last, group[1])
    line_start = response.rfind("\n", 0, first) + 1
    line_end = response.find("\n", last)
    line = response[line_start : len(response) if line_end < 0 else line_end]
    runs = _expression_runs(line)
    grown = []
    for part_start, part_end in spans:
        start, end = part_start - line_start, part_end - line_start
        around = [run for run in runs if run[0] < end and run[1] > start]
        whole_start = min([start] + [run[0] for run in around])
        whole_end = max([end] + [run[1] for run in around])
        grown.append(_trim(line, whole_start, whole_end, (start, end)))
    if all(
        (g[0] + line_start, g[1] + line_start) == span for g, span in zip(grown, spans, strict=True)
    ):
        return None
    return line[grown[0][0] : grown[-1][1]]


# One answer-like item: delimited math, or a number as math-verify reads one (a thousands group
# such as "1 000" is one number).
_ITEM = re.compile(
    r"(?<!\\)\$\$(?P<display>.+?)(?<!\\)\$\$|(?<!\\)\$(?P<inline>[^$\n]+?)(?<!\\)\$"
    r"|\\\((?P<parenthesis>.+?)\\\)|\\\[(?P<bracket>.+?)\\\]"
    r"|(?<![\w.\\])(?P<number>-?(?:[1-9]\d{0,2}(?:[ ,]\d{3})+|\d+)(?:\.\d+)?)(?!\w|\.\d)",
    re.DOTALL,
)
_BETWEEN_ITEMS = re.compile(r"\s*")
_NEAR = 1_000  # characters each side of an answer where others in its row are looked for


def in_a_row(response: str, spans: tuple[Span, ...]) -> list[str]:
    """The answers written in a row with the one at ``spans`` (``$391$ $392$``, ``$3$ 4``: only
    spaces between them), in order, each once; empty when it stands alone. Answers in a row are
    several answers, as several boxes are; math-verify reads the last."""
    offset = max(0, spans[0][0] - _NEAR)
    near = response[offset : spans[-1][1] + _NEAR]
    start = spans[0][0] - offset
    run: list[re.Match[str]] = []
    for item in _ITEM.finditer(near):
        if run and not _BETWEEN_ITEMS.fullmatch(near, run[-1].end(), item.start()):
            if run[0].start() <= start < run[-1].end():
                break
            run = []
        run.append(item)
    if len(run) < 2 or not run[0].start() <= start < run[-1].end():
        return []
    answers = dict.fromkeys(next(text for text in item.groups() if text) for item in run)
    return list(answers) if len(answers) > 1 else []


_STATEMENT = re.compile(r"(?i)(?<![A-Za-z])answer(?![A-Za-z])(?:\*\*)?\s*(?:is(?![A-Za-z])|:|=)")
_SENTENCE_END = re.compile(r"\n|\.(?:\s|$)")
_STATEMENT_CHARS = 500  # a statement longer than this is cut there (no answer is that long)


_BOX_START = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")


def statements(response: str, most: int) -> list[str]:
    """The statements of the answer in ``response`` ("the answer is 4", "Final answer: 4"),
    each from its "answer" to the end of its sentence or line, or to the next statement, where
    something is stated; at most ``most`` + 1 of them (the caller refuses more than ``most``).
    A statement whose sentence holds a box states that box ("the answer is $3 \\times 4 =
    \\boxed{12}$"): it is left out, the box being an answer already."""
    found: list[str] = []
    anchors = list(_STATEMENT.finditer(response))
    for index, match in enumerate(anchors):
        limit = match.end() + _STATEMENT_CHARS
        if index + 1 < len(anchors):
            limit = min(limit, anchors[index + 1].start())
        end = _SENTENCE_END.search(response, match.end(), limit)
        stop = limit if end is None else end.start()
        said = response[match.end() : stop]
        if said.strip(" *$:\\([{") and not _BOX_START.search(said):
            found.append(response[match.start() : stop])
            if len(found) > most:
                break
    return found
