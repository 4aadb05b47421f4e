"""A family whose check fails as infrastructure does, on purpose (ENVSERVER_PLUGINS, test servers
only): a response containing "unscorable" gets status ``error`` and no reward, anything else is
scored against the seed. It lets the trainer adapters' handling of a sample the service could
not score be tested against the real server, pool and routes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from environments.family import Contents, Family
from environments.single_turn import SingleTurnEnvironment, Task, TaskFamily
from verifiers.base import Verifier
from verifiers.score import Score


def _check(response: str, reference: Any, options: Any) -> Score:
    if "unscorable" in response:
        return Score.error("the check's infrastructure failed (on purpose)")
    return Score.ok(1.0 if response.strip() == str(reference) else 0.0)


VERIFIER = Verifier(
    "test.unscorable",
    "1",
    "The seed, exactly; a response saying 'unscorable' cannot be scored.",
    _check,
    example=("1", "1"),
)


class NoOptions(BaseModel):
    """Nothing selects a task but its seed."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class UnscorableTasks(TaskFamily[NoOptions]):
    """Write the seed back."""

    id = "test.unscorable"
    version = "1"
    description = "Write the seed back; a response saying 'unscorable' cannot be scored."
    verifier = VERIFIER
    action_format = "The seed, in digits."
    observation_format: Literal["text", "chat"] = "text"

    def generate(self, seed: int, options: NoOptions) -> Task:
        return Task(prompt=f"Write {seed}.", reference=str(seed))

    def expert_response(self, task: Task) -> str:
        return str(task.reference)


FAMILY = Family(
    name="test.unscorable",
    load=lambda: Contents(
        environments=(SingleTurnEnvironment(UnscorableTasks()),), verifiers=(VERIFIER,)
    ),
)
