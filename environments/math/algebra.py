"""Equations, systems, polynomial values and arithmetic series."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from fractions import Fraction

import sympy

from environments.math.problem import Problem, exact
from environments.math.render import linear_combination, number, polynomial


def _nonzero(rng: random.Random, low: int, high: int) -> int:
    return rng.choice([n for n in range(low, high + 1) if n != 0])


def evaluate(coefficients: Sequence[int | Fraction], at: int | Fraction) -> int | Fraction:
    """The polynomial with ``coefficients`` (highest degree first) at ``at`` (Horner's rule)."""
    value: int | Fraction = 0
    for coefficient in coefficients:
        value = value * at + coefficient
    return value


def linear_equation(rng: random.Random) -> Problem:
    """``ax + b = cx + d`` or ``a(x + b) = cx + d``; the solution is rational."""
    a = _nonzero(rng, -9, 9)
    c = rng.choice([n for n in range(-9, 10) if n != a])
    b, d = _nonzero(rng, -20, 20), rng.randint(-20, 20)
    right = linear_combination([(c, "x"), (d, "")])
    if rng.random() < 0.5:
        left = linear_combination([(a, "x"), (b, "")])
        solution = Fraction(d - b, a - c)
    else:
        scale = "-" if a == -1 else "" if a == 1 else str(a)
        left = f"{scale}\\left({linear_combination([(1, 'x'), (b, '')])}\\right)"
        solution = Fraction(d - a * b, a - c)
    return Problem(f"Solve for $x$: ${left} = {right}$.", exact(solution))


def polynomial_value(rng: random.Random) -> Problem:
    """The value of a cubic or quadratic at a small integer."""
    degree = rng.randint(2, 3)
    coefficients = [_nonzero(rng, -9, 9)] + [rng.randint(-9, 9) for _ in range(degree)]
    at = _nonzero(rng, -5, 5)
    statement = f"Let $f(x) = {polynomial(coefficients)}$. Compute $f({at})$."
    return Problem(statement, exact(evaluate(coefficients, at)))


def linear_system(rng: random.Random) -> Problem:
    """Two linear equations in ``x`` and ``y`` with a unique (integer or rational) solution."""
    while True:
        a1, b1, a2, b2 = (rng.randint(-7, 7) for _ in range(4))
        determinant = a1 * b2 - a2 * b1
        # Each equation must mention a variable, and the system must have exactly one solution.
        if determinant != 0 and (a1 or b1) and (a2 or b2):
            break
    if rng.random() < 0.7:
        x, y = Fraction(rng.randint(-9, 9)), Fraction(rng.randint(-9, 9))
        c1, c2 = a1 * x + b1 * y, a2 * x + b2 * y
    else:
        c1, c2 = Fraction(rng.randint(-20, 20)), Fraction(rng.randint(-20, 20))
        x = (c1 * b2 - c2 * b1) / determinant
        y = (a1 * c2 - a2 * c1) / determinant
    first = linear_combination([(a1, "x"), (b1, "y")])
    second = linear_combination([(a2, "x"), (b2, "y")])
    statement = (
        f"Solve the system of equations ${first} = {number(c1)}$ and ${second} = {number(c2)}$. "
        "Give the solution as an ordered pair $(x, y)$."
    )
    return Problem(statement, sympy.Tuple(exact(x), exact(y)))


def arithmetic_series(rng: random.Random) -> Problem:
    """The sum of the first ``n`` terms of an arithmetic sequence, or of a written-out sum."""
    first, step, count = rng.randint(-10, 20), _nonzero(rng, -6, 9), rng.randint(8, 40)
    total = count * (2 * first + (count - 1) * step) // 2
    if rng.random() < 0.5:
        terms = ", ".join(str(first + k * step) for k in range(3))
        statement = (
            f"What is the sum of the first ${count}$ terms of the arithmetic sequence "
            f"${terms}, \\ldots$?"
        )
        return Problem(statement, exact(total))
    # Written out, the sum shows its last term instead of the number of terms; positive terms
    # keep the signs unambiguous.
    first, step = abs(first) + 1, abs(step)
    last = first + (count - 1) * step
    total = count * (first + last) // 2
    shown = " + ".join(str(first + k * step) for k in range(3))
    return Problem(f"Compute ${shown} + \\cdots + {last}$.", exact(total))


def quadratic_equation(rng: random.Random) -> Problem:
    """A quadratic with two distinct real roots, rational or surds; asks for both or the
    larger."""
    if rng.random() < 0.5:
        while True:
            p1, p2 = rng.randint(-12, 12), rng.randint(-12, 12)
            q1, q2 = rng.choice([1, 1, 1, 2, 3]), rng.choice([1, 1, 1, 2, 3])
            if Fraction(p1, q1) != Fraction(p2, q2):
                break
        # (q1 x - p1)(q2 x - p2), reduced by the common factor of its coefficients.
        coefficients = [q1 * q2, -(q1 * p2 + q2 * p1), p1 * p2]
        common = math.gcd(*coefficients)
        a, b, c = (k // common for k in coefficients)
    else:
        while True:
            a, b, c = rng.randint(1, 4), rng.randint(-12, 12), rng.randint(-12, 12)
            discriminant = b * b - 4 * a * c
            # A positive non-square discriminant: two distinct irrational roots.
            if discriminant > 0 and math.isqrt(discriminant) ** 2 != discriminant:
                break
    discriminant = b * b - 4 * a * c
    root = sympy.sqrt(discriminant)
    larger = (-b + root) / (2 * a)  # a > 0, so the + branch is the larger root
    smaller = (-b - root) / (2 * a)
    equation = f"${polynomial([a, b, c])} = 0$"
    if rng.random() < 0.5:
        # math-verify reads "a, b" as a set but does not expand a \pm into two roots.
        statement = f"Find all real solutions of {equation}. List them separated by a comma."
        return Problem(statement, sympy.FiniteSet(smaller, larger))
    return Problem(f"Find the larger of the two real solutions of {equation}.", larger)
