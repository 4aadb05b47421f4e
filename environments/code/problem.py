"""What a problem kind produces: a function to write, its trusted solutions and its inputs."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Difficulty = Literal["easy", "medium", "hard"]

ValueType = Literal["int", "bool", "str", "ints", "strs", "matrix", "groups"]
"""The few shapes a parameter or a result takes; each has one Python type, one C++ type and one
text encoding on standard input/output (``programs.py``), so a kind never writes I/O code.
``ints``: list of integers; ``strs``: list of words; ``matrix``: list of rows of integers;
``groups``: list of lists of words (results only)."""

Args = tuple[Any, ...]
"""The positional arguments of one call of the function."""


@dataclass(frozen=True)
class Param:
    """One argument of the function to write."""

    name: str
    type: ValueType
    about: str  # how the statement introduces it: "a list of integers `nums`"


@dataclass(frozen=True)
class Size:
    """How large one difficulty's tests are. Kinds read ``level`` (0, 1, 2) for their own
    ranges through ``pick``; the rest is shared."""

    level: int
    tests: int
    edge_cases: int  # how many of the kind's edge cases (in the kind's order) are tests

    def pick(self, easy: int, medium: int, hard: int) -> int:
        """The value for this difficulty."""
        return (easy, medium, hard)[self.level]


SIZES: Mapping[Difficulty, Size] = {
    "easy": Size(level=0, tests=5, edge_cases=1),
    "medium": Size(level=1, tests=8, edge_cases=2),
    "hard": Size(level=2, tests=12, edge_cases=4),
}


@dataclass(frozen=True)
class Problem:
    """One generated problem, before it is given a test format.

    ``task`` completes "returns ..." and "prints ...": what the function computes, in terms of
    the parameters' names; ``rules`` are further sentences (conventions, guarantees).
    ``solve`` is the trusted implementation that computes every expected output in-process;
    ``python`` and ``cpp`` are the bodies of the reference solutions shown as the expert's
    answer (the signature and the I/O around them are generated). The tests check that the three
    agree on every case. ``random_case`` draws arguments at a size; ``edge_cases`` come first.
    """

    name: str
    params: tuple[Param, ...]
    returns: ValueType
    task: str
    solve: Callable[..., Any]
    python: str
    cpp: str
    random_case: Callable[[random.Random, Size], Args]
    edge_cases: tuple[Args, ...] = ()
    rules: str = ""


ProblemKind = Callable[[random.Random], Problem]
"""Draws one problem of a kind (its twist, names and constants) from the generator it is given,
and from nothing else."""


def int_list(rng: random.Random, length: int, low: int, high: int) -> list[int]:
    """``length`` integers drawn uniformly from ``[low, high]``."""
    return [rng.randint(low, high) for _ in range(length)]


def word(rng: random.Random, alphabet: str, low: int, high: int) -> str:
    """A word of ``low`` to ``high`` letters from ``alphabet``."""
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))
