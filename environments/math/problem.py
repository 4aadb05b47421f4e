"""What a problem kind produces: a statement and its exact answer."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy


@dataclass(frozen=True)
class Problem:
    """One generated problem.

    ``statement`` is the question in text with inline LaTeX (no answer instruction);
    ``answer`` is an exact sympy value (an Integer, Rational, surd, FiniteSet or Tuple) whose
    ``sympy.latex`` rendering is the task's reference.
    """

    statement: str
    answer: Any  # a sympy expression; sympy ships no type information


ProblemKind = Callable[[random.Random], Problem]
"""Draws one problem of a kind from the generator it is given, and from nothing else."""


def exact(value: int | Fraction) -> Any:
    """``value`` as a sympy Integer or Rational (what the reference is rendered from)."""
    value = Fraction(value)
    return sympy.Rational(value.numerator, value.denominator)
