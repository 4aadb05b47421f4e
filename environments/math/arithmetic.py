"""Easy kinds: integer arithmetic, fractions, percentages and means."""

from __future__ import annotations

import random
from fractions import Fraction

from environments.math.problem import Problem, exact
from environments.math.render import number

_SUM, _PRODUCT, _ATOM = 1, 2, 3  # precedence of what an expression's text ends up as
_PERCENTS = (
    *(2, 4, 5, 8, 10, 12, 15, 16, 20, 25, 30, 35, 40, 45, 55, 60, 65, 70, 75, 80, 85, 90, 95),
    *(110, 120, 125, 150, 200),
)


def _expression(rng: random.Random, operands: int) -> tuple[int, str, int, set[str]]:
    """A random expression tree over small integers: (value, LaTeX, precedence, operators)."""
    if operands == 1:
        value = rng.randint(1, 12)
        return value, str(value), _ATOM, set()
    left_count = rng.randint(1, operands - 1)
    left_value, left_text, left_rank, left_ops = _expression(rng, left_count)
    right_value, right_text, right_rank, right_ops = _expression(rng, operands - left_count)
    operator = rng.choice("+-*")
    rank = _PRODUCT if operator == "*" else _SUM
    # Only the parentheses the precedence rules need, so reading the order of operations is
    # part of the problem.
    if left_rank < rank:
        left_text = f"({left_text})"
    if right_rank < rank or (operator == "-" and right_rank == rank):
        right_text = f"({right_text})"
    if operator == "+":
        value, symbol = left_value + right_value, "+"
    elif operator == "-":
        value, symbol = left_value - right_value, "-"
    else:
        value, symbol = left_value * right_value, "\\times"
    text = f"{left_text} {symbol} {right_text}"
    return value, text, rank, left_ops | right_ops | {operator}


def integer_arithmetic(rng: random.Random) -> Problem:
    """Evaluate an expression of 3-4 small integers mixing sums and products."""
    operands = rng.randint(3, 4)
    while True:
        value, text, _, operators = _expression(rng, operands)
        # A sum-only or product-only expression does not exercise the order of operations.
        if "*" in operators and operators & {"+", "-"}:
            break
    return Problem(f"Compute ${text}$.", exact(value))


def _proper_fraction(rng: random.Random) -> Fraction:
    denominator = rng.randint(2, 12)
    numerator = rng.choice([n for n in range(1, 2 * denominator) if n % denominator])
    return Fraction(numerator, denominator)


def fraction_arithmetic(rng: random.Random) -> Problem:
    """Add, subtract, multiply or divide two fractions."""
    left, right = _proper_fraction(rng), _proper_fraction(rng)
    operator = rng.choice(["+", "-", "\\times", "\\div"])
    if operator == "+":
        value = left + right
    elif operator == "-":
        value = left - right
    elif operator == "\\times":
        value = left * right
    else:
        value = left / right
    statement = (
        f"Compute ${number(left)} {operator} {number(right)}$. "
        "Write the result as a fraction in lowest terms or as an integer."
    )
    return Problem(statement, exact(value))


def percentage(rng: random.Random) -> Problem:
    """A percentage of a number, a ratio as a percentage, or a price before a change."""
    variant = rng.randrange(3)
    if variant == 0:
        percent = rng.choice(_PERCENTS)
        base = rng.randint(2, 200) * 5
        statement = f"What is ${percent}\\%$ of ${base}$?"
        return Problem(statement, exact(Fraction(percent * base, 100)))
    if variant == 1:
        # Only 2s and 5s in the whole, so the percentage is a terminating decimal; weighting
        # by size keeps the small wholes (with few possible parts) from repeating.
        wholes = [8, 16, 20, 25, 32, 40, 50, 64, 80, 125, 160, 200, 250, 320, 400]
        (whole,) = rng.choices(wholes, weights=wholes)
        part = rng.randint(1, 2 * whole - 1)
        statement = f"What percentage of ${whole}$ is ${part}$?"
        return Problem(statement, exact(Fraction(100 * part, whole)))
    original = rng.randint(2, 50) * 20
    percent = rng.randint(1, 12) * 5
    rise = rng.random() < 0.5
    changed = Fraction(original * (100 + percent if rise else 100 - percent), 100)
    direction = "increased" if rise else "decreased"
    statement = (
        f"After its price {direction} by ${percent}\\%$, a bicycle costs ${number(changed)}$ "
        "dollars. What was its price, in dollars, before the change?"
    )
    return Problem(statement, exact(original))


def mean(rng: random.Random) -> Problem:
    """The mean of a list of integers, or the value missing from a list with a known mean."""
    count = rng.randint(4, 7)
    values = [rng.randint(1, 50) for _ in range(count)]
    if rng.random() < 0.5:
        statement = f"What is the mean of the numbers ${', '.join(str(v) for v in values)}$?"
        return Problem(statement, exact(Fraction(sum(values), count)))
    # Raise the last value until the total is a multiple of the count: the mean is an integer.
    missing = values[-1] + (-sum(values)) % count
    average = (sum(values[:-1]) + missing) // count
    known = ", ".join(str(v) for v in values[:-1])
    statement = (
        f"The mean of {count} numbers is ${average}$. Of these, {count - 1} are ${known}$. "
        "What is the remaining number?"
    )
    return Problem(statement, exact(missing))
