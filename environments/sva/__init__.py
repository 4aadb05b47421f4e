"""The ``sva`` family: NL2SVA (English sentence → SystemVerilog Assertion), scored by design-free
property equivalence (``verifiers.sva``): FVEval's NL2SVA-Human and -Machine sets (when
``ENVSERVER_NL2SVA_DATA`` names the folder holding them) and a seeded generator."""

from __future__ import annotations

import logging

from environments.single_turn import SingleTurnEnvironment
from environments.sva.family import GeneratedFamily, Nl2SvaDataset
from environments.sva.loader import DATA_ENV, data_dir


def _environments() -> tuple[SingleTurnEnvironment, ...]:
    envs = [SingleTurnEnvironment(GeneratedFamily())]
    try:
        folder = data_dir()
    except RuntimeError as exc:
        # The FVEval sets are data, not code: without them only the generator is served.
        logging.getLogger("envserver").warning("sva/nl2sva-* not served: %s", exc)
        return tuple(envs)
    if not folder.is_dir():
        logging.getLogger("envserver").warning(
            "sva/nl2sva-* not served: %s=%s is not a folder", DATA_ENV, folder
        )
        return tuple(envs)
    for split in ("human", "machine"):
        envs.append(SingleTurnEnvironment(Nl2SvaDataset(split)))
    return tuple(envs)


ENVIRONMENTS = _environments()
