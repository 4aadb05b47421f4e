"""The ``code`` family: seeded programming problems with hidden tests, scored in the sandbox."""

from environments.code.family import CodeTasks
from environments.single_turn import SingleTurnEnvironment

ENVIRONMENTS = (SingleTurnEnvironment(CodeTasks()),)
