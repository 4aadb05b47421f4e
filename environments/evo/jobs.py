"""The admission queue: a submission is a job in the store until its verdict is recorded, and a
bounded set of worker threads in each server process admits the jobs (L1-L5, every call into the
submitted code in the sandbox).

Why in the store rather than in the process that answered the submission: a server that stops or
is killed in the middle of an admission loses nothing. A worker holds its job with a lease that
it renews while it works (``EvoSettings.lease_s``); when the lease lapses, any worker of any
server on the store (the same one restarted, or another replica) claims the job and admits it
again from the start, at most ``store.MAX_ATTEMPTS`` times. A server that stops gracefully hands
its jobs back at once. The queue is bounded (``max_queued``: 429 beyond), and its state is in
``/readyz`` and ``/metrics`` (``environments.extension.JobQueue``).

The threads start only in server processes (the core calls ``start``; pool workers open the
resources too, and never start them), never at import.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Sequence

from sqlalchemy.exc import SQLAlchemyError

from environments.evo.admission import admit
from environments.evo.calibration import Rollout
from environments.evo.contract import code_digest
from environments.evo.settings import EvoSettings
from environments.evo.store import Job, Store, StoreConflict
from environments.extension import QueueState

log = logging.getLogger("envserver.evo")

QUEUE = "evo/admission"
"""The queue's name in ``/readyz`` and the ``queue`` label of its metrics."""
POLL_S = 1.0
"""How often an idle worker looks for a job another process queued (a submission to its own
process wakes it at once)."""
STOP_WAIT_S = 2.0
"""How long ``stop`` waits for the workers: idle ones end at once; one admitting is left to end
with the process, its job handed back."""


def _owner() -> str:
    """This process's name on the leases it holds: host, process id, and a random part (a
    restarted process may get the same id)."""
    return f"{socket.gethostname()[:64]}:{os.getpid()}:{secrets.token_hex(4)}"


class AdmissionQueue:
    """The ``JobQueue`` of admissions over ``store``, with ``settings.admission_workers``
    workers once started."""

    def __init__(self, store: Store, settings: EvoSettings) -> None:
        self._store = store
        self._settings = settings
        self.owner = _owner()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._held: set[str] = set()
        self._threads: list[threading.Thread] = []
        self._workers = 0  # started

    def submit(self, source: str, submitter: str, rollouts: Sequence[Rollout]) -> str:
        """Queue ``source``'s admission; the submission's id. Raises ``Overloaded`` when the
        queue is full."""
        submission = self._store.submit(
            source, code_digest(source), submitter, rollouts, max_queued=self._settings.max_queued
        )
        self._wake.set()
        return submission

    def start(self) -> None:
        """Start the workers, and the thread that renews their leases."""
        if self._threads:
            raise RuntimeError("the admission queue was started already")
        count = self._settings.admission_workers
        threads = [
            threading.Thread(target=self._work, name=f"evo-admission-{i}", daemon=True)
            for i in range(count)
        ]
        if threads:
            threads.append(threading.Thread(target=self._renew, name="evo-leases", daemon=True))
        for thread in threads:
            thread.start()
        self._threads, self._workers = threads, count

    def stop(self) -> None:
        """Stop taking jobs and hand back those held (another worker takes them at once)."""
        self._stopping.set()
        self._wake.set()
        deadline = time.monotonic() + STOP_WAIT_S
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        try:
            self._store.release(self.owner)
        except SQLAlchemyError as exc:  # the leases lapse instead
            log.warning("evo: could not hand back the admissions held here: %s", exc)

    def state(self) -> QueueState:
        """The store's queue, and this process's workers."""
        with self._lock:
            busy = len(self._held)
        workers, limit = self._workers, self._settings.max_queued
        try:
            counts = self._store.counts()
        except SQLAlchemyError as exc:
            problem = f"the store could not be read: {type(exc).__name__}"
            return QueueState(QUEUE, 0, 0, 0.0, limit, workers, busy, problem)
        return QueueState(
            QUEUE, counts.queued, counts.running, counts.oldest_s, limit, workers, busy
        )

    def _work(self) -> None:
        failing = False
        while not self._stopping.is_set():
            try:
                job = self._store.claim(self.owner, self._settings.lease_s)
            except SQLAlchemyError as exc:
                if not failing:  # once per outage, not once a second
                    log.error("evo: the admission queue cannot be read: %s", exc)
                failing = True
                self._stopping.wait(POLL_S)
                continue
            failing = False
            if job is None:
                self._wake.wait(POLL_S)
                self._wake.clear()
                continue
            self._admit(job)

    def _admit(self, job: Job) -> None:
        with self._lock:
            self._held.add(job.submission)
        started = time.monotonic()
        try:
            admission = admit(
                job.source, self._store.pool(), list(job.rollouts), settings=self._settings
            )
            recorded = self._store.record(job.submission, admission, self.owner)
            log.info(
                "evo: submission %s %s%s in %.1f s (%.1f s of sandbox CPU; claim %d)",
                job.submission, recorded.status,
                f" as {recorded.env}" if recorded.env else f" at {recorded.stage}",
                time.monotonic() - started, admission.cpu_s, job.attempts,
            )  # fmt: skip
        except StoreConflict as exc:  # another worker took it over: its verdict counts
            log.warning("evo: %s", exc)
        except SQLAlchemyError as exc:
            # The store failed (after its retries): the lease lapses and a worker takes the job
            # again, up to MAX_ATTEMPTS claims.
            log.error("evo: the verdict on submission %s was not stored: %s", job.submission, exc)
        except Exception:
            # A bug in the pipeline: reported, and the submission ends with status error.
            log.exception("evo: the admission of submission %s failed", job.submission)
            self._fail(job, "the admission failed inside the server (a bug, logged there)")
        finally:
            with self._lock:
                self._held.discard(job.submission)

    def _fail(self, job: Job, reason: str) -> None:
        try:
            self._store.fail(job.submission, self.owner, reason)
        except SQLAlchemyError as exc:
            log.error("evo: submission %s could not be marked failed: %s", job.submission, exc)

    def _renew(self) -> None:
        lease_s = self._settings.lease_s
        while not self._stopping.wait(lease_s / 3):
            with self._lock:
                held = set(self._held)
            try:
                self._store.renew(self.owner, held, lease_s)
            except SQLAlchemyError as exc:
                log.warning("evo: the admissions' leases could not be renewed: %s", exc)
