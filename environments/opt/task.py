"""What one OPT-BENCH task provides on the environment side."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from verifiers.opt.base import TaskCheck

Level = Literal["easy", "medium", "hard", "bench"]
LEVELS: tuple[Level, ...] = ("easy", "medium", "hard", "bench")
Category = Literal["selection", "planning", "graph", "partition", "schedule"]
Instance = dict[str, Any]


@dataclass(frozen=True)
class Solution:
    """An answer (the text that follows ``Answer:``), its objective, and whether it is proven
    optimal."""

    answer: str
    value: float
    optimal: bool


@dataclass(frozen=True)
class OptTask:
    """A task: its check (``verifiers.opt``), its texts, a seeded generator, an exact solver and a
    greedy baseline.

    ``generate(rng, level)`` must draw only from ``rng``. ``solve(instance, budget)`` returns a
    proven optimum when it can within ``budget`` deterministic seconds (CP-SAT's deterministic
    time, so the result does not depend on the machine's speed), else the best solution found
    with ``optimal=False``. ``greedy(instance)`` is the scripted baseline's answer text.
    """

    check: TaskCheck
    original_key: str
    category: Category
    description: str
    submission_format: str
    example_input: Instance
    example_output: str
    generate: Callable[[random.Random, Level], Instance]
    solve: Callable[[Instance, float], Solution]
    greedy: Callable[[Instance], str]

    @property
    def name(self) -> str:
        """The task key (``knapsack``, ``tsp``, ...)."""
        return self.check.name
