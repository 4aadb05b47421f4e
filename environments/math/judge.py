r"""An independent judge of math answers, for the searching adversary (``search.py``).

What a math answer deserves is decided here without the verifier under test (``verifiers/math``,
math-verify, latex2sympy): a small reader of its own for the answer shapes the search makes
(numbers, fractions, decimals, roots, powers, sums and products, single-letter symbols, ``\pi``,
sets, tuples, ``x = ...``), exact values with sympy, and the answer-class rule read from the
README, not from the verifier's code:

- the answer must equal the reference exactly (a set: the same elements; a tuple: in order);
- it may hold no symbol the reference's value lacks, no constant and no root the reference
  lacks, and no arithmetic left on plain numbers (a sum, product, quotient or power of numbers
  that is a rational number, other than a fraction or a sign);
- it must be one answer: one box (or several of the same value).

Anything else it cannot read (a function, text with a number in it, an unboxed answer) it does
not judge: None.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeAlias

import sympy

from verifiers.math_bounds import nesting  # counting brackets decides no verdict

_TOKEN = re.compile(
    r"\s+|\\[A-Za-z]+|\\[,;:! {}]|\d+\.\d+|\d+|\.\d+|[A-Za-z]|[-+*/^_=()\[\]{},.]|\S"
)
_SPACING = {r"\,", r"\;", r"\:", r"\!", "\\ ", r"\quad", r"\qquad", r"\displaystyle"}
_FRACTIONS = {r"\frac", r"\dfrac", r"\tfrac"}
_TIMES = {r"\cdot", r"\times", "*"}
_OPENING = {"(": ")", "[": "]", r"\{": r"\}", "{": "}"}
_MAX_EXPONENT = 64  # no answer the search makes needs more; more is a slow answer, not judged
_MAX_NESTING = 50  # brackets deep; the reader recurses per level (a search nested 400 deep)


class Unreadable(Exception):
    """The answer is outside what this reader reads: the judge cannot tell."""


@dataclass
class Reading:
    """An answer read: its exact value, and what it is written with."""

    value: sympy.Basic | tuple[sympy.Basic, ...]  # a tuple: a list written without brackets
    symbols: set[str] = field(default_factory=set)
    constants: set[str] = field(default_factory=set)
    roots: bool = False
    arithmetic: str | None = None  # arithmetic on plain numbers left in it, if any


@dataclass
class _Node:
    value: sympy.Basic
    plain: bool  # only numbers below it (no symbol, constant or root)
    form: str = "other"  # how a number is written: "number" (4, 0.5, -4), "inverse" (4^{-1}),
    # "fraction" (\frac{1}{2}, 1/2, 1 \cdot 2^{-1}, -\frac{1}{2}), or "other"
    numbers: int = 0  # the numbers multiplied in it, brackets aside (1 \cdot (2\sqrt{3}): 2)
    summands: int = 0  # the numbers added in it, brackets aside (1 + (2 + \sqrt{2}): 2)

    @property
    def literal(self) -> bool:
        return self.form != "other"

    @property
    def factors(self) -> int:
        """The numbers this node brings to a product it is a factor of."""
        return 1 if self.form in ("number", "fraction") else self.numbers


class _Reader:
    def __init__(self, text: str) -> None:
        self.tokens = [
            t for t in _TOKEN.findall(text) if not t.isspace() and t not in _SPACING | {"~"}
        ]
        self.tokens = [t for t in self.tokens if t not in (r"\left", r"\right")]
        self.at = 0
        self.reading = Reading(sympy.Integer(0))

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise Unreadable(f"expected {expected!r}, found {token!r}")
        self.at += 1
        return token

    def done(self) -> None:
        if self.peek() is not None:
            raise Unreadable(f"unread {self.peek()!r}")

    def arithmetic(self, node: _Node, written: str) -> _Node:
        # An operation on plain numbers that gives a rational number is arithmetic left undone.
        if node.plain and node.value.is_Rational and not node.literal:
            self.reading.arithmetic = self.reading.arithmetic or written
        return node

    def answer(self) -> sympy.Basic | tuple[sympy.Basic, ...]:
        # One value, or a list ("2, -3", "x = 2, y = 5"), each optionally named ("x = ").
        items = [self.named()]
        while self.peek() == ",":
            self.take(",")
            items.append(self.named())
        return items[0] if len(items) == 1 else tuple(items)

    def named(self) -> sympy.Basic:
        # A name before the value ("x =", "x_1 =") is set aside.
        ahead = self.tokens[self.at : self.at + 4]
        for size in (2, 4):
            name = "".join(ahead[:size])
            if len(ahead) >= size and re.fullmatch(r"[A-Za-z](?:_\d)?=", name):
                self.at += size
                break
        return self.expression().value

    def expression(self) -> _Node:
        node = self.term()
        while self.peek() in ("+", "-"):
            sign = self.take()
            right = self.term()
            value = node.value + right.value if sign == "+" else node.value - right.value
            # Two numbers added, whatever else is beside them (3 + 4 + \sqrt{2}): arithmetic.
            summands = sum(1 if n.literal else n.summands for n in (node, right))
            if summands > 1:
                self.reading.arithmetic = self.reading.arithmetic or sign
            node = self.arithmetic(
                _Node(value, node.plain and right.plain, summands=summands), sign
            )
        return node

    def term(self) -> _Node:
        node = self.unary()
        while True:
            piece = self.peek()
            if piece in _TIMES or piece == "/":
                self.take()
                right = self.unary()
                if piece == "/":
                    if right.value == 0:
                        raise Unreadable("division by zero")
                    value = node.value / right.value
                    form = "fraction" if node.form == right.form == "number" else "other"
                    node = self.arithmetic(_Node(value, node.plain and right.plain, form), piece)
                else:
                    node = self.product(node, right, piece)
            elif piece is not None and self.starts_atom(piece):
                if node.literal and piece in _FRACTIONS:
                    raise Unreadable("a mixed number")  # 3\frac{1}{2} is 7/2, not 3/2
                node = self.product(node, self.unary(), "product")  # 2\sqrt{3}, 2x, 3(4)
            else:
                return node

    def product(self, left: _Node, right: _Node, written: str) -> _Node:
        # Two numbers multiplied, whatever else is beside them (1 \cdot 2\sqrt{3}), are arithmetic
        # left undone; a number times an inverse (1 \cdot 2^{-1}) is how a fraction is written.
        form = "fraction" if (left.form, right.form) == ("number", "inverse") else "other"
        numbers = left.factors + right.factors
        node = _Node(left.value * right.value, left.plain and right.plain, form, numbers)
        if form == "other" and numbers > 1:
            self.reading.arithmetic = self.reading.arithmetic or written
        return self.arithmetic(node, written)

    def starts_atom(self, token: str) -> bool:
        return bool(
            token[0].isdigit()
            or token[0] == "."
            or re.fullmatch("[A-Za-z]", token)
            or token in ("(", "{", r"\pi", r"\sqrt")
            or token in _FRACTIONS
        )

    def unary(self) -> _Node:
        # Signs in a loop, not by recursion: a search wrote a thousand of them in a row.
        negative = False
        while self.peek() in ("-", "+"):
            negative ^= self.take() == "-"
        node = self.power()
        return _Node(-node.value, node.plain, node.form) if negative else node

    def power(self) -> _Node:
        node = self.atom()
        if self.peek() == "^":
            self.take("^")
            exponent = self.group_or_atom()
            if not exponent.value.is_Rational or abs(exponent.value) > _MAX_EXPONENT:
                raise Unreadable("an exponent outside what the judge evaluates")
            if not exponent.value.is_Integer:
                self.reading.roots = True
            plain = node.plain and exponent.plain and exponent.value.is_Integer
            inverse = node.form == "number" and exponent.value == -1  # 4^{-1} is how 1/4 is written
            value = node.value**exponent.value
            node = self.arithmetic(_Node(value, plain, "inverse" if inverse else "other"), "power")
        return node

    def group_or_atom(self) -> _Node:
        if self.peek() == "{":
            self.take("{")
            node = self.expression()
            self.take("}")
            return node
        piece = self.take()
        if piece.isdigit():
            if len(piece) > 1:  # "^23" is 2 to the power, then 3; "\frac12" is 1 over 2
                self.at -= 1
                self.tokens[self.at] = piece[1:]
            return _Node(sympy.Integer(piece[0]), True, "number")
        if re.fullmatch("[A-Za-z]", piece):
            self.reading.symbols.add(piece)
            return _Node(sympy.Symbol(piece), False)
        raise Unreadable(f"unexpected {piece!r}")

    def atom(self) -> _Node:
        piece = self.take()
        if re.fullmatch(r"\d+|\d+\.\d+|\.\d+", piece):
            return _Node(sympy.Rational(piece), True, "number")
        if re.fullmatch("[A-Za-z]", piece):
            self.reading.symbols.add(piece)
            return _Node(sympy.Symbol(piece), False)
        if piece == r"\pi":
            self.reading.constants.add("pi")
            return _Node(sympy.pi, False)
        readers = {
            **dict.fromkeys(_FRACTIONS, self.fraction),
            r"\sqrt": self.root,
            "(": self.bracket,
            "{": self.bracket,
            r"\{": self.set,
            **dict.fromkeys((r"\text", r"\mathrm", r"\textbf"), self.text),
        }
        if piece not in readers:
            raise Unreadable(f"unexpected {piece!r}")
        return readers[piece](piece)

    def fraction(self, _: str) -> _Node:
        top, bottom = self.group_or_atom(), self.group_or_atom()
        if bottom.value == 0:
            raise Unreadable("division by zero")
        form = "fraction" if top.form == bottom.form == "number" else "other"
        node = _Node(top.value / bottom.value, top.plain and bottom.plain, form)
        return self.arithmetic(node, "fraction")

    def root(self, _: str) -> _Node:
        degree = sympy.Integer(2)
        if self.peek() == "[":
            self.take("[")
            degree = self.expression().value
            self.take("]")
            if not degree.is_Integer or not 2 <= degree <= _MAX_EXPONENT:
                raise Unreadable("a root degree outside what the judge evaluates")
        radicand = self.group_or_atom()
        self.reading.roots = True
        return self.arithmetic(_Node(sympy.root(radicand.value, degree), radicand.plain), "root")

    def bracket(self, opening: str) -> _Node:
        node = self.expression()
        if opening == "(" and self.peek() == ",":  # a tuple
            items = [node.value]
            while self.peek() == ",":
                self.take(",")
                items.append(self.expression().value)
            self.take(")")
            return _Node(sympy.Tuple(*items), False)
        self.take(_OPENING[opening])
        return node

    def set(self, _: str) -> _Node:
        items = [self.named()]
        while self.peek() == ",":
            self.take(",")
            items.append(self.named())
        self.take(r"\}")
        return _Node(sympy.FiniteSet(*items), False)

    def text(self, _: str) -> _Node:
        self.take("{")
        content = self.take()
        self.take("}")
        if not re.fullmatch(r"\d+", content):
            raise Unreadable("text in the answer")
        return _Node(sympy.Integer(content), True, "number")


def read(text: str) -> Reading:
    """Read one answer's LaTeX (a box's content); ``Unreadable`` where it cannot."""
    if nesting(text) > _MAX_NESTING:
        raise Unreadable(f"brackets nested more than {_MAX_NESTING} deep")
    reader = _Reader(text)
    value = reader.answer()
    reader.done()
    reader.reading.value = value
    return reader.reading


@lru_cache(maxsize=4096)
def reading(text: str) -> Reading | None:
    """``read``, cached; None where the answer cannot be read."""
    # sympy refuses an operation it has no meaning for (the root of a set) with any of these:
    # such an answer is outside what the judge reads.
    try:
        return read(text)
    except (Unreadable, ValueError, TypeError, AttributeError, ZeroDivisionError, ArithmeticError):
        return None


_BOX = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])\s*(\{)?")


def boxes(response: str) -> Iterator[str]:
    """The contents of the response's boxes (braced, or the one token after ``\\boxed``)."""
    position = 0
    while (match := _BOX.search(response, position)) is not None:
        if match.group(1) is None:
            token = re.match(r"\d|\\[A-Za-z]+|[A-Za-z](?![A-Za-z])", response[match.end() :])
            if token is not None:
                yield token.group(0)
            position = match.end()
            continue
        depth, index = 1, match.end()
        while index < len(response) and depth:
            depth += {"{": 1, "}": -1}.get(response[index], 0)
            index += 1
        if depth:
            return
        if response[match.end() : index - 1].strip():
            yield response[match.end() : index - 1]
        position = index


Value: TypeAlias = "sympy.Basic | tuple[sympy.Basic, ...]"


def equal(answer: Value, reference: Value) -> bool:
    """Exact equality of an answer and a reference read here: a set by its elements (a list
    such as "2, -3" too), a tuple in order (a list such as "x = 2, y = 5" too)."""
    if isinstance(reference, sympy.FiniteSet) and isinstance(answer, (sympy.FiniteSet, tuple)):
        left: list[sympy.Basic] = list(answer)
        right: list[sympy.Basic] = list(reference)
        return all(any(equal(x, y) for y in right) for x in left) and all(
            any(equal(x, y) for x in left) for y in right
        )
    if isinstance(reference, sympy.Tuple) and isinstance(answer, (sympy.Tuple, tuple)):
        return len(answer) == len(reference) and all(
            equal(x, y) for x, y in zip(answer, reference, strict=True)
        )
    if isinstance(answer, tuple) or isinstance(reference, tuple):
        return False
    if isinstance(answer, (sympy.FiniteSet, sympy.Tuple)) or isinstance(
        reference, (sympy.FiniteSet, sympy.Tuple)
    ):
        return False
    return bool(sympy.simplify(answer - reference) == 0)


def of_value(value: sympy.Basic) -> Reading:
    """The reading of an exact reference value (a generated task's answer)."""
    return Reading(
        value,
        symbols={s.name for s in value.free_symbols if isinstance(s, sympy.Symbol)},
        constants={"pi"} if value.has(sympy.pi) else set(),
        roots=any(not p.exp.is_Integer for p in value.atoms(sympy.Pow)),
    )


def deserves(response: str, reference: Reading) -> float | None:
    """What ``response`` deserves against ``reference`` (read by ``reading``): 1, 0, or None
    where this judge cannot tell (no box, an answer it cannot read)."""
    answers = list(dict.fromkeys(boxes(response)))
    if not answers:
        return None
    verdicts: list[float | None] = []
    for text in answers:
        answer = reading(text)
        if answer is None:
            verdicts.append(None)
            continue
        in_class = (
            answer.symbols <= reference.symbols
            and answer.constants <= reference.constants
            and (reference.roots or not answer.roots)
            and answer.arithmetic is None
        )
        if not equal(answer.value, reference.value):
            verdicts.append(0.0)
        else:
            verdicts.append(1.0 if in_class else 0.0)
    if 0.0 in verdicts:
        return 0.0
    return None if None in verdicts else 1.0
