"""What every OPT-BENCH task check is: parse the final answer, check it strictly, value it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Direction = Literal["min", "max"]


class InvalidAnswer(ValueError):
    """The answer cannot be read as a solution of this task (no ``Answer:``, wrong types, ids out
    of range, nested junk): status ``invalid``."""


class Infeasible(ValueError):
    """The answer reads as a solution but breaks a constraint (duplicates, over capacity,
    non-adjacent steps, double-booked attendees): feasible 0, reward 0, status ``ok``."""


@dataclass(frozen=True)
class TaskCheck:
    """One task's scoring. ``evaluate(instance, answer)`` gets the instance and the text after
    the last ``Answer:`` and returns the objective value of a feasible answer; it raises
    ``InvalidAnswer`` or ``Infeasible`` with a message that says why."""

    name: str
    direction: Direction
    evaluate: Callable[[dict[str, Any], str], float]
