r"""The answer class of a math value: the symbols and operators it is written with.

math-verify decides equivalence by evaluating both sides, so anything that evaluates to the
reference is "equivalent": the problem restated with a dummy symbol (``\frac{9(3y+5y)}{y}`` for
72: the y cancels), the value times ``\frac{y}{y}`` or plus ``0 \cdot y``, an integral, a sum
or a limit equal to it, ``72(\cos^2 1 + \sin^2 1)``. None of these is a final answer: each
leaves the work to the verifier. A final answer is written in the reference's class:

- **Symbols**: every free symbol of the answer is one the reference holds (a bound variable,
  the x of ``\int_0^1 x\,dx``, is not free). Never lifted: a symbol the value does not depend on
  is a restatement, whatever the options.
- **Calculus**: an unevaluated integral, sum, product, limit or derivative only where the
  reference holds the same operator. Never lifted either: their evaluation has no bound (a
  symbolic integral, a sum over a huge range), so accepting them would also let a policy choose
  answers that time out.
- **Everything else an answer can ask the verifier to evaluate** (a function: sin, log, Γ,
  factorial, binomial, gcd, mod, floor, |x|; a root; a constant: π, e, i) only where the
  reference holds it too, when the reference is itself a final value and the verifier option
  ``allow_unevaluated`` is off (the verifier decides; ``evaluated`` below). So a rational
  reference takes rational numbers only (``(\sqrt{3}+\sqrt{2})(\sqrt{3}-\sqrt{2}) \cdot 72`` is
  72 but not a rational literal), and a surd reference takes roots in any arrangement.

A name is not part of the value: the left side of ``x = 4``, ``f(3) = 4``, ``(x, y) = (2, 5)``
(a symbol, a function of symbols or numbers, a tuple of names) is set aside, in the answer and
in the reference alike. Addition, multiplication, integer powers, numbers, sets, tuples,
intervals, unions and relations are how values are written, not operators.

Some notation is evaluated by math-verify's LaTeX reader while it reads (``\binom{10}{3}`` is
read as 120, ``\Gamma(5)`` as 24, ``x^2|_{x=3}`` as 9, and a whole number followed by such a
value as a mixed number, their sum: ``2(3)`` as 5, ``71e^{0}`` as 72), so only the text shows it:
``notation`` finds it there, and it counts as the operator it names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import sympy
from sympy.core.function import AppliedUndef
from sympy.logic.boolalg import BooleanAtom
from sympy.matrices import MatrixBase

CALCULUS = frozenset({"Integral", "Sum", "Product", "Limit", "Derivative"})
"""Operators whose evaluation has no bound: only where the reference holds them."""

# How values are written: containers, relations, and the arithmetic of numbers.
_STRUCTURE = (
    sympy.Add,
    sympy.Mul,
    sympy.Number,  # with the infinities: an interval's ends are written with them
    sympy.Symbol,
    sympy.Tuple,
    sympy.FiniteSet,
    sympy.Interval,
    sympy.Union,
    sympy.sets.sets.EmptySet,
    sympy.core.relational.Relational,
    sympy.And,
    sympy.Or,
    sympy.Not,
    BooleanAtom,
    MatrixBase,
)
_PERCENT = sympy.UnevaluatedExpr(sympy.Rational(1, 100))  # how math-verify reads "25%"
_NUMERAL = re.compile(r"\d+(?:\.\d+)?")  # \mathrm{72} is read as a symbol named "72"

# Notation math-verify's reader evaluates while reading (latex2sympy2), by the operator it is.
EAGER_NOTATION: dict[str, re.Pattern[str]] = {
    "binomial": re.compile(r"\\[dt]?binom(?![A-Za-z])|\\choose(?![A-Za-z])"),
    "gamma": re.compile(r"\\(?:Gamma|gamma)(?![A-Za-z])"),
    "gcd": re.compile(r"\\(?:gcd|lcm)(?![A-Za-z])|\\operatorname\s*\{\s*(?:gcd|lcm)\s*\}"),
    "Subs": re.compile(r"\|\s*_"),  # an evaluation bar: x^2|_{x=3}
    # A whole number followed by a value the reader has already evaluated is read as a mixed
    # number, their sum: 2(3) as 5, 71e^{0} as 72, \frac{2(2)}{2} as 2 (3\frac{1}{2} is 7/2);
    # in nested brackets, 2({2}), as their sum or their product (a search found
    # \frac{2({2})}{2} paid as 2).
    "juxtaposition": re.compile(
        r"(?:\d|\))\s*(?:(?:(?:\\left\s*)?[({]\s*)+[-+]?\s*(?:\d+(?:\.\d+)?"
        r"|\\[dt]?frac\s*\{\s*\d+\s*\}\s*\{\s*\d+\s*\})(?:\s*(?:\\right\s*)?[)}])+"
        r"|e\s*\^\s*(?:\d|\{(?:[^{}A-Za-z]|\\[A-Za-z]+)*\})"  # e^{0}, e^{\ln 3}; not e^{x}
        r"|\\(?:Gamma|gamma|[dt]?binom|gcd|lcm|det|operatorname)(?![A-Za-z]))"
    ),
    "matrix": re.compile(
        r"\\det(?![A-Za-z])|\\operatorname\s*\{\s*(?:eye|zeros|ones|diag|hstack|vstack|orth\w*"
        r"|rank|trace|tr|rref|nullspace|norm|cols|rows|eig\w*|diagonalize|svd|SVD)\s*\}"
    ),
}


def notation(text: str) -> frozenset[str]:
    """The operators ``text`` writes with notation that is evaluated while it is read."""
    return frozenset(name for name, pattern in EAGER_NOTATION.items() if pattern.search(text))


def _is_name(node: Any) -> bool:
    # What names a value on the left of "=": x, x_1, f(3), f(x), (x, y).
    if isinstance(node, sympy.Symbol):
        return True
    if isinstance(node, AppliedUndef):
        return all(arg.is_Number or isinstance(arg, sympy.Symbol) for arg in node.args)
    if isinstance(node, sympy.Tuple):
        return all(map(_is_name, node.args))
    return False


def values(parsed: Any) -> Iterator[sympy.Basic]:
    """The parts of a parsed answer that are values, with names set aside: ``x = 4`` gives 4,
    ``x = 2, x = -3`` gives 2 and -3; a relation that names nothing (``x \\le 4``) is a value
    whole."""
    if isinstance(parsed, sympy.Eq) and _is_name(parsed.lhs):
        yield from values(parsed.rhs)
    elif isinstance(parsed, (sympy.And, sympy.Or, sympy.FiniteSet, sympy.Tuple, list, tuple)):
        for part in parsed.args if isinstance(parsed, sympy.Basic) else parsed:
            yield from values(part)
    elif isinstance(parsed, sympy.Basic):
        yield parsed


def _symbols(node: sympy.Basic) -> set[str]:
    return {
        symbol.name
        for symbol in node.free_symbols
        if isinstance(symbol, sympy.Symbol) and not _NUMERAL.fullmatch(symbol.name)
    }


def _operators(node: sympy.Basic) -> set[str]:
    found: set[str] = set()
    for part in sympy.preorder_traversal(node):
        if isinstance(part, sympy.Pow):
            exponent = part.exp
            if not exponent.is_Integer:
                found.add("root" if exponent.is_Rational else "power")
        elif isinstance(part, (sympy.NumberSymbol, sympy.core.numbers.ImaginaryUnit)):
            found.add(str(part))
        elif part == _PERCENT or isinstance(part, _STRUCTURE):
            continue
        else:
            found.add(type(part).__name__)
    return found


@dataclass(frozen=True)
class AnswerClass:
    """The free symbols and operators a value is written with (names set aside, except that a
    reference's names count among its symbols: ``y - 2x = 1`` answers ``y = 2x + 1``)."""

    symbols: frozenset[str]
    operators: frozenset[str]

    @classmethod
    def of(cls, parsed: Iterable[Any], text: str, *, names: bool = False) -> AnswerClass:
        """The class of a parsed answer (math-verify's parses of it) written as ``text``;
        ``names``: count the symbols of names too (for a reference)."""
        symbols: set[str] = set()
        operators: set[str] = set(notation(text))
        for item in parsed:
            if not isinstance(item, sympy.Basic):
                continue
            if names:
                symbols |= _symbols(item)
            for value in values(item):
                symbols |= _symbols(value)
                operators |= _operators(value)
        return cls(frozenset(symbols), frozenset(operators))

    def refuses(self, answer: AnswerClass, *, evaluated: bool) -> str | None:
        """Why ``answer`` is outside this (the reference's) class, or None when it is in it.
        ``evaluated``: the answer must be a final value (every operator the reference's too)."""
        extra = sorted(answer.symbols - self.symbols)
        if extra:
            return f"it holds the symbol {extra[0]!r}, which the reference does not"
        calculus = sorted((answer.operators & CALCULUS) - self.operators)
        if calculus:
            return f"it holds an unevaluated {calculus[0]}"
        other = sorted(answer.operators - self.operators)
        if evaluated and other:
            return f"it holds {other[0]!r}, which the reference's form does not"
        return None
