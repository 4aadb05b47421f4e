"""A trivially learnable environment for the trainer's learning check (loaded with
``ENVSERVER_PLUGINS=benchmarks.plugins.letters``): the reward is the share of the target
letter among the first 16 characters of the answer, so a tiny random model can find it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from environments.family import Contents, Family
from environments.single_turn import SingleTurnEnvironment, Task, TaskFamily
from verifiers.base import Verifier
from verifiers.score import Score

WINDOW = 16


class LetterOptions(BaseModel):
    """No options."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _check(response: str, reference: Any, options: Any) -> Score:
    text = response[:WINDOW]
    return Score.ok(text.count(str(reference)) / WINDOW, components={"length": float(len(text))})


VERIFIER = Verifier(
    name="bench.letters",
    version="1",
    description="Share of the reference letter among the first 16 characters of the response.",
    check=_check,
    example=("a" * WINDOW, "a"),
)


class LetterTasks(TaskFamily):
    """Every seed asks for the same letter."""

    id = "bench/letters"
    version = "1"
    description = "Write the letter 'a' as often as you can (a learning check, not a task)."
    options_model = LetterOptions
    verifier = VERIFIER
    action_format = "Any text."

    def generate(self, seed: int, options: Any) -> Task:
        return Task(prompt="Write the letter a, many times:", reference="a")

    def expert_response(self, task: Task) -> str:
        return "a" * WINDOW


FAMILY = Family(
    name="bench",
    load=lambda: Contents(
        environments=(SingleTurnEnvironment(LetterTasks()),), verifiers=(VERIFIER,)
    ),
)
