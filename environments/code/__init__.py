"""The ``code`` family: seeded programming problems with hidden tests, scored in the sandbox."""

from pathlib import Path

from environments.family import Contents, Family


def _contents() -> Contents:
    from environments.code.family import CodeTasks
    from environments.code.search import SEARCH
    from environments.single_turn import SingleTurnEnvironment
    from verifiers.code import VERIFIER

    return Contents(
        environments=(SingleTurnEnvironment(CodeTasks()),), verifiers=(VERIFIER,), search=SEARCH
    )


FAMILY = Family(name="code", load=_contents, suite=Path(__file__).with_name("redteam.toml"))
