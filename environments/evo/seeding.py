"""The ten seeds as pre-admitted records: the pipeline's verdict on each seed, made once by
``python -m environments.evo.seeding`` and shipped in ``seeds/admitted.json``; a store that has
never served a seed's name gets it from its record on first open, so a fresh server serves
``evo/<seed>`` at once.

A record holds for the exact source it was made from (its SHA-256): a seed edited since is not
served until its record is made again (``tests/test_evo_seeding.py`` fails until then).
Why records rather than admitting the seeds on first start: the verdict is the same pipeline's,
but a start costs one query instead of ten admissions (seconds of sandbox CPU on every
replica that starts at once), and replicas starting together race on one insert that the store's
unique keys settle, not on ten admissions in flight.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from environments.evo.admission import Admission, StageReport, admit
from environments.evo.contract import check_source, code_digest
from environments.evo.novelty import PoolEntry
from environments.evo.seeds import seed_sources
from environments.evo.settings import EvoSettings

RECORDS = Path(__file__).parent / "seeds" / "admitted.json"
SUBMITTER = "seed"
RECORD_SECRET = SecretStr("the evo seeds' records, made in the open")
"""The probe secret the seeds' records are made with. Published, unlike a server's: the seeds are
this project's own code, and their records must come out the same wherever they are made again
(the test that checks them does)."""
log = logging.getLogger("envserver.evo")


def _record(admission: Admission) -> dict[str, Any]:
    return {
        "digest": admission.digest,
        "normalised": admission.normalised,
        "fingerprint": list(admission.fingerprint),
        "reports": [
            {"stage": r.stage, "name": r.name, "passed": r.passed, "detail": r.detail,
             "facts": r.facts}
            for r in admission.reports
        ],
    }  # fmt: skip


def admit_seeds(settings: EvoSettings) -> dict[str, Admission]:
    """Each seed through the pipeline, against the seeds before it (in name order), with the
    probes of ``RECORD_SECRET``; raises RuntimeError when one is not admitted."""
    settings = settings.model_copy(update={"probe_secret": RECORD_SECRET})
    pool: list[PoolEntry] = []
    admitted = {}
    for stem, source in seed_sources().items():
        admission = admit(source, pool, settings=settings)
        if admission.outcome != "admitted":
            raise RuntimeError(f"seed {stem}: {admission.outcome} at {admission.stage}: "
                               f"{admission.reason}")  # fmt: skip
        admitted[stem] = admission
        pool.append(PoolEntry(stem, admission.normalised, admission.fingerprint))
    return admitted


def records(admitted: dict[str, Admission]) -> str:
    """The records file's text for ``admitted``."""
    return json.dumps({k: _record(v) for k, v in admitted.items()}, indent=1, sort_keys=True) + "\n"


def seed_admissions() -> list[tuple[str, Admission]]:
    """Each seed's source and its recorded admission, for the seeds whose record was made from
    their current source (a stale one is left out, with a warning)."""
    shipped: dict[str, dict[str, Any]] = json.loads(RECORDS.read_text())
    found = []
    for stem, source in seed_sources().items():
        record = shipped.get(stem)
        if record is None or record["digest"] != code_digest(source):
            log.warning("evo seed %s is not served: its record in %s is missing or stale "
                        "(python -m environments.evo.seeding)", stem, RECORDS.name)  # fmt: skip
            continue
        reports = tuple(StageReport(**report) for report in record["reports"])
        admission = Admission(
            "admitted", reports, check_source(source), record["digest"], record["normalised"],
            tuple(record["fingerprint"]),
        )  # fmt: skip
        found.append((source, admission))
    return found


def main() -> None:
    """Admit the seeds in this machine's sandbox and write their records."""
    logging.basicConfig(level=logging.INFO)
    # The variables' reviewer, solver and band; admission opens no store, so no data directory.
    settings = EvoSettings(data_dir=Path())
    RECORDS.write_text(records(admit_seeds(settings)))
    print(f"wrote {RECORDS}")


if __name__ == "__main__":
    main()
