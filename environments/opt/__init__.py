"""The ``opt`` family: OPT-BENCH's ten NP-hard optimisation tasks with exact references."""

from environments.opt.family import OptBenchFamily, OptTaskFamily
from environments.opt.tasks import TASKS
from environments.single_turn import SingleTurnEnvironment

ENVIRONMENTS = (
    *(SingleTurnEnvironment(OptTaskFamily(task)) for task in TASKS.values()),
    SingleTurnEnvironment(OptBenchFamily(list(TASKS.values()))),
)
