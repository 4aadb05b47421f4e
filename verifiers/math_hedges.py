r"""What a math answer offers besides one value: boxes, alternatives, hedges, approximations.

math-verify reads an answer generously, and some of that generosity pays a policy for hedging:
``3 \lor 4`` parses as 4, ``4 \text{ (or } 3)`` as 3, ``3 = 4`` as 4 and ``4 \text{(or 3)}`` as 4
(text is dropped as if it were a unit). This module finds those forms in the answer's own text,
before math-verify normalises them away, and in the parsed answer's shape. The verifier decides
what each finding costs, since some are legitimate for some references (``2 \text{ or } -3`` for
a set of roots, ``x \le 4`` for an inequality).
"""

from __future__ import annotations

import re
from typing import Any, Literal

import sympy
from sympy.matrices import MatrixBase

from verifiers.math_unboxed import brace_end

Marker = Literal["alternatives", "hedge", "approximation"]
r"""``alternatives``: lists, relations and signs (``or``, ``\cup``, ``\le``, ``\in``, ``\pm``),
which name one value only when the reference is not one (a set, a tuple, an inequality);
``hedge``: what math-verify drops or cuts (``\lor``, ``\mid``, ``maybe``, a number in ``\text{}``
beside another, a line break, a box in a box, a chain naming a variable twice), legitimate only
where the reference itself uses it;
``approximation``: ``\approx`` and its words."""


def _words(*words: str) -> str:
    # A word on its own, in \text{} or bare: not part of a longer word or a command name.
    return r"(?<![A-Za-z\\])(?:" + "|".join(words) + r")(?![A-Za-z])"


def _commands(*names: str) -> str:
    return r"\\(?:" + "|".join(names) + r")(?![A-Za-z])"


_ALTERNATIVES = (
    _words("or", "and", "either", "nor"),
    _commands("cup", "cap", "setminus", "pm", "mp"),
    _commands("neq?", "leq?", "geq?", "leqq", "geqq", "leqslant", "geqslant", "lt", "gt"),
    _commands("in", "notin", "ni", "subset", "subseteq", "supset", "supseteq", "not"),
    # less/greater (or equal), not equal, plus-minus, minus-plus, element of, union
    "[<>\u2264\u2265\u2260\u00b1\u2213\u2208\u222a]",
)
# Space between two answers: a blank, or LaTeX's spacing commands (\, \; \: \! "\ " \quad).
# The alternatives match no common text, so a run of spaces is read one way (no backtracking).
_LATEX_SPACE = r"\\[,;:! ]|\\q?quad(?![A-Za-z])"
_SPACE = r"(?:[ \t]|" + _LATEX_SPACE + ")"
_HEDGES = (
    _commands("lor", "vee", "land", "wedge", "lnot", "neg", "mid", "parallel"),
    "[\u2228\u2227\u00ac]",  # logical or, and, not
    _words("maybe", "perhaps", "possibly", "probably", "otherwise", "alternatively", "else"),
    _words("unless", "if", "except", "also", "not", "depending", "guess", "but", "vs", "versus"),
    # A subscript on a number: "3_{4}" is read as 3. (A match starts at a run's first digit
    # only, or a long run of digits would be re-scanned from each of them.)
    r"(?<![A-Za-z\\\d])\d+\s*_",
    r"\\\\",  # a line break: two lines are two answers (a matrix reference allows it)
    # Numbers in a row are several answers, as several boxes are: math-verify reads
    # "\frac{1}{2} \frac{1}{3}" as their product and "4 1" (and "4 \, 1") as their sum. Not a
    # mixed number ("3 \frac{1}{2}") or a thousands group ("1 000", "1\,000").
    r"\\[dt]?frac\s*(?:\{[^{}]*\}\s*\{[^{}]*\}|\d\s*\d)(?:\s|" + _LATEX_SPACE + r")*"
    r"(?=\.?\d|\\[dt]?frac(?![A-Za-z]))",
    r"(?<![\d.,])\d+(?:\.\d+)?" + _SPACE + r"+(?!\d{3}(?![\d.]))(?=\.?\d)",
    r"\\(?:boxed|fbox)(?![A-Za-z])",  # a box inside a box: math-verify reads the inner one
)
_APPROXIMATIONS = (
    _commands("approx", "thickapprox", "sim", "simeq", "thicksim", "doteq", "cong"),
    "\u2248",  # ≈; not "~", which is a space in LaTeX
    _words("approx", "approximately", "about", "around", "roughly", "nearly", "almost", "circa"),
)
_MARKERS: dict[Marker, re.Pattern[str]] = {
    "alternatives": re.compile("|".join(_ALTERNATIVES), re.IGNORECASE),
    "hedge": re.compile("|".join(_HEDGES), re.IGNORECASE),
    "approximation": re.compile("|".join(_APPROXIMATIONS), re.IGNORECASE),
}


_LIST_WORDS = re.compile(_words("or", "and"), re.IGNORECASE)
_EQUALS = re.compile(r"(?<![<>!\\])=")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_TEXT_COMMAND = re.compile(
    r"\\(?:text|mbox|textrm|textbf|textit|textsf|texttt|textnormal|mathrm|mathit|mathbf)\s*\{"
)
_CONSTANT = re.compile(r"\\\w+\s*\{\s*[ei]\s*\}")
_CONNECTIVE = re.compile(r"\\\w+\s*\{\s*,?\s*(?:and|or)\s*\}")  # a list's "or", read as a comma
_ENDS_IN_BRACE = re.compile(r"\}\s*(?:\^\s*\d|\{\s*\^\s*\d\s*\})?\s*$")
# What may follow a unit: spaces, a power of it, and more text.
_AFTER_UNIT = re.compile(r"\s+|\\[,;:! ]|\^\s*(?:\d|\{\s*\d\s*\})|\{\s*\^\s*\d\s*\}")


def _text_groups(text: str) -> list[tuple[int, int]]:
    """Where each ``\\text{...}`` (and its kin) is, braces inside it included
    (``\\text{(or \\{-1, 2\\})}``); one never closed runs to the end."""
    groups = []
    position = 0
    while (match := _TEXT_COMMAND.search(text, position)) is not None:
        end = brace_end(text, match.end() - 1) or len(text)
        groups.append((match.start(), end))
        position = end
    return groups


def markers(text: str) -> dict[Marker, str]:
    """Each kind of marker found in ``text``, with the first piece of text that shows it."""
    found: dict[Marker, str] = {}
    for kind, pattern in _MARKERS.items():
        match = pattern.search(text)
        if match is not None:
            found[kind] = match.group(0)
    # An equation chain that names a variable again ("x = 3 \; x = 4"): math-verify keeps only
    # the part after the last "=". Working such as "x = 2 + 2 = 4" names none in between.
    # Like math-verify, a list ("x = 2, y = 5", "x = 2 or x = -3") is not a chain.
    parts = _EQUALS.split(_COMMAND.sub(" ", text))
    listed = re.search(r"(?<!\\)[,;]", text) or _LIST_WORDS.search(text)  # "\;" is a space
    chained = any(re.search(r"[A-Za-z]", part) for part in parts[1:-1])
    if "hedge" not in found and chained and not listed:
        found["hedge"] = "="
    # A number in text beside a number outside it ("4 \text{(or 3)}"): math-verify drops text
    # like a unit, so the second number would vanish. A number that is all text ("\text{4}")
    # is the answer itself.
    groups = _text_groups(text) if "hedge" not in found else []
    outside = text
    for start, end in reversed(groups):
        outside = outside[:start] + " " + outside[end:]
    if groups and re.search(r"\d", outside):
        numbered = next((text[a:b] for a, b in groups if re.search(r"\d", text[a:b])), None)
        if numbered is not None:
            found["hedge"] = numbered
    # math-verify cuts a unit off the end with everything after it: from the first text group
    # to a closing brace at the end ("4\text{ cm} + 1\text{ cm}" is read as 4, and
    # "3\mathrm{e}^{2}" as 3). Only spaces, a power and more text may follow a unit.
    # A constant in upright type is dropped like a unit too ("3\mathrm{e}^{2}" is read as 3).
    units = [g for g in groups if not _CONNECTIVE.fullmatch(text[g[0] : g[1]])]
    if "hedge" not in found and units:
        after = outside[units[0][0] + 1 :]
        cut = _ENDS_IN_BRACE.search(text) is not None and _AFTER_UNIT.sub("", after)
        constant = next((g for g in units if _CONSTANT.fullmatch(text[g[0] : g[1]])), None)
        if cut or constant is not None:
            shown = units[0] if constant is None else constant
            found["hedge"] = text[shown[0] : shown[1]]
    return found


def approximated_value(text: str) -> str:
    """What an answer marked as an approximation gives as its value: the text after its last
    approximation sign or word (``x \\approx 4``, ``\\text{about } 4``: ``4``); ``text`` itself
    when it holds none."""
    last = None
    for last in _MARKERS["approximation"].finditer(text):  # noqa: B007 - the last one is wanted
        pass
    if last is None:
        return text
    rest = text[last.end() :]
    # A word inside \text{...}: the value starts after that group closes.
    opened = text.rfind("{", 0, last.start())
    if opened >= 0 and "}" not in text[opened : last.start()] and "}" in rest:
        rest = rest[rest.index("}") + 1 :]
    return rest


# A box takes a brace group, or, as in LaTeX, the one token after it (``\boxed 3``, ``\boxed\pi``):
# a digit, a command, or a letter that does not start a word (``\boxed answer`` is prose).
_BOX = re.compile(
    r"\\(?:boxed|fbox)(?![A-Za-z])\s*(?:(?P<brace>\{)|(?P<token>\d|\\[A-Za-z]+|[A-Za-z](?![A-Za-z])))"
)


def boxed_answers(text: str) -> list[str]:
    r"""The contents of every ``\boxed{...}`` (or ``\fbox{...}``) in ``text`` with balanced
    braces, in order, skipping empty ones (an echo of "put your answer within \boxed{}"), and of
    every box without braces (``\boxed 3``, which math-verify does not read: a box before the
    last would go unread). A box inside another is part of the outer one's content."""
    answers: list[str] = []
    position = 0
    while (match := _BOX.search(text, position)) is not None:
        if match.group("token") is not None:
            answers.append(match.group("token"))
            position = match.end()
            continue
        depth = 1
        index = match.end()
        while index < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            index += 1
        if depth:  # never closed: no answer, and no later box can close either
            break
        content = text[match.end() : index - 1]
        if content.strip():
            answers.append(content)
        position = index
    return answers


_CLAUSE_START = re.compile(r"[\n,;:]|\.\s")
_CLAUSE_LOOKBACK = 40  # characters: "the answer is approximately " fits, a whole paragraph not


def answer_sentence(response: str, extracted: str) -> str | None:
    """The clause that holds an unboxed answer: from the start of its clause (a sentence, or
    after a comma or colon, at most 40 characters back) to the end of its sentence or line,
    around where math-verify's extracted text last appears in ``response``. None when the
    extracted text, normalised by math-verify, does not appear as it is."""
    start = response.rfind(extracted) if extracted else -1
    if start < 0:
        return None
    before = response[max(0, start - _CLAUSE_LOOKBACK) : start]
    clause = _CLAUSE_START.split(before)[-1]
    after = response[start + len(extracted) :]
    end = re.search(r"\n|\.(?:\s|$)", after)
    return clause + extracted + (after if end is None else after[: end.start()])


def is_single_value(answer: Any) -> bool:
    """Whether a parsed answer names one value: an expression, ``x = value`` or a set of one
    value, or a chain of one value (``x = 8/2 = 4``); not a set of several, an interval, a tuple,
    an inequality, ``3 = 4`` or ``x = 3 = 4``."""
    if isinstance(answer, sympy.FiniteSet):
        return len(answer) == 1 and is_single_value(next(iter(answer)))
    if isinstance(answer, sympy.Eq):
        # "x = 4" names 4; "3 = 4" names two numbers, and math-verify would read it as 4.
        return not answer.lhs.is_number and is_single_value(answer.rhs)
    if isinstance(answer, sympy.And) and all(isinstance(a, sympy.Eq) for a in answer.args):
        # A chain "x = 8/2 = 4" names one value when all its numbers are that value.
        numbers = {side for a in answer.args for side in a.args if side.is_number}
        return len(numbers) == 1
    return isinstance(answer, sympy.Expr) and not isinstance(answer, MatrixBase)


_DECIMAL = re.compile(r"\d?\.\d")


def written_as_decimal(reference: Any) -> bool:
    """Whether a reference is a decimal (``0.5``, ``3.14``): one that already stands for a
    rounded value, so an answer may round it too."""
    return isinstance(reference, float) or bool(_DECIMAL.search(str(reference)))


def exact_decimals(answer: Any) -> Any:
    """``answer`` with each float read as the exact decimal it was written as (0.142857 as
    142857/1000000), or None when it holds no float."""
    if not isinstance(answer, sympy.Basic):
        return None
    floats = answer.atoms(sympy.Float)
    if not floats:
        return None
    return answer.xreplace({f: sympy.Rational(str(f)) for f in floats})
