"""The problem kinds of each difficulty, by name (the name is the task's ``kind`` metadata)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from environments.math.algebra import (
    arithmetic_series,
    linear_equation,
    linear_system,
    polynomial_value,
    quadratic_equation,
)
from environments.math.arithmetic import fraction_arithmetic, integer_arithmetic, mean, percentage
from environments.math.calculus import definite_integral, derivative_at_point
from environments.math.counting import counting
from environments.math.number_theory import gcd_lcm, modular_arithmetic
from environments.math.problem import ProblemKind

Difficulty = Literal["easy", "medium", "hard"]

# Order matters: a seed picks a kind by its position, so reordering or adding a kind changes
# every task of that difficulty and needs a version bump.
KINDS: Mapping[Difficulty, Mapping[str, ProblemKind]] = {
    "easy": {
        "integer_arithmetic": integer_arithmetic,
        "fraction_arithmetic": fraction_arithmetic,
        "percentage": percentage,
        "mean": mean,
    },
    "medium": {
        "linear_equation": linear_equation,
        "gcd_lcm": gcd_lcm,
        "polynomial_value": polynomial_value,
        "linear_system": linear_system,
        "arithmetic_series": arithmetic_series,
    },
    "hard": {
        "quadratic_equation": quadratic_equation,
        "derivative_at_point": derivative_at_point,
        "definite_integral": definite_integral,
        "counting": counting,
        "modular_arithmetic": modular_arithmetic,
    },
}
