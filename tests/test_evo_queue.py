"""EvoEnv's admission queue: submissions are jobs in the store, claimed with a lease, renewed
while admitted, taken again once a lease lapses (a killed server), handed back by a server that
stops, given up after too many interruptions, bounded (429), and recorded only by the worker
holding them; on SQLite and on a real PostgreSQL server. Then the workers in process, and the
store's URL logged without its password."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy.exc
from sqlalchemy import make_url
from sqlalchemy.orm import Session

from environments.evo import jobs
from environments.evo.admission import Admission, StageReport
from environments.evo.calibration import Rollout
from environments.evo.construct import expert_source
from environments.evo.contract import check_source, code_digest
from environments.evo.jobs import AdmissionQueue
from environments.evo.store import (
    MAX_ATTEMPTS,
    RETRY_AFTER_S,
    Store,
    StoreConflict,
    SubmissionRow,
    open_store,
)
from sandbox.pool import Overloaded
from tests.evo_support import SETTINGS
from tests.postgres_support import fresh_database

VERDICT = Admission(
    "rejected", (StageReport("L1", "execution", False, "static contract: no score"),)
)
"""A verdict to record: what the store keeps does not depend on how it was reached."""


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An empty store (no seeds) on SQLite, then on a fresh PostgreSQL database."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'evo.sqlite'}"
    else:
        url = fresh_database(request.getfixturevalue("postgres_url"))
    opened = Store(url)
    yield opened
    opened.close()


def submit(store: Store, seed: int, max_queued: int = 100) -> str:
    source = expert_source(seed)
    return store.submit(
        source, code_digest(source), "tester", [Rollout(1, 1, "<answer>3</answer>")],
        max_queued=max_queued,
    )  # fmt: skip


def test_a_claim_holds_the_oldest_submission_until_its_lease_lapses(store: Store) -> None:
    first, second = submit(store, 1), submit(store, 2)
    assert (store.counts().queued, store.counts().running) == (2, 0)
    job = store.claim("a", lease_s=0.5)
    assert job is not None
    assert (job.submission, job.source, job.attempts) == (first, expert_source(1), 1)
    assert job.rollouts == (Rollout(1, 1, "<answer>3</answer>"),)
    other = store.claim("b", lease_s=0.5)
    assert other is not None and other.submission == second
    assert store.claim("c", lease_s=0.5) is None  # both held
    counts = store.counts()
    assert (counts.queued, counts.running) == (0, 2) and counts.oldest_s > 0
    store.renew("a", {first}, lease_s=30)  # a works on; b's lease lapses
    time.sleep(0.7)
    taken = store.claim("c", lease_s=30)
    assert taken is not None and (taken.submission, taken.attempts) == (second, 2)
    assert store.claim("d", lease_s=30) is None
    assert store.submission(second).status == "pending"


def test_a_verdict_is_recorded_only_by_the_worker_holding_the_lease(store: Store) -> None:
    submission = submit(store, 3)
    assert store.claim("a", lease_s=0.2) is not None
    time.sleep(0.4)
    assert store.claim("b", lease_s=30) is not None  # a's server stopped answering
    with pytest.raises(StoreConflict, match="no longer holds"):
        store.record(submission, VERDICT, "a")
    assert store.submission(submission).status == "pending"
    recorded = store.record(submission, VERDICT, "b")
    assert (recorded.status, recorded.stage, recorded.reason) == (
        "rejected", "L1", "static contract: no score",
    )  # fmt: skip
    assert store.counts() == type(store.counts())(0, 0, 0.0)  # the job ended with its verdict
    with pytest.raises(StoreConflict):
        store.record(submission, VERDICT, "b")  # twice: the job is gone


def test_a_submission_interrupted_too_often_is_given_up_with_the_reason(store: Store) -> None:
    submission = submit(store, 4)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        job = store.claim(f"worker-{attempt}", lease_s=0.1)
        assert job is not None and job.attempts == attempt
        time.sleep(0.2)  # killed: the lease lapses
    assert store.claim("last", lease_s=30) is None
    given_up = store.submission(submission)
    assert given_up.status == "error"
    assert f"interrupted {MAX_ATTEMPTS} times" in given_up.reason
    assert store.counts().queued == 0


def test_a_stopping_server_hands_its_submissions_back_uncounted(store: Store) -> None:
    submission = submit(store, 5)
    assert store.claim("stopping", lease_s=300) is not None
    store.release("stopping")
    job = store.claim("other", lease_s=300)  # at once, not 300 s later
    assert job is not None and (job.submission, job.attempts) == (submission, 1)


def test_the_queue_is_bounded_with_a_retry_after(store: Store) -> None:
    first = submit(store, 6, max_queued=2)
    submit(store, 7, max_queued=2)
    assert store.claim("a", lease_s=30) is not None  # running counts too
    with pytest.raises(Overloaded, match="ENVSERVER_EVO_MAX_QUEUED=2") as refused:
        submit(store, 8, max_queued=2)
    assert refused.value.retry_after_s == RETRY_AFTER_S
    store.record(first, VERDICT, "a")
    submit(store, 8, max_queued=2)  # a place freed


def test_workers_claiming_at_once_take_each_submission_once(store: Store) -> None:
    submitted = {submit(store, seed) for seed in range(12)}
    taken: list[str] = []
    errors: list[BaseException] = []

    def work(owner: str) -> None:
        try:
            while (job := store.claim(owner, lease_s=60)) is not None:
                taken.append(job.submission)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert Counter(taken) == Counter(submitted)


def test_two_workers_recording_one_name_at_once_make_two_versions(store: Store) -> None:
    # Two codes under one name, admitted on two replicas and recorded at the same moment: each
    # is a version (the store's write lock orders them), neither verdict is lost.
    sources = [expert_source(10), expert_source(10).replace("* difficulty}", "* difficulty + 1}")]
    assert sources[0] != sources[1]
    submissions = [store.submit(s, code_digest(s), "tester", max_queued=9) for s in sources]
    owners: list[tuple[str, str, str]] = []
    for _ in sources:
        job = store.claim(f"replica-{len(owners)}", lease_s=60)
        assert job is not None
        owners.append((job.submission, f"replica-{len(owners)}", job.source))
    start = threading.Barrier(len(owners))
    recorded: list[str | None] = []

    def record(submission: str, owner: str, source: str) -> None:
        verdict = Admission(
            "admitted", VERDICT.reports, check_source(source), code_digest(source), "n", ("f",)
        )
        start.wait()
        recorded.append(store.record(submission, verdict, owner).env)

    threads = [threading.Thread(target=record, args=owner) for owner in owners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(map(str, recorded)) == ["evo/recurrence_10@1", "evo/recurrence_10@2"]
    assert {store.submission(s).status for s in submissions} == {"admitted"}
    versions = store.envs(include_retired=True)
    assert [(v.version, v.retired) for v in versions] == [(1, True), (2, False)]


def test_a_submission_an_older_server_left_pending_is_given_up_on_open(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'evo.sqlite'}"
    queued = submit(Store(url), 9)
    store = Store(url)
    with Session(store.engine) as session, session.begin():
        # What an older server wrote: a pending submission, admitted in its memory only.
        row = session.get(SubmissionRow, queued)
        assert row is not None
        session.add(
            SubmissionRow(
                id="older", digest=row.digest, submitter="x", submitted_at=row.submitted_at,
                status="pending", reason="", reports=[],
            )
        )  # fmt: skip
    reopened = Store(url)
    lost = reopened.submission("older")
    assert lost.status == "error" and "lost in a restart" in lost.reason
    assert reopened.submission(queued).status == "pending"  # a job: it will be admitted


def test_the_store_url_is_logged_without_its_password(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # The test server trusts every connection, so the password is never checked, only shown.
    url = make_url(fresh_database(postgres_url)).set(password="hunter2-not-logged")
    caplog.set_level(logging.INFO, logger="envserver.evo")
    store = open_store(url.render_as_string(hide_password=False))
    store.close()
    (planted,) = [r.getMessage() for r in caplog.records if "serves the seeds" in r.getMessage()]
    assert "postgresql+psycopg://evo:***@127.0.0.1:" in planted
    assert not any("hunter2" in record.getMessage() for record in caplog.records)


def _wait(store: Store, submission: str, timeout_s: float = 120) -> str:
    deadline = time.monotonic() + timeout_s
    while (status := store.submission(submission).status) == "pending":
        assert time.monotonic() < deadline, f"{submission} still pending"
        time.sleep(0.05)
    return status


def test_the_workers_admit_submissions_and_report_the_queue(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'evo.sqlite'}")
    settings = SETTINGS.model_copy(update={"admission_workers": 1, "lease_s": 2.0})
    queue = AdmissionQueue(store, settings)
    assert queue.state().workers == 0  # opened, not started: a pool worker's
    queue.start()
    try:
        new = queue.submit(expert_source(51), "alice", [])
        leaky = expert_source(52).replace(
            '")? Reply with "', '") = " + str(_term(instance)) + "? Reply with "'
        )
        rejected = queue.submit(leaky, "bob", [])
        seen = queue.state()
        assert (seen.name, seen.limit, seen.workers) == ("evo/admission", 64, 1)
        assert seen.queued + seen.running == 2 and seen.running <= 1, seen
        assert _wait(store, new) == "admitted"
        assert store.submission(new).env == "evo/recurrence_51@1"
        assert _wait(store, rejected) == "rejected"
        assert store.submission(rejected).stage == "L3"
        after = queue.state()
        assert (after.queued, after.running, after.busy, after.oldest_s) == (0, 0, 0, 0.0)
    finally:
        queue.stop()
    store.close()


def test_a_store_that_times_out_or_drops_its_connection_stops_no_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full connection pool (``TimeoutError``) and a closed connection (``InterfaceError``)
    are not ``DatabaseError``s: the queue reports them as a problem and its workers go on."""
    store = Store(f"sqlite:///{tmp_path / 'evo.sqlite'}")
    failures = [
        sqlalchemy.exc.TimeoutError("QueuePool limit reached"),
        sqlalchemy.exc.InterfaceError("SELECT", {}, Exception("connection already closed")),
    ]
    claim, counts = store.claim, store.counts

    def failing_claim(*args: object, **kwargs: object) -> object:
        if failures:
            raise failures.pop(0)
        return claim(*args, **kwargs)  # type: ignore[arg-type]

    def failing_counts() -> object:
        raise sqlalchemy.exc.TimeoutError("QueuePool limit reached")

    monkeypatch.setattr(store, "claim", failing_claim)
    monkeypatch.setattr(store, "counts", failing_counts)
    queue = AdmissionQueue(store, SETTINGS.model_copy(update={"admission_workers": 1}))
    queue.start()
    try:
        submission = queue.submit(expert_source(54), "dave", [])
        assert _wait(store, submission) == "admitted"
        assert not failures, "the worker claimed through both failures"
        assert "TimeoutError" in queue.state().problem
    finally:
        queue.stop()
    monkeypatch.setattr(store, "counts", counts)
    store.close()


def test_a_bug_in_the_pipeline_ends_the_submission_with_status_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object, **kwargs: object) -> Admission:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(jobs, "admit", broken)
    store = Store(f"sqlite:///{tmp_path / 'evo.sqlite'}")
    queue = AdmissionQueue(store, SETTINGS)
    queue.start()
    try:
        submission = queue.submit(expert_source(53), "carol", [])
        assert _wait(store, submission) == "error"
    finally:
        queue.stop()
    assert "failed inside the server" in store.submission(submission).reason
    assert any("ZeroDivisionError" in (r.exc_text or "") for r in caplog.records)
    assert store.counts().queued == 0
