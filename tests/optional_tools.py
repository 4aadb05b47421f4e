"""Every optional tool a test can give a server on this machine, as the variables that configure
it: a stand-in ``tamarin-prover`` that replays recorded batch runs, and ``ALFWORLD_DATA`` with
games in ALFWorld's released layout (the release itself cannot be downloaded here). PostgreSQL
for the evo store comes from ``tests.postgres_support``."""

from __future__ import annotations

from pathlib import Path

from environments.alfworld.export import write_games
from tests.conftest import TAMARIN_BATCH
from tests.tamarin_fake import write_batch_prover
from verifiers.tamarin.proof import parse_proof
from verifiers.tamarin.script import find_proof_slot, insert_proof

TUTORIAL = (TAMARIN_BATCH / "Tutorial.spthy").read_text(encoding="utf-8")
LEMMA = "Client_auth"


def _complete_proof() -> str:
    """The complete Client_auth proof a real tamarin-prover 1.8.0 verified (recorded)."""
    theory = (TAMARIN_BATCH / "Tutorial_complete.spthy").read_text(encoding="utf-8")
    slot = find_proof_slot(theory, LEMMA)
    return theory[slot.start : slot.end]


PROOF = _complete_proof()
"""A proof script the stand-in prover answers with the recorded verdict ``verified``."""


def optional_tools(folder: Path) -> dict[str, str]:
    """Variables that configure the stand-in prover and ALFWorld's data under ``folder``."""
    games = folder / "alfworld"
    write_games(games, range(2), split="valid_unseen", difficulty="easy", version="0.3")
    recorded = insert_proof(TUTORIAL, LEMMA, parse_proof(PROOF))
    prover = write_batch_prover(
        folder, {recorded: TAMARIN_BATCH / "Tutorial_complete.check.stdout"}
    )
    return {"TAMARIN_PROVER": str(prover), "ALFWORLD_DATA": str(games)}
