"""The ``opt`` family: OPT-BENCH's ten NP-hard optimisation tasks with exact references."""

from environments.opt.family import OptBenchFamily, OptTaskFamily
from environments.opt.tasks import TASKS
from environments.single_turn import SingleTurnEnvironment

_ACTION = "Reasoning, then a final line 'Answer: <solution>' in the task's submission format."

ENVIRONMENTS = (
    *(SingleTurnEnvironment(OptTaskFamily(task), action_format=_ACTION) for task in TASKS.values()),
    SingleTurnEnvironment(OptBenchFamily(list(TASKS.values())), action_format=_ACTION),
)
