"""The ``math`` family: seeded procedural problems with exact answers, scored by math-verify."""

from pathlib import Path

from environments.family import Contents, Family


def _contents() -> Contents:
    from environments.math.family import MathTasks
    from environments.math.search import SEARCH
    from environments.single_turn import SingleTurnEnvironment
    from verifiers.math import VERIFIER

    return Contents(
        environments=(SingleTurnEnvironment(MathTasks()),), verifiers=(VERIFIER,), search=SEARCH
    )


FAMILY = Family(
    name="math",
    load=_contents,
    requires=("math_verify", "sympy"),
    install="envserver[math]",
    suite=Path(__file__).with_name("redteam.toml"),
)
