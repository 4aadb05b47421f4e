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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sandbox import cgroups, frames

log = logging.getLogger("envserver.sandbox")

START_TIMEOUT_S = 30.0
CHECK_S = 0.5  # how often idle workers are checked for life
RETRY_S = 5.0  # between attempts to start a slot whose worker could not start
UID_BASE = 200_000
UID_SPAN = 65_536
SLOTS_PER_POOL = 16
POOL_IDS = 2048  # 200000 + 2048 * 16 * 65536 stays below 2**32


def slot_index(pool_id: int, slot: int) -> int:
    """Where a pool's slot lies among every pool's (a pool's 16 slots at its random place among
    ``POOL_IDS``): each backend gives each slot its own uids from it."""
    return pool_id * SLOTS_PER_POOL + slot % SLOTS_PER_POOL


# Only what a run may see of the server's environment: nothing secret travels to a worker.
WORKER_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OPENBLAS_NUM_THREADS": "1",
}


class WorkerLost(Exception):
    """The worker died, hung or spoke garbage; it has been killed. ``delivered`` says whether
    the request reached it (if not, it may safely go to another worker)."""

    def __init__(self, message: str, *, delivered: bool = True) -> None:
        super().__init__(message)
        self.delivered = delivered


class Overloaded(Exception):
    """A bounded queue is full (the sandbox's workers, the server's pool): the caller should
    retry after ``retry_after_s`` seconds. The one such exception of the project: the server
    answers it with 429 and ``Retry-After``."""

    def __init__(self, message: str, retry_after_s: int = 1) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class Worker(Protocol):
    """One warm sandbox worker, whatever holds it (a local process, a container)."""

    isolation: str
    memory_cap: str  # "cgroup", "container" or "address-space" (per process only)

    @property
    def exhausted(self) -> bool:
        """Whether the worker should be replaced after this request (recycling)."""
        ...

    @property
    def alive(self) -> bool:
        """Whether the worker still runs (cheap; a dead idle worker is replaced unasked)."""
        ...

    def call(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request and wait for its reply; ``WorkerLost`` on any failure."""
        ...

    def close(self) -> None:
        """Stop the worker."""
        ...


class WorkerFactory(Protocol):
    """Starts the worker for a slot; ``close`` releases what the factory holds for the pool."""

    def __call__(self, slot: int) -> Worker:
        """The worker for ``slot`` (``OSError`` when it cannot start)."""
        ...

    def close(self) -> None:
        """After the pool's last worker has stopped."""
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

    def __init__(
        self,
        isolation: str,
        uid_base: int,
        workdir: str,
        scratch_mb: int,
        *,
        cgroup: str = "",
        probe_packages: bool = False,
        python: str = "",
    ) -> None:
        argv = [
            python or sys.executable, "-m", "sandbox.zygote", "--isolation", isolation,
            "--uid-base", str(uid_base), "--workdir", workdir, "--scratch-mb", str(scratch_mb),
            "--cgroup", cgroup,
        ]  # fmt: skip
        if probe_packages:
            argv.append("--probe-packages")
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
        self.memory_cap = "address-space"
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
        self.memory_cap = str(hello.get("memory_cap", "address-space"))
        self.landlock = bool(hello.get("landlock"))
        self.run_uid = hello.get("run_uid")

    @property
    def exhausted(self) -> bool:
        return False  # a local worker is never dirty: every run is a fresh child

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def call(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        try:
            self.channel.send(request)
        except OSError as exc:  # its end of the pipe is gone: the request never got there
            self.close()
            raise WorkerLost(str(exc), delivered=False) from None
        try:
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


class LocalFactory:
    """Local zygotes with ``isolation`` ('full' or 'weak'), each with a host uid range of its
    own (randomised per pool so two pools on one host do not share uids) and, where the machine
    allows it, a memory cgroup per slot (under ``cgroup_parent``, default: the server's own).
    ``python`` is the interpreter the workers run (default: this one)."""

    def __init__(
        self,
        isolation: str,
        workdir: str,
        scratch_mb: int = 512,
        *,
        cgroup_parent: str = "",
        python: str = "",
    ) -> None:
        self.isolation, self.workdir, self.scratch_mb = isolation, workdir, scratch_mb
        self.python = python
        self.pool_id = secrets.randbelow(POOL_IDS)
        self.groups, reason = cgroups.Groups.open(cgroup_parent)
        if self.groups is None:
            log.warning(
                "sandbox: no memory cgroup (%s); a run's memory is capped per process, and its "
                "process count is lowered so that the two together stay within its memory",
                reason,
            )

    def __call__(self, slot: int) -> Worker:
        base = UID_BASE + slot_index(self.pool_id, slot) * UID_SPAN
        return ProcessWorker(
            self.isolation,
            base,
            str(Path(self.workdir, f"slot{slot}")),
            self.scratch_mb,
            cgroup=self.groups.slot(slot) if self.groups is not None else "",
            probe_packages=slot == 0,  # the slow part of the probe: once per pool is enough
            python=self.python,
        )

    def close(self) -> None:
        if self.groups is not None:
            self.groups.close()


def local_factory(isolation: str, workdir: str, scratch_mb: int = 512) -> LocalFactory:
    """``LocalFactory`` with the default cgroup parent."""
    return LocalFactory(isolation, workdir, scratch_mb)


@dataclass(frozen=True)
class PoolHealth:
    """What the pool can do now: ``healthy`` when it is open and at least one worker runs."""

    size: int
    alive: int
    busy: int
    waiting: int
    restarts: int
    healthy: bool


class _Waiter:
    """A caller waiting for a worker; ``slot`` None means the pool closed meanwhile."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.slot: int | None = None


class SandboxPool:
    """``size`` workers from ``factory``; ``call`` waits for a free worker, first come first
    served (a freed worker goes to the oldest waiter, never to a caller that arrives later).
    A watcher thread replaces idle workers that died (and retries slots whose worker could not
    start) every ``check_s`` seconds, so a lost worker comes back without a request noticing."""

    def __init__(
        self,
        factory: WorkerFactory,
        size: int,
        *,
        max_waiting: int = 4096,
        check_s: float = CHECK_S,
    ) -> None:
        self.factory, self.size, self.max_waiting = factory, size, max_waiting
        self._idle: deque[int] = deque()  # FIFO: work spreads over every worker
        self._waiters: deque[_Waiter] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.busy = 0
        self.restarts = 0
        self.runs = 0
        self.closed = False
        self._last_error = ""
        with ThreadPoolExecutor(max_workers=size) as starter:
            self._workers: list[Worker | None] = list(starter.map(self._start, range(size)))
        started = [w for w in self._workers if w is not None]
        if not started:
            factory.close()
            raise OSError(f"no sandbox worker could start: {self._last_error}")
        self.isolation = started[0].isolation
        self.memory_cap = started[0].memory_cap
        self._idle = deque(range(size))
        self._retry_at = [0.0] * size
        self._watcher = threading.Thread(
            target=self._watch, args=(check_s,), name="sandbox-watch", daemon=True
        )
        self._watcher.start()

    @property
    def waiting(self) -> int:
        """Callers waiting for a worker."""
        return len(self._waiters)

    def workers(self) -> list[Worker | None]:
        """The current worker of each slot (None: down)."""
        return list(self._workers)

    def health(self) -> PoolHealth:
        """Workers alive now and whether the pool can serve (for ``/healthz`` and metrics)."""
        alive = sum(1 for w in self._workers if w is not None and w.alive)
        return PoolHealth(
            size=self.size,
            alive=alive,
            busy=self.busy,
            waiting=self.waiting,
            restarts=self.restarts,
            healthy=not self.closed and alive > 0,
        )

    def _start(self, slot: int) -> Worker | None:
        try:
            return self.factory(slot)
        except OSError as exc:
            log.error("sandbox worker %d did not start: %s", slot, exc)
            self._last_error = str(exc)
            return None

    def _replace(self, slot: int, *, failed: bool = True) -> Worker | None:
        """A fresh worker in ``slot`` (held by the caller), after closing the old one; a
        ``failed`` one counts as a restart (recycling does not)."""
        old = self._workers[slot]
        if old is not None:
            old.close()
            self.restarts += failed
        self._workers[slot] = worker = self._start(slot)
        return worker

    def _broken(self, slot: int, now: float) -> bool:
        worker = self._workers[slot]
        if worker is None:
            return now >= self._retry_at[slot]
        return not worker.alive

    def _acquire(self) -> int | None:
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

    def _release(self, slot: int) -> None:
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
        worker = self._workers[slot]
        if worker is not None:
            worker.close()

    def call(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Run one request on a free worker; a failed worker is replaced and the request gets a
        ``sandbox_error`` record (unless it never reached the worker: then it is sent again)."""
        slot = self._acquire()
        if slot is None:
            return {"status": "sandbox_error", "detail": "the sandbox is shutting down"}
        try:
            for attempt in (1, 2):
                worker = self._workers[slot]
                if worker is None or not worker.alive:  # died while idle, or never started
                    worker = self._replace(slot)
                    if worker is None:
                        return {"status": "sandbox_error", "detail": "the sandbox worker is down"}
                try:
                    reply = worker.call(request, timeout_s)
                except WorkerLost as exc:
                    log.warning("sandbox worker %d lost: %s; restarting it", slot, exc)
                    self._replace(slot)
                    if not exc.delivered and attempt == 1:
                        continue
                    detail = f"the sandbox worker failed: {exc}"
                    return {"status": "sandbox_error", "detail": detail}
                self.runs += 1
                if worker.exhausted:
                    self._replace(slot, failed=False)
                return reply
            raise AssertionError("unreachable")
        finally:
            self._release(slot)

    def _watch(self, check_s: float) -> None:
        while not self._closing.wait(check_s):
            self._heal()

    def _heal(self) -> None:
        """Replace idle workers that died; retry slots that are down (at most every
        ``RETRY_S`` seconds each)."""
        now = time.monotonic()
        with self._lock:
            if self.closed:
                return
            broken = [slot for slot in self._idle if self._broken(slot, now)]
            for slot in broken:
                self._idle.remove(slot)
            self.busy += len(broken)
        for slot in broken:
            try:
                if self._workers[slot] is not None:
                    log.warning("sandbox worker %d died while idle; restarting it", slot)
                if self._replace(slot) is None:
                    self._retry_at[slot] = time.monotonic() + RETRY_S
            finally:
                self._release(slot)

    def close(self) -> None:
        """Stop the idle workers now, busy ones when their request returns; waiting callers get
        ``sandbox_error``."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            idle, self._idle = list(self._idle), deque()
            waiters, self._waiters = list(self._waiters), deque()
        self._closing.set()
        for waiter in waiters:
            waiter.ready.set()
        for slot in idle:
            worker = self._workers[slot]
            if worker is not None:
                worker.close()
        self._watcher.join(timeout=START_TIMEOUT_S + 5)
        self.factory.close()
