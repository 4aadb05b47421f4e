"""A family whose name holds a ``/`` (``test.nested/maths``), so its ids hold two: its environment
``test.nested/maths/echo`` states no family, and the catalogue and the metric labels must name
the declaration's family, not the id cut at its first ``/`` (``tests/test_declared_once.py``)."""

from __future__ import annotations

from typing import Any

from environments.family import Contents, Family
from environments.single_turn import SingleTurnEnvironment, Task, TaskFamily
from verifiers.base import NoOptions, Verifier
from verifiers.score import Score

NAME = "test.nested/maths"


def _exact(response: str, reference: Any, options: NoOptions) -> Score:
    del options
    return Score.ok(float(response.strip() == reference))


VERIFIER = Verifier(f"{NAME}.exact", "1", "Exact match.", _exact, example=("a", "a"))


class Echo(TaskFamily[NoOptions]):
    """Write the seed back."""

    id = f"{NAME}/echo"
    version = "1"
    description = "Write the seed back."
    verifier = VERIFIER
    action_format = "The seed, in digits."

    def generate(self, seed: int, options: NoOptions) -> Task:
        return Task(prompt=f"Write {seed}.", reference=str(seed))

    def expert_response(self, task: Task) -> str:
        return str(task.reference)


FAMILY = Family(
    name=NAME,
    load=lambda: Contents(environments=(SingleTurnEnvironment(Echo()),), verifiers=(VERIFIER,)),
)
