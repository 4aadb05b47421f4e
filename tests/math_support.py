"""The math family's expert answers, for the client tests that need a reward of 1."""

from __future__ import annotations

from environments.math import FAMILY
from environments.task_id import TaskId


def expert_answer(task_id: str) -> str:
    """The reference response for ``task_id``, computed in-process from the math family."""
    task = TaskId.parse(task_id)
    env = FAMILY.load().environments[0]
    options = env.spec.options_model.model_validate(task.options)
    state = {"seed": task.seed, "options": options.model_dump(mode="json"), "attempt": 0}
    return env.expert_action(state)
