"""A pool of warm sandbox workers, one request in flight per worker, thread-safe.

Workers are separate processes started at pool start (never forks of the server). A request
takes an idle worker, sends one frame and waits for one frame with a deadline; a worker that
dies, hangs past the deadline or sends garbage is killed and replaced, and the request gets
``sandbox_error`` (infrastructure), never a verdict on the program.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import select
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from sandbox import frames

log = logging.getLogger("envserver.sandbox")

START_TIMEOUT_S = 30.0
UID_BASE = 200_000
UID_SPAN = 65_536
SLOTS_PER_POOL = 16
POOL_IDS = 2048  # 200000 + 2048 * 16 * 65536 stays below 2**32
# Only what a run may see of the server's environment: nothing secret travels to a worker.
WORKER_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OPENBLAS_NUM_THREADS": "1",
}


class WorkerLost(Exception):
    """The worker died, hung or spoke garbage; it has been killed."""


class Overloaded(Exception):
    """Every worker is busy and the wait queue is full."""


class Worker(Protocol):
    """One warm sandbox worker, whatever holds it (a local process, a container)."""

    isolation: str

    @property
    def exhausted(self) -> bool:
        """Whether the worker should be replaced after this request (recycling)."""
        ...

    def call(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request and wait for its reply; ``WorkerLost`` on any failure."""
        ...

    def close(self) -> None:
        """Stop the worker."""
        ...


class FrameChannel:
    """Frames over a writable and a readable descriptor, with deadlines on reads."""

    def __init__(self, write_fd: int, read_fd: int) -> None:
        self.write_fd, self.read_fd = write_fd, read_fd
        self.reader = frames.FrameReader()

    def send(self, message: dict[str, Any]) -> None:
        frames.write(self.write_fd, message)

    def receive(self, timeout_s: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        pending: list[Any] = []
        while not pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerLost(f"no reply within {timeout_s:.1f} s")
            ready, _, _ = select.select([self.read_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.read_fd, 1 << 16)
            if not chunk:
                raise WorkerLost("the worker closed its channel")
            pending = self.reader.feed(chunk)
        if len(pending) > 1 or not isinstance(pending[0], dict):
            raise WorkerLost("the worker sent an unexpected frame")
        return pending[0]


class ProcessWorker:
    """A local zygote process (``python -m sandbox.zygote``)."""

    def __init__(self, isolation: str, uid_base: int, workdir: str, scratch_mb: int) -> None:
        argv = [
            sys.executable, "-m", "sandbox.zygote", "--isolation", isolation,
            "--uid-base", str(uid_base), "--workdir", workdir, "--scratch-mb", str(scratch_mb),
        ]  # fmt: skip
        self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=WORKER_ENV,
            start_new_session=True,
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.isolation: str = isolation
        self.run_uid: int | None = None
        self.channel = FrameChannel(self.process.stdin.fileno(), self.process.stdout.fileno())
        try:
            hello = self.channel.receive(START_TIMEOUT_S)
        except (WorkerLost, frames.FrameError) as exc:
            self.close()
            raise OSError(f"the sandbox worker did not start: {exc}") from None
        if hello.get("status") != "ok":
            self.close()
            raise OSError(str(hello.get("detail") or "the sandbox worker did not start"))
        self.isolation = str(hello["isolation"])
        self.run_uid = hello.get("run_uid")

    @property
    def exhausted(self) -> bool:
        return False  # a local worker is never dirty: every run is a fresh child

    def call(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        try:
            self.channel.send(request)
            return self.channel.receive(timeout_s)
        except (OSError, frames.FrameError, WorkerLost) as exc:
            self.close()
            raise WorkerLost(str(exc)) from None

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, 9)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        if self.isolation == "weak" and self.run_uid is not None:
            # No PID namespace took the run down with the worker: kill what its uid still runs
            # (a daemon of a run that was going when the worker was lost), as that uid.
            for _ in range(2):
                subprocess.run(
                    ["/bin/kill", "-KILL", "-1"],
                    user=self.run_uid,
                    group=self.run_uid,
                    extra_groups=[],
                    env=WORKER_ENV,
                    capture_output=True,
                    check=False,
                    timeout=5,
                )
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


WorkerFactory = Callable[[int], Worker]
"""Starts the worker for slot ``i``."""


def local_factory(isolation: str, workdir: str, scratch_mb: int = 512) -> WorkerFactory:
    """Local zygotes with ``isolation`` ('full' or 'weak'), each with a host uid range of its
    own (randomised per pool so two pools on one host do not share uids)."""
    pool_id = secrets.randbelow(POOL_IDS)

    def start(slot: int) -> Worker:
        base = UID_BASE + (pool_id * SLOTS_PER_POOL + slot % SLOTS_PER_POOL) * UID_SPAN
        return ProcessWorker(isolation, base, str(Path(workdir, f"slot{slot}")), scratch_mb)

    return start


_Slot = tuple[int, Worker | None]


class _Waiter:
    """A caller waiting for a worker; ``slot`` None means the pool closed meanwhile."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.slot: _Slot | None = None


class SandboxPool:
    """``size`` workers from ``factory``; ``call`` waits for a free worker, first come first
    served (a freed worker goes to the oldest waiter, never to a caller that arrives later)."""

    def __init__(self, factory: WorkerFactory, size: int, *, max_waiting: int = 4096) -> None:
        self.factory, self.size, self.max_waiting = factory, size, max_waiting
        self._idle: deque[_Slot] = deque()  # FIFO: work spreads over every worker
        self._waiters: deque[_Waiter] = deque()
        self._lock = threading.Lock()
        self.busy = 0
        self.restarts = 0
        self.runs = 0
        self.closed = False
        with ThreadPoolExecutor(max_workers=size) as starter:
            workers = list(starter.map(self._start, range(size)))
        started = [w for w in workers if w is not None]
        if not started:
            raise OSError("no sandbox worker could start")
        self.isolation = started[0].isolation
        self._idle = deque(enumerate(workers))

    @property
    def waiting(self) -> int:
        """Callers waiting for a worker."""
        return len(self._waiters)

    def _start(self, slot: int) -> Worker | None:
        try:
            return self.factory(slot)
        except OSError as exc:
            log.error("sandbox worker %d did not start: %s", slot, exc)
            return None

    def _acquire(self) -> _Slot | None:
        with self._lock:
            if self.closed:
                return None
            if self._idle and not self._waiters:
                self.busy += 1
                return self._idle.popleft()
            if len(self._waiters) >= self.max_waiting:
                raise Overloaded(f"{len(self._waiters)} sandbox requests are waiting")
            waiter = _Waiter()
            self._waiters.append(waiter)
        waiter.ready.wait()
        return waiter.slot

    def _release(self, slot: _Slot) -> None:
        with self._lock:
            if self._waiters and not self.closed:
                waiter = self._waiters.popleft()  # stays busy: handed straight on
                waiter.slot = slot
                waiter.ready.set()
                return
            self.busy -= 1
            if not self.closed:
                self._idle.append(slot)
                return
        if slot[1] is not None:
            slot[1].close()

    def call(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Run one request on a free worker; a failed worker is replaced and the request gets a
        ``sandbox_error`` record."""
        acquired = self._acquire()
        if acquired is None:
            return {"status": "sandbox_error", "detail": "the sandbox is shutting down"}
        slot, worker = acquired
        try:
            if worker is None:  # a slot whose last start failed: try again now
                worker = self._start(slot)
                if worker is None:
                    return {"status": "sandbox_error", "detail": "the sandbox worker is down"}
            try:
                reply = worker.call(request, timeout_s)
            except WorkerLost as exc:
                log.warning("sandbox worker %d lost: %s; restarting it", slot, exc)
                self.restarts += 1
                worker = self._start(slot)
                return {"status": "sandbox_error", "detail": f"the sandbox worker failed: {exc}"}
            self.runs += 1
            if worker.exhausted:
                worker.close()
                worker = self._start(slot)
            return reply
        finally:
            self._release((slot, worker))

    def close(self) -> None:
        """Stop the idle workers now, busy ones when their request returns; waiting callers get
        ``sandbox_error``."""
        with self._lock:
            self.closed = True
            idle, self._idle = self._idle, deque()
            waiters, self._waiters = list(self._waiters), deque()
        for waiter in waiters:
            waiter.ready.set()
        for _, worker in idle:
            if worker is not None:
                worker.close()
