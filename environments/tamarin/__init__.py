"""The ``tamarin`` family: proof search in the Tamarin security-protocol prover."""

from environments.renderer import ListedActions
from environments.tamarin.family import TamarinProofEnv
from environments.tamarin.provers import unavailable
from verifiers.base import Unavailable

ENVIRONMENTS = (TamarinProofEnv(),)
_WHY = unavailable()
UNAVAILABLE: dict[str, Unavailable] = {} if _WHY is None else {"tamarin/proof": _WHY}
"""What of the family this server cannot serve (the registry lists it under ``disabled``)."""
RENDERERS = {"tamarin/proof": ListedActions("valid_actions")}
"""The playground offers the proof methods a step can take as buttons."""
