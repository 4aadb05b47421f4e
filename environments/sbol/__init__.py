"""The ``sbol`` family: genetic circuits as pySBOL3 programs, scored by GenCircuit-RL's five
hierarchical levels (``verifiers.sbol``); six task kinds over six circuit types."""

from environments.sbol.drawing import CircuitDrawing
from environments.sbol.family import FAMILIES
from environments.single_turn import SingleTurnEnvironment

ENVIRONMENTS = tuple(SingleTurnEnvironment(family) for family in FAMILIES)
RENDERERS = {family.id: CircuitDrawing(family) for family in FAMILIES}
"""The playground draws the circuit an answer builds."""
