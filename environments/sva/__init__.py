"""The ``sva`` family: NL2SVA (English sentence → SystemVerilog Assertion), scored by design-free
property equivalence (``verifiers.sva``): FVEval's NL2SVA-Human and -Machine sets (shipped in
``data/``; ``ENVSERVER_NL2SVA_DATA`` may replace them) and a seeded generator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from environments.family import Contents, EnvironmentId, Family


def _contents() -> Contents:
    from environments.single_turn import SingleTurnEnvironment, TaskFamily
    from environments.sva.family import GeneratedFamily, Nl2SvaDataset
    from environments.sva.loader import SPLITS, unavailable
    from environments.sva.search import SEARCH
    from verifiers.sva import VERIFIERS

    families: tuple[TaskFamily[Any], ...] = (
        GeneratedFamily(),
        *(Nl2SvaDataset(split) for split in SPLITS),
    )
    why = unavailable()
    return Contents(
        environments=tuple(SingleTurnEnvironment(family) for family in families),
        verifiers=VERIFIERS,
        # The FVEval sets when the configured data cannot be read (the generator serves anyway).
        unavailable={} if why is None else {EnvironmentId(f"sva/nl2sva-{s}"): why for s in SPLITS},
        search=SEARCH,
    )


FAMILY = Family(
    name="sva",
    load=_contents,
    requires=("pyslang", "z3"),
    install="envserver[sva]",
    suite=Path(__file__).with_name("redteam.toml"),
)
