"""EvoEnv's store on SQLite and on a real PostgreSQL server: content addresses, versions,
provenance, retire and restore."""

from __future__ import annotations

from pathlib import Path

import pytest

from environments.evo.admission import admit
from environments.evo.contract import code_digest
from environments.evo.seeds import seed_sources
from environments.evo.store import Store, Submission
from tests.evo_support import SETTINGS

SEEDS = seed_sources()


def _admitted(store: Store, source: str, submitter: str = "tester") -> Submission:
    """``source`` submitted, claimed from the queue, admitted and its verdict recorded."""
    submission = store.submit(source, code_digest(source), submitter, max_queued=8)
    assert store.submission(submission).status == "pending"
    job = store.claim("tester-worker", lease_s=60)
    assert job is not None and (job.submission, job.source) == (submission, source)
    admission = admit(source, store.pool(), list(job.rollouts), settings=SETTINGS)
    return store.record(submission, admission, "tester-worker")


def _exercise(store: Store) -> None:
    source = SEEDS["knapsack"]
    recorded = _admitted(store, source)
    assert (recorded.status, recorded.env, recorded.submitter) == (
        "admitted", "evo/zero_one_knapsack@1", "tester",
    )  # fmt: skip
    assert [r["stage"] for r in recorded.reports] == ["L1", "L2", "L3", "L4", "L5"]
    (env,) = store.envs()
    assert (env.name, env.version, env.source, env.digest) == (
        "zero_one_knapsack", 1, source, code_digest(source),
    )  # fmt: skip
    # The same code again is a duplicate of itself; new code under the name is version 2.
    again = admit(source, store.pool(), settings=SETTINGS)
    assert again.stage == "L5"
    changed = source.replace("4 + 2 * difficulty", "5 + 2 * difficulty")
    assert _admitted(store, changed).env == "evo/zero_one_knapsack@2"
    versions = store.envs(include_retired=True)
    assert [(v.version, v.retired) for v in versions] == [(1, True), (2, False)]
    assert store.set_retired("zero_one_knapsack", True).retired
    assert store.envs() == []
    assert not store.set_retired("zero_one_knapsack", False).retired
    with pytest.raises(KeyError):
        store.set_retired("never_admitted", True)
    with pytest.raises(KeyError):
        store.submission("no-such-id")


def test_the_sqlite_store_keeps_versions_and_provenance(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'evo.sqlite'}"
    _exercise(Store(url))
    # Reopened (a server restart): everything is still there.
    assert [env.version for env in Store(url).envs()] == [2]


def test_the_postgresql_store_keeps_versions_and_provenance(postgres_url: str) -> None:
    _exercise(Store(postgres_url))
    assert [env.version for env in Store(postgres_url).envs()] == [2]
