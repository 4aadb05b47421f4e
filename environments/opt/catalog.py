"""The opt families by environment id, for the command-line tools (the server uses the registry)."""

from __future__ import annotations

from functools import cache
from typing import Any

from environments.opt.family import OptBenchFamily, OptTaskFamily
from environments.opt.tasks import TASKS
from environments.task_id import TaskId

BENCH_SEEDS = range(100)  # per task, at level "bench": the 1,000-instance benchmark set


@cache
def families() -> dict[str, OptTaskFamily | OptBenchFamily]:
    """``opt/<task>`` for each task, and ``opt/bench``."""
    found: dict[str, OptTaskFamily | OptBenchFamily] = {
        f"opt/{name}": OptTaskFamily(task) for name, task in TASKS.items()
    }
    found["opt/bench"] = OptBenchFamily(list(TASKS.values()))
    return found


def reference_for(task_id: str) -> dict[str, Any]:
    """The verifier's reference for the task a task id names (its optimum solved or read from
    the cache); raises ``TaskIdError``/``KeyError``/``ValidationError``."""
    parsed = TaskId.parse(task_id)
    family = families()[parsed.env]
    if parsed.version != family.version:
        raise KeyError(f"{task_id}: this code serves {parsed.env}@{family.version}")
    options: Any = family.options_model.model_validate(parsed.options)
    return family.reference(family.generate(parsed.seed, options))


def bench_task_ids() -> list[str]:
    """The benchmark set: 100 bench-level instances per task, in task order."""
    return [
        TaskId.format(family.id, family.version, seed, {"level": "bench"})
        for family in families().values()
        if isinstance(family, OptTaskFamily)
        for seed in BENCH_SEEDS
    ]
