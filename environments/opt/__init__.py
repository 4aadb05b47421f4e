"""The ``opt`` family: OPT-BENCH's ten NP-hard optimisation tasks with exact references."""

from typing import Any

from environments.opt.family import OptBenchFamily, OptTaskFamily
from environments.opt.tasks import TASKS
from environments.opt.verdict import VerdictRenderer
from environments.single_turn import SingleTurnEnvironment

ENVIRONMENTS: tuple[SingleTurnEnvironment[Any], ...] = (
    *(SingleTurnEnvironment(OptTaskFamily(task)) for task in TASKS.values()),
    SingleTurnEnvironment(OptBenchFamily(list(TASKS.values()))),
)
RENDERERS = {env.spec.id: VerdictRenderer() for env in ENVIRONMENTS}
"""The playground shows an answer's verdict in words."""
