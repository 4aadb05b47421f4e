r"""How much work an answer asks of the verifier, bounded before any of it is done.

A wrong answer that is slow to evaluate (a braced power tower ``{10}^{{10}^{10}}``,
``\Gamma(10^{8})``, ``\gcd(10^{10^{10}}, 5)``) used to run into math-verify's time limit and come
back ``timeout``, which trainers mask: a policy could use one to dodge a 0, and it held a worker
for seconds (the gcd, evaluated inside one long big-integer operation that the alarm cannot
interrupt, for 27). Only an infrastructure fault should time out, so the work is bounded from
the answer's structure, before sympy evaluates anything, and an answer past a bound is
``invalid`` at once:

- **Its text** (``unreadable``), before it is parsed at all: no answer is longer than
  ``MAX_ANSWER_CHARS`` characters (or twice its reference's length), since the LaTeX reader's
  time grows with the text (1,000 minus signs took a second to read); and notation that the
  reader evaluates while reading (a binomial, Γ, gcd/lcm, an evaluation bar ``|_{x=a}``;
  ``math_class.EAGER_NOTATION``) is read only on small literal numbers: once, with no power,
  factorial, product or number of more than four digits beside it. Matrix operations
  (``\operatorname{eye}(10^{6})`` is a million-row identity) are never read in an answer.
- **Its parse** (``too_large``), before it is compared: math-verify's reader leaves powers,
  factorials, Γ of an expression, sums and products unevaluated, so their size can be
  estimated from the tree: an upper bound on the digits of its exact value (``10^{9999}`` has
  10,000, ``(10^{8})!`` about 8·10^8) must stay within ``MAX_DIGITS``, and an upper bound on the
  terms of its expansion (``(\sqrt{2}+\sqrt{3}+\sqrt{5})^{60}`` has 1,891) within ``MAX_TERMS``.

No final answer comes near these bounds: they only refuse work, never a value that could be
written out. A right answer written as such work (``10^{10^{10}} - 10^{10^{10}} + 4``) is a
restatement of the value anyway.
"""

from __future__ import annotations

import math
import re
from typing import Any

import sympy
from sympy.functions.combinatorial.factorials import binomial, factorial
from sympy.functions.special.gamma_functions import gamma

from verifiers.math_class import EAGER_NOTATION

MAX_ANSWER_CHARS = 400
MAX_ANSWER_NESTING = 16
MAX_BARS = 8
MAX_DIGITS = 10_000
MAX_TERMS = 2_000
_LOG10_2 = math.log10(2)
_LOG10_E = math.log10(math.e)

# What an answer may hold beside notation that is evaluated while it is read: small literal
# numbers, fractions, sums and differences, brackets and spaces.
_LITERAL_ARGUMENTS = re.compile(
    r"(?:\d{1,4}(?!\d)|[\s{}()\[\],.+\-]|\\[dt]?frac(?![A-Za-z])|\\(?:left|right)(?![A-Za-z])"
    r"|\\[,;:! ])*"
)


_BRACKETS = re.compile(r"[^()\[\]{}]+")


def nesting(text: str) -> int:
    """How deep the brackets, parentheses and braces of ``text`` nest (unbalanced ones too)."""
    depth = deepest = 0
    for char in _BRACKETS.sub("", text):
        depth = depth + 1 if char in "([{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


def unreadable(text: str, reference: str) -> str | None:
    """Why ``text`` (an answer's own LaTeX) is not read at all, or None when it may be parsed."""
    return _oversized(text, reference) or _evaluated_while_read(text)


def _oversized(text: str, reference: str) -> str | None:
    # The reader's time grows with the text, and fast with nesting: bounds no final answer
    # reaches, or its reference's own size where that is larger.
    longest = max(MAX_ANSWER_CHARS, 2 * len(reference))
    if len(text) > longest:
        return f"the answer is longer than {longest} characters"
    deepest = max(MAX_ANSWER_NESTING, nesting(reference))
    if nesting(text) > deepest:
        return f"the answer nests brackets more than {deepest} levels deep"
    bars = max(MAX_BARS, reference.count("|"))
    if text.count("|") > bars:
        return f"the answer holds more than {bars} vertical bars"
    return None


def _evaluated_while_read(text: str) -> str | None:
    # Notation the reader evaluates as it reads is read only once, on small literal numbers.
    if EAGER_NOTATION["matrix"].search(text):
        return "matrix operations are not read in an answer"
    if (juxtaposed := EAGER_NOTATION["juxtaposition"].search(text)) is not None:
        return (
            f"{juxtaposed.group(0).strip()!r}: a whole number beside a value in brackets is read "
            "as a mixed number (their sum) or their product, as the reader happens to, not as "
            "written"
        )
    eager = [m for pattern in EAGER_NOTATION.values() for m in pattern.finditer(text)]
    if not eager:
        return None
    rest = text
    for match in sorted(eager, key=lambda m: m.start(), reverse=True):
        rest = rest[: match.start()] + " " + rest[match.end() :]
    if len(eager) > 1 or not _LITERAL_ARGUMENTS.fullmatch(rest):
        return (
            f"{eager[0].group(0).strip()!r} is evaluated while the answer is read, so it is "
            "read only once and on small literal numbers"
        )
    return None


def too_large(parsed: Any) -> str | None:
    """Why evaluating a parsed answer is more work than any final answer needs, or None."""
    if not isinstance(parsed, sympy.Basic):
        return None
    try:
        digits = _digits(parsed)
        terms = _terms(parsed)
    except RecursionError:
        return "the answer nests too deeply to evaluate"
    if digits > MAX_DIGITS:
        return f"its exact value could take more than {MAX_DIGITS:,} digits"
    if terms > MAX_TERMS:
        return f"expanding it could take more than {MAX_TERMS:,} terms"
    return None


def _int_digits(value: int) -> float:
    return max(1.0, abs(value).bit_length() * _LOG10_2 + 1)


def _magnitude(node: sympy.Basic) -> float:
    """An upper bound on ``|node|`` (1 for what holds symbols: a symbolic exponent is not
    evaluated to a number)."""
    if node.free_symbols:
        return 1.0
    if isinstance(node, sympy.Integer):
        return float(abs(int(node))) if _digits(node) < 300 else math.inf
    if _digits(node) > 15:  # a value of more than 15 digits: more than any bound below allows
        return math.inf
    try:
        value = complex(node.evalf(15))
    except (TypeError, ValueError, ArithmeticError):
        return math.inf
    return abs(value) if math.isfinite(abs(value)) else math.inf


def _digits(node: sympy.Basic) -> float:
    """An upper bound on the decimal digits of ``node``'s exact value (numerator and
    denominator, or its precision), which is what evaluating it costs."""
    if node.is_Atom:
        return _atom_digits(node)
    inner = sum(_digits(arg) for arg in node.args)
    return inner if inner > MAX_DIGITS else inner + _growth(node)


def _atom_digits(node: sympy.Basic) -> float:
    if isinstance(node, sympy.Integer):
        return _int_digits(int(node))
    if isinstance(node, sympy.Rational):
        return _int_digits(int(node.p)) + _int_digits(int(node.q))
    if isinstance(node, sympy.Float):
        return max(1.0, float(node._prec) * _LOG10_2)
    return 1.0


def _growth(node: sympy.Basic) -> float:
    """The digits evaluating ``node`` itself adds to its arguments' own."""
    if isinstance(node, sympy.Pow):
        base = node.base
        # n^e has e·log10(n) digits: a whole base's own logarithm, not its digits, or 10^{9999}
        # would count twice its 10,000 digits.
        size = math.log10(abs(int(base))) if base.is_Integer and abs(base) > 1 else _digits(base)
        return size * max(1.0, _magnitude(node.exp))
    if isinstance(node, sympy.exp):
        return _magnitude(node.args[0]) * _LOG10_E
    if isinstance(node, (factorial, gamma)):
        n = _magnitude(node.args[0])
        return n * math.log10(max(n, 10.0))
    if isinstance(node, binomial):
        n, k = (_magnitude(arg) for arg in node.args)
        return min(k, max(n - k, 0.0)) * math.log10(max(n, 10.0))
    if isinstance(node, (sympy.Sum, sympy.Product)):
        term, *ranges = node.args
        count = math.prod(_magnitude(hi) + _magnitude(lo) + 1 for _, lo, hi in ranges)
        return count * _digits(term)
    return 1.0


def _terms(node: sympy.Basic) -> float:
    """An upper bound on the terms of ``node`` fully expanded."""
    if isinstance(node, sympy.Add):
        return sum(map(_terms, node.args))
    if isinstance(node, sympy.Mul):
        return math.prod(map(_terms, node.args))
    if isinstance(node, sympy.Pow) and node.exp.is_Integer:
        count, power = _terms(node.base), abs(int(node.exp))
        if count <= 1 or power <= 1:
            return count
        if power > MAX_TERMS:
            return math.inf
        # The multinomial expansion of (a_1 + ... + a_count)^power has C(power+count-1, count-1)
        return math.exp(math.lgamma(power + count) - math.lgamma(power + 1) - math.lgamma(count))
    return 1.0
