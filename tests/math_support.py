"""The math family's environment and expert answers, for the tests that need them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from environments.math.family import MathTaskOptions, MathTasks
from environments.single_turn import SingleTurnEnvironment
from environments.task_id import TaskId

MATH = SingleTurnEnvironment(MathTasks())
"""The math environment, built as the family declares it (without the registry)."""


def env_options(options: Mapping[str, Any]) -> MathTaskOptions:
    """Options as the environment validates them: the family's, and ``max_attempts``."""
    return cast(MathTaskOptions, MATH.spec.options_model.model_validate(options))


def expert_answer(task_id: str) -> str:
    """The reference response for ``task_id``, computed in-process from the math family."""
    task = TaskId.parse(task_id)
    options = env_options(task.options)
    state = {"seed": task.seed, "options": options.model_dump(mode="json"), "attempt": 0}
    return MATH.expert_action(state)
