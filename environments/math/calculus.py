"""Derivatives at a point and definite integrals of polynomials."""

from __future__ import annotations

import random
from fractions import Fraction

from environments.math.algebra import evaluate
from environments.math.problem import Problem, exact
from environments.math.render import polynomial


def _random_polynomial(rng: random.Random, degree: int, bound: int) -> list[int]:
    return [rng.choice([n for n in range(-bound, bound + 1) if n])] + [
        rng.randint(-bound, bound) for _ in range(degree)
    ]


def _product(left: list[int], right: list[int]) -> list[int]:
    coefficients = [0] * (len(left) + len(right) - 1)
    for i, a in enumerate(left):
        for j, b in enumerate(right):
            coefficients[i + j] += a * b
    return coefficients


def _derivative(coefficients: list[int]) -> list[int]:
    degree = len(coefficients) - 1
    return [c * (degree - i) for i, c in enumerate(coefficients[:-1])] or [0]


def derivative_at_point(rng: random.Random) -> Problem:
    """``f'(a)`` for a polynomial, given expanded or as a product of two factors."""
    at = rng.randint(-3, 3)
    if rng.random() < 0.5:
        coefficients = _random_polynomial(rng, rng.randint(3, 4), 6)
        shown = polynomial(coefficients)
    else:
        left = _random_polynomial(rng, rng.randint(1, 2), 5)
        right = _random_polynomial(rng, rng.randint(1, 2), 5)
        coefficients = _product(left, right)
        # Written as a product, so the product rule (or expanding first) is part of the work.
        shown = f"\\left({polynomial(left)}\\right)\\left({polynomial(right)}\\right)"
    statement = f"Let $f(x) = {shown}$. Compute $f'({at})$."
    return Problem(statement, exact(evaluate(_derivative(coefficients), at)))


def definite_integral(rng: random.Random) -> Problem:
    """The integral of a polynomial of degree 1-3 between two small integers."""
    coefficients = _random_polynomial(rng, rng.randint(1, 3), 6)
    low = rng.randint(-3, 2)
    high = rng.randint(low + 1, 4)
    degree = len(coefficients) - 1
    antiderivative = [Fraction(c, degree - i + 1) for i, c in enumerate(coefficients)] + [
        Fraction(0)
    ]
    value = evaluate(antiderivative, high) - evaluate(antiderivative, low)
    integrand = polynomial(coefficients)
    statement = f"Compute $\\int_{{{low}}}^{{{high}}} \\left({integrand}\\right) \\, dx$."
    return Problem(statement, exact(value))
