"""The ``math`` family: seeded procedural problems with exact answers, scored by math-verify."""

from environments.math.family import MathTasks
from environments.single_turn import SingleTurnEnvironment

ENVIRONMENTS = (SingleTurnEnvironment(MathTasks()),)
