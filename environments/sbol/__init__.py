"""The ``sbol`` family: genetic circuits as pySBOL3 programs, scored by GenCircuit-RL's five
hierarchical levels (``verifiers.sbol``); six task kinds over six circuit types."""

from pathlib import Path

from environments.family import Contents, Family


def _contents() -> Contents:
    from environments.sbol.drawing import CircuitDrawing
    from environments.sbol.family import FAMILIES
    from environments.sbol.search import SEARCH
    from environments.single_turn import SingleTurnEnvironment
    from verifiers.sbol import VERIFIER

    return Contents(
        environments=tuple(SingleTurnEnvironment(family) for family in FAMILIES),
        verifiers=(VERIFIER,),
        # The playground draws the circuit an answer builds.
        renderers={family.id: CircuitDrawing(family) for family in FAMILIES},
        search=SEARCH,
    )


FAMILY = Family(
    name="sbol",
    load=_contents,
    requires=("sbol3",),
    install="envserver[sbol]",
    suite=Path(__file__).with_name("redteam.toml"),
    tools="environments.sbol.cli",
)
