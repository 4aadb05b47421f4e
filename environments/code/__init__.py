"""The ``code`` family: seeded programming problems with hidden tests, scored in the sandbox."""

from environments.code.tasks import CodeTasks
from environments.single_turn import SingleTurnEnvironment

ENVIRONMENTS = (
    SingleTurnEnvironment(
        CodeTasks(),
        action_format="The solution in a single fenced code block (```python or, for C++ "
        "tasks, ```cpp) in the form the prompt asks for: a whole program that reads standard "
        "input, or a Python function with the given name and signature.",
    ),
)
