"""LaTeX for the numbers and polynomials that appear in problem statements.

Statements are rendered by hand rather than with ``sympy.latex``: it is several times faster
and keeps the problem as the generator wrote it (``sympy`` would reorder or simplify it).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction


def number(value: int | Fraction) -> str:
    r"""``value`` as LaTeX: ``7``, ``-3``, ``\frac{3}{4}``, ``-\frac{3}{4}``."""
    value = Fraction(value)
    if value.denominator == 1:
        return str(value.numerator)
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def linear_combination(terms: Sequence[tuple[int, str]]) -> str:
    """A sum of integer multiples of monomials: ``[(3, "x"), (-1, "y"), (4, "")]`` gives
    ``3x - y + 4``. Zero terms are left out; all-zero terms give ``0``."""
    rendered: list[str] = []
    for coefficient, monomial in terms:
        if coefficient == 0:
            continue
        magnitude = abs(coefficient)
        body = monomial if magnitude == 1 and monomial else f"{magnitude}{monomial}"
        if not rendered:
            rendered.append(f"-{body}" if coefficient < 0 else body)
        else:
            rendered.append(f"{'-' if coefficient < 0 else '+'} {body}")
    return " ".join(rendered) if rendered else "0"


def polynomial(coefficients: Sequence[int], variable: str = "x") -> str:
    """A polynomial from its coefficients, highest degree first: ``[3, 0, -1, 4]`` gives
    ``3x^{3} - x + 4``."""
    degree = len(coefficients) - 1
    monomials = [
        "" if power == 0 else variable if power == 1 else f"{variable}^{{{power}}}"
        for power in range(degree, -1, -1)
    ]
    return linear_combination(list(zip(coefficients, monomials, strict=True)))


def listing(items: Sequence[str]) -> str:
    """``a, b and c`` (an English list)."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
