"""The ``sva`` family: NL2SVA (English sentence → SystemVerilog Assertion), scored by design-free
property equivalence (``verifiers.sva``): FVEval's NL2SVA-Human and -Machine sets (shipped in
``data/``; ``ENVSERVER_NL2SVA_DATA`` may replace them) and a seeded generator."""

from __future__ import annotations

from typing import Any

from environments.single_turn import SingleTurnEnvironment, TaskFamily
from environments.sva.family import GeneratedFamily, Nl2SvaDataset
from environments.sva.loader import SPLITS, unavailable
from verifiers.base import Unavailable

_FAMILIES: tuple[TaskFamily[Any], ...] = (GeneratedFamily(), *(Nl2SvaDataset(s) for s in SPLITS))
ENVIRONMENTS = tuple(SingleTurnEnvironment(family) for family in _FAMILIES)
_WHY = unavailable()
UNAVAILABLE: dict[str, Unavailable] = (
    {} if _WHY is None else {f"sva/nl2sva-{split}": _WHY for split in SPLITS}
)
"""The FVEval sets when the configured data cannot be read (the registry lists them as
disabled; the generator is served either way)."""
