"""The ten tasks, in the benchmark's order (by category)."""

from __future__ import annotations

from environments.opt.task import OptTask
from environments.opt.tasks import (
    graph_coloring,
    hamiltonian_cycle,
    knapsack,
    max_clique,
    max_independent_set,
    meeting_schedule,
    min_bisection,
    set_cover,
    subset_sum,
    tsp,
)

_MODULES = (
    knapsack,
    subset_sum,
    set_cover,
    tsp,
    hamiltonian_cycle,
    max_clique,
    max_independent_set,
    graph_coloring,
    min_bisection,
    meeting_schedule,
)
TASKS: dict[str, OptTask] = {m.TASK.name: m.TASK for m in _MODULES if m.TASK is not None}
