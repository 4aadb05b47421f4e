"""The ten seeds as pre-admitted records: the shipped records are the pipeline's verdict on the
seeds as they are now; a fresh store gets them once, even from processes that open it at the
same moment (SQLite and a real PostgreSQL server); a retired seed stays retired; a seed whose
source changed since its record is not served."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from environments.evo import seeding
from environments.evo.contract import check_source
from environments.evo.seeding import SUBMITTER, admit_seeds, records, seed_admissions
from environments.evo.seeds import seed_sources
from environments.evo.store import Store, SubmissionRow
from tests.evo_support import SETTINGS
from tests.server import ROOT

NAMES = sorted(check_source(source).name for source in seed_sources().values())
OPEN_AT = """
import sys, time
from environments.evo.store import open_store
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
print(len(open_store(sys.argv[1]).envs()))
"""


def test_the_shipped_records_are_the_pipelines_verdict_on_the_seeds_as_they_are() -> None:
    # Fails when a seed or the pipeline changed: python -m environments.evo.seeding
    assert records(admit_seeds(SETTINGS)) == seeding.RECORDS.read_text()


def _seed_submissions(store: Store) -> int:
    with Session(store.engine) as session:
        query = select(func.count()).where(SubmissionRow.submitter == SUBMITTER)
        return int(session.scalar(query) or 0)


def _open_at_once(url: str, processes: int) -> None:
    start = time.time() + 3.0  # every process imported and waiting by then
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_AT, url, str(start)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        assert out.strip() == "10"


def test_processes_opening_a_fresh_sqlite_store_at_once_plant_the_seeds_once(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'evo.sqlite'}"
    _open_at_once(url, 4)
    store = Store(url)
    assert sorted(env.name for env in store.envs()) == NAMES
    assert _seed_submissions(store) == 10
    # Opened again (a restart): nothing planted twice, and a retired seed stays retired.
    store.set_retired("string_rewriting", True)
    assert store.plant(seed_admissions(), SUBMITTER) == []
    assert "string_rewriting" not in {env.name for env in store.envs()}
    assert _seed_submissions(store) == 10


def test_processes_opening_a_fresh_postgresql_store_at_once_plant_the_seeds_once(
    postgres_url: str,
) -> None:
    # The schema is created by all of them at once too (CREATE TABLE races on PostgreSQL).
    _open_at_once(postgres_url, 4)
    store = Store(postgres_url)
    assert sorted(env.name for env in store.envs()) == NAMES
    assert _seed_submissions(store) == 10


def test_a_seed_whose_source_changed_since_its_record_is_not_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = json.loads(seeding.RECORDS.read_text())
    shipped["lis"]["digest"] = "0" * 64  # the record of another source
    stale = tmp_path / "admitted.json"
    stale.write_text(json.dumps(shipped))
    monkeypatch.setattr(seeding, "RECORDS", stale)
    served = {admission.metadata.name for _, admission in seed_admissions() if admission.metadata}
    assert served == set(NAMES) - {"longest_increasing_subsequence"}
