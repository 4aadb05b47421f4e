"""The ``math`` family: seeded procedural problems with exact answers, scored by math-verify."""

from environments.math.tasks import MathTasks
from environments.single_turn import SingleTurnEnvironment

ENVIRONMENTS = (
    SingleTurnEnvironment(
        MathTasks(),
        action_format="Text that ends with the final answer in \\boxed{}; any mathematically "
        "equivalent form (fraction, decimal, surd, set of roots) is accepted.",
    ),
)
