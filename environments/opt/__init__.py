"""The ``opt`` family: OPT-BENCH's ten NP-hard optimisation tasks with exact references."""

from pathlib import Path
from typing import Any

from environments.family import Contents, Family


def _contents() -> Contents:
    from environments.opt.family import OptBenchFamily, OptTaskFamily
    from environments.opt.search import SEARCH
    from environments.opt.tasks import TASKS
    from environments.opt.verdict import VerdictRenderer
    from environments.single_turn import SingleTurnEnvironment
    from verifiers.opt import VERIFIER

    environments: tuple[SingleTurnEnvironment[Any], ...] = (
        *(SingleTurnEnvironment(OptTaskFamily(task)) for task in TASKS.values()),
        SingleTurnEnvironment(OptBenchFamily(list(TASKS.values()))),
    )
    return Contents(
        environments=environments,
        verifiers=(VERIFIER,),
        # The playground shows an answer's verdict in words.
        renderers={env.spec.id: VerdictRenderer() for env in environments},
        search=SEARCH,
    )


FAMILY = Family(
    name="opt",
    load=_contents,
    requires=("ortools",),
    install="envserver[opt]",
    suite=Path(__file__).with_name("redteam.toml"),
    tools="environments.opt.cli",
)
