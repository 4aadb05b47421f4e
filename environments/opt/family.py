"""OPT-BENCH tasks as single-turn families: one per task, and the mixed benchmark."""

from __future__ import annotations

import random
from typing import Any

from pydantic import Field

from environments.opt.prompt import build_prompt
from environments.opt.references import reference
from environments.opt.task import Instance, Level, OptTask
from environments.single_turn import Task, TaskFamily
from verifiers.numbers import Options
from verifiers.opt import VERIFIER

VERSION = "1"


class OptTaskOptions(Options):
    """What selects an instance besides its seed."""

    level: Level = Field(
        "medium",
        description="Instance size, as the original's levels: easy, medium, hard, bench (the "
        "largest; the 1,000-instance benchmark set uses it).",
    )


class OptBenchOptions(OptTaskOptions):
    """The mixed benchmark defaults to the bench level."""

    level: Level = Field("bench", description=OptTaskOptions.model_fields["level"].description)


ACTION_FORMAT = "Reasoning, then a final line 'Answer: <solution>' in the task's submission format."


class OptTaskFamily(TaskFamily[OptTaskOptions]):
    """One task: a seeded instance and its prompt (a ``TaskFamily``); the exact reference is
    proved when a score first needs it (``reference``), never at reset."""

    version = VERSION
    verifier = VERIFIER
    action_format = ACTION_FORMAT

    def __init__(self, task: OptTask) -> None:
        self.task = task
        self.id = f"opt/{task.name}"
        self.description = f"OPT-BENCH {task.original_key} ({task.category}): {task.description}"

    def instance(self, seed: int, level: Level) -> Instance:
        """The instance ``(seed, level)`` names, without its reference."""
        # A private generator seeded by a string: stable across processes and hash seeds.
        return self.task.generate(random.Random(f"{self.id}@{VERSION}/{seed}/{level}"), level)

    def generate(self, seed: int, options: OptTaskOptions) -> Task:
        """The instance ``(seed, level)`` names and its prompt. The reference holds the task
        and the instance only: proving the optimum can take seconds (``reference`` does it)."""
        level: Level = options.level
        instance = self.instance(seed, level)
        return Task(
            prompt=build_prompt(self.task, instance),
            reference={"task": self.task.name, "instance": instance},
            metadata={"task": self.task.name, "category": self.task.category, "level": level},
        )

    def reference(self, task: Task) -> dict[str, Any]:
        """The verifier's reference: the task and instance with the optimum's value, whether
        it is proven, and its answer (cached, see ``environments.opt.references``)."""
        partial: dict[str, Any] = task.reference
        solution = reference(self.task, partial["instance"])
        return {
            **partial,
            "value": solution.value,
            "optimal": solution.optimal,
            "answer": solution.answer,
        }

    def expert_response(self, task: Task) -> str:
        """The reference solution in the required format."""
        return f"An optimal solution.\nAnswer: {self.reference(task)['answer']}"


class OptBenchFamily(TaskFamily[OptBenchOptions]):
    """All ten tasks in turn: seed ``s`` is task ``s % 10``'s seed ``s // 10``, so seeds
    0..999 at the bench level are the 1,000-instance benchmark set (100 per task)."""

    id = "opt/bench"
    version = VERSION
    description = (
        "OPT-BENCH: ten NP-hard optimisation tasks in five categories (selection, planning, "
        "graph, partition, schedule), each seed one instance; seeds 0-999 at level 'bench' "
        "are the benchmark set. Reward: quality ratio against the proven optimum."
    )
    verifier = VERIFIER
    action_format = ACTION_FORMAT

    def __init__(self, tasks: list[OptTask]) -> None:
        self.families = [OptTaskFamily(task) for task in tasks]

    def member(self, seed: int) -> tuple[OptTaskFamily, int]:
        """The task family and its seed that benchmark seed ``seed`` names."""
        return self.families[seed % len(self.families)], seed // len(self.families)

    def generate(self, seed: int, options: OptBenchOptions) -> Task:
        """The member task's instance for the member seed."""
        family, member_seed = self.member(seed)
        return family.generate(member_seed, OptTaskOptions(level=options.level))

    def _family_of(self, task: Task) -> OptTaskFamily:
        name = task.reference["task"]
        return next(family for family in self.families if family.task.name == name)

    def reference(self, task: Task) -> dict[str, Any]:
        """The member task's reference."""
        return self._family_of(task).reference(task)

    def expert_response(self, task: Task) -> str:
        """The reference solution in the required format."""
        return self._family_of(task).expert_response(task)
