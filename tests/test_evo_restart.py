"""A server killed (SIGKILL) in the middle of an admission loses no submission: a restart on the
same store admits it, and so does another replica sharing a PostgreSQL store, once the dead
server's lease lapses. Real server processes; on the way, the queue as /readyz and /metrics show
it, and a full queue's 429."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
from sqlalchemy.orm import Session

from environments.evo.construct import expert_source
from environments.evo.store import JobRow, Store
from envserver.testing import LiveServer
from tests.conftest import make_server
from tests.evo_support import burning
from tests.postgres_support import fresh_database

SLOW = burning(expert_source(61), 50_000)
"""A legal submission whose scores cost about 2 ms each: an admission of several seconds, long
enough to be killed in the middle of."""
LEASE = {"ENVSERVER_EVO_LEASE_S": "3"}
T = TypeVar("T")


def eventually(probe: Callable[[], T | None], what: str, timeout_s: float = 120) -> T:
    """``probe``'s first answer that is not None (polled every 50 ms)."""
    deadline = time.monotonic() + timeout_s
    while (found := probe()) is None:
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return found


def admissions(http: httpx.Client) -> dict[str, Any]:
    """The admission queue as ``/readyz`` shows it."""
    (queue,) = [q for q in http.get("/readyz").json()["queues"] if q["name"] == "evo/admission"]
    return dict(queue)


def verdict(http: httpx.Client, submission: str) -> dict[str, Any]:
    """The submission once it is no longer pending."""

    def done() -> dict[str, Any] | None:
        found: dict[str, Any] = http.get(f"/v1/evo/submissions/{submission}").json()
        return None if found["status"] == "pending" else found

    return eventually(done, f"the verdict on {submission}")


def submit(http: httpx.Client, source: str) -> httpx.Response:
    return http.post("/v1/evo/submissions", json={"source": source, "submitter": "tester"})


def kill(server: LiveServer) -> None:
    assert server.process is not None
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait()


def test_a_server_killed_mid_admission_admits_it_after_a_restart(tmp_path: Path) -> None:
    env = {**LEASE, "ENVSERVER_EVO_MAX_QUEUED": "2"}
    with (
        make_server(tmp_path, **env) as server,
        httpx.Client(base_url=server.base_url, timeout=60) as http,
    ):
        slow = submit(http, SLOW).json()["id"]
        eventually(lambda: admissions(http)["busy"] or None, "the admission to start")
        queued = submit(http, expert_source(62))
        assert queued.status_code == 202, queued.text
        full = submit(http, expert_source(63))
        assert full.status_code == 429, full.text
        assert full.headers["content-type"] == "application/problem+json"
        assert full.headers["retry-after"] == "5"
        assert full.json()["kind"] == "overloaded"
        assert "ENVSERVER_EVO_MAX_QUEUED=2" in full.json()["detail"]
        queue = admissions(http)
        assert {k: queue[k] for k in ("queued", "running", "limit", "workers", "busy")} == {
            "queued": 1, "running": 1, "limit": 2, "workers": 1, "busy": 1,
        }  # fmt: skip
        assert queue["oldest_s"] > 0 and not queue["problem"]
        metrics = http.get("/metrics").text
        for state in ("queued", "running"):
            assert f'envserver_queue_jobs{{queue="evo/admission",state="{state}"}} 1.0' in metrics
        assert 'envserver_queue_limit{queue="evo/admission"} 2.0' in metrics
        kill(server)
    # Killed in the middle: the store on disk still holds it, claimed once, not admitted.
    store = Store(f"sqlite:///{tmp_path / 'data' / 'evo.sqlite'}")
    with Session(store.engine) as session:
        job = session.get(JobRow, slow)
        assert job is not None and job.attempts == 1 and job.owner is not None
    assert store.submission(slow).status == "pending"
    store.close()
    with (
        make_server(tmp_path, **env) as server,
        httpx.Client(base_url=server.base_url, timeout=60) as http,
    ):
        finished = verdict(http, slow)
        assert (finished["status"], finished["env"]) == ("admitted", "evo/recurrence_61@1")
        assert [r["stage"] for r in finished["reports"]] == ["L1", "L2", "L3", "L4", "L5"]
        assert verdict(http, queued.json()["id"])["status"] == "admitted"
        assert "evo/recurrence_61" in {e["id"] for e in http.get("/v1/evo/envs").json()}
        queue = admissions(http)
        assert (queue["queued"], queue["running"], queue["busy"]) == (0, 0, 0)


def test_a_replica_admits_the_submission_of_a_replica_killed_mid_way(
    tmp_path: Path, postgres_url: str
) -> None:
    env = {
        **LEASE,
        "ENVSERVER_EVO_STORE": fresh_database(postgres_url),
        "ENVSERVER_SECRET": "s" * 40,
        "ENVSERVER_EVO_PROBE_SECRET": "the replicas' shared probe secret",
    }
    with (
        make_server(tmp_path / "a", **env) as a,
        make_server(tmp_path / "b", **env) as b,
        httpx.Client(base_url=a.base_url, timeout=60) as first,
        httpx.Client(base_url=b.base_url, timeout=60) as second,
    ):
        slow = submit(first, SLOW).json()["id"]
        replicas = [(a, first, second), (b, second, first)]
        # Whichever replica's worker took it (the other's polls the store too).
        doomed, _, survivor = eventually(
            lambda: next((r for r in replicas if admissions(r[1])["busy"]), None),
            "a replica to start the admission",
        )
        kill(doomed)
        assert survivor.get(f"/v1/evo/submissions/{slow}").json()["status"] == "pending"
        finished = verdict(survivor, slow)
        assert (finished["status"], finished["env"]) == ("admitted", "evo/recurrence_61@1")
        assert "evo/recurrence_61" in {e["id"] for e in survivor.get("/v1/envs").json()["envs"]}
        # The worker records the verdict, then counts itself free: a read between saw busy 1.
        queue = eventually(
            lambda: q if (q := admissions(survivor))["busy"] == 0 else None,
            "the admitting worker to come free",
        )
        assert (queue["queued"], queue["running"], queue["busy"]) == (0, 0, 0)
