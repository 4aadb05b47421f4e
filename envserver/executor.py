"""The process pool that runs all CPU-heavy work, with hard per-item timeouts and backpressure.

Each worker is a process of its own (forked from a fork server that has imported the families)
holding one item at a time. The event loop itself reads and writes each worker's socket and keeps
each item's deadline as a loop timer, so a call crosses the socket both ways and nothing else: no
helper threads, no hand-offs between threads (pebble's pool, which this replaced, spent a third of
the server's time in them; ``benchmarks/pool_hop.py`` measures the hop).
An item past its deadline, or whose request was cancelled, has its worker killed and replaced
while the other items of its batch and other requests carry on.

**Coalescing under saturation.** A worker that comes free while items queue and no other worker
is idle may take several queued items in one write, when each has a small running cost estimate
(``coalesce_item_s``; kept per function and environment or verifier from what workers report,
raised at once by a slow item and lowered slowly by fast ones), up to ``COALESCE_MAX_ITEMS`` and
``COALESCE_BUDGET`` estimates in all, and no more than its share of half the queue (items a
worker holds cannot go to another that comes free meanwhile: with up to 8 and a share of the
whole queue, cheap steps under a closed-loop load ran at 0.6-0.8 of the rate with coalescing
off, one worker busy with a batch while the other idled). The worker runs them one
after the other and answers each as it ends; each keeps its own deadline, armed when it starts.
An idle worker always takes a single item, and an item of unknown or large cost always goes
alone, so coalescing adds no wait while capacity is free and never puts a cheap item behind a
slow one. What it saves is the hop's per-item price under load: a write from the event loop and
a wake-up of the worker per item (``benchmarks/coalescing.py`` measures it, and what cheap items
mixed with slow ones wait).

Calls marked ``inline`` (work that is cheap by its family's own declaration, such as a seeded
task generation) run in the server process instead, a few at a time between yields to the event
loop: even this hop costs several times such work.

Nothing one item carries may take the pool down: arguments are pickled here and results (or
what the item raised) by the worker, so a value that cannot cross (too deep, not picklable)
fails its own item alone. A worker that dies is replaced; its item ends with ``error``. When no
worker can be started, queued items end with ``error``, requests answer ``PoolUnavailable``
(503, retryable) and ``healthy`` turns false once starts keep failing, so an orchestrator
restarts the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import logging
import math
import multiprocessing
import pickle
import signal
import socket
import struct
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.process import BaseProcess
from typing import Any, Generic, Literal, TypeVar

from sandbox.pool import Overloaded

T = TypeVar("T")
log = logging.getLogger("envserver")
_PICKLE = pickle.HIGHEST_PROTOCOL
INLINE_SLICE = 8
"""Inline calls run this many at a time between yields to the event loop, so a batch of cheap
items never holds the loop longer than a few of them take."""
COALESCE_MAX_ITEMS = 4
"""The most items a worker takes at once under saturation."""
COALESCE_BUDGET = 4
"""Items taken at once add up to at most this many times ``coalesce_item_s`` of estimates."""
COALESCE_SCAN = 64
"""How far into the queue a worker taking several items looks for cheap ones."""
COST_DECAY = 0.1
"""How far each faster item lowers a running cost estimate (a slower one raises it at once)."""

# Messages on a worker's socket are a length and that many bytes. A worker's start with one of
# these bytes; its answers then hold the item's seconds in the worker, then the pickle.
_LENGTH = struct.Struct("!Q")
_SECONDS = struct.Struct("!d")
_READY = b"S"  # started: the initializer (and warm-up) ran, items may come
_RESULT = b"R"  # followed by the seconds and the pickled result
_RAISED = b"E"  # followed by the seconds and the pickled exception the item raised
_PICKLE_AT = 1 + _SECONDS.size
_PR_SET_PDEATHSIG = 1  # prctl(2)
_RECEIVE_CHUNK = 1 << 18
FORK_SERVER_GONE_WAIT_S = 2.0
"""How long a worker's start waits for a fork server that just died to be replaced."""


class PoolUnavailable(Exception):
    """No worker can be started now; the caller should retry after ``retry_after_s``."""

    def __init__(self, reason: str, retry_after_s: int) -> None:
        super().__init__(reason)
        self.retry_after_s = retry_after_s


class PoolBroken(RuntimeError):
    """Set on queued items when no worker can be started to run them, or the pool closed."""


class WorkerDied(RuntimeError):
    """Set on the item a worker held when its process ended."""

    def __init__(self, exitcode: int | None) -> None:
        super().__init__(f"the worker process died (exit code {exitcode})")
        self.exitcode = exitcode


@dataclass(frozen=True)
class Call(Generic[T]):
    """One pool task: ``fn(*args)`` with a hard wall-clock limit; or, when ``inline``, work
    declared cheap (bounded by design, well under a millisecond), run in this process."""

    fn: Callable[..., T]
    args: tuple[Any, ...]
    timeout_s: float
    inline: bool = False
    cost_key: str = ""
    """What calls of ``fn`` share a running cost estimate by (the environment or verifier);
    empty: none, and the call is never coalesced with others."""


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """How one call ended. ``raised`` is an exception the function itself raised (for the
    caller to map: bad input or a family bug); ``timeout``/``error`` are infrastructure."""

    status: Literal["ok", "timeout", "error"]
    value: T | None = None
    detail: str = ""
    raised: BaseException | None = None
    seconds: float = 0.0


# --- the worker's side ------------------------------------------------------------------------


def invoke(payload: bytes | bytearray) -> bytes:
    """Run one pickled ``(fn, args)``; the pickled result, pickled here, where a result that
    cannot be pickled fails its own item."""
    fn, args = pickle.loads(payload)  # noqa: S301 - the server's own payload
    result = fn(*args)
    try:
        return pickle.dumps(result, _PICKLE)
    except (RecursionError, pickle.PicklingError, TypeError, AttributeError) as exc:
        raise TypeError(
            f"{getattr(fn, '__name__', fn)} returned a value that cannot be sent back: "
            f"{type(exc).__name__}: {exc}"
        ) from None


def _pickle_raised(exc: Exception) -> bytes:
    """``exc`` with its traceback as text, or a plain stand-in when it cannot make the trip
    (an exception class whose arguments do not survive pickling)."""
    exc.traceback = traceback.format_exc()  # type: ignore[attr-defined]  # logged by the server
    try:
        data = pickle.dumps(exc, _PICKLE)
        pickle.loads(data)  # noqa: S301 - our own bytes, checked while the cause is at hand
    except Exception as bad:
        stand_in = RuntimeError(
            f"{type(exc).__name__}: {exc} (the exception cannot be sent back: {bad})"
        )
        stand_in.traceback = exc.traceback  # type: ignore[attr-defined]
        data = pickle.dumps(stand_in, _PICKLE)
    return data


def _die_with_parent() -> None:
    """Have the kernel kill this worker when its parent, the fork server, dies: the server then
    reads exit status 255 for every worker and replaces them all, so none may live on."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _receive_exactly(sock: socket.socket, size: int) -> bytearray | None:
    """``size`` bytes from ``sock`` (blocking), or None when the server hung up first."""
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        received = sock.recv_into(view[got:])
        if not received:
            return None
        got += received
    return buffer


def _serve(
    sock: socket.socket,
    initializer: Callable[[], None] | None,
    warm_up: Callable[[], None] | None = None,
) -> None:
    """A worker process: after the initializer (and the warm-up, if any), one item at a time
    until the server is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the server, which stops us
    _die_with_parent()
    sock.setblocking(True)
    if initializer is not None:
        initializer()
    if warm_up is not None:
        warm_up()
    sock.sendall(_LENGTH.pack(len(_READY)) + _READY)
    while True:
        try:
            header = _receive_exactly(sock, _LENGTH.size)
            payload = header and _receive_exactly(sock, _LENGTH.unpack(header)[0])
        except OSError:
            payload = None
        if payload is None:
            return
        started = time.perf_counter()
        try:
            kind, data = _RESULT, invoke(payload)
        except Exception as exc:  # the server maps it: bad input, or a family's bug
            kind, data = _RAISED, _pickle_raised(exc)
        seconds = _SECONDS.pack(time.perf_counter() - started)
        sock.sendall(_LENGTH.pack(len(data) + _PICKLE_AT) + kind + seconds + data)


# --- the server's side ------------------------------------------------------------------------


class _Channel:
    """The server's end of a worker's socket, non-blocking (as the event loop needs it; uvloop
    makes every descriptor it watches so): whole messages are cut out of what has arrived, and a
    message that does not fit in the socket at once is finished when it drains, so the loop
    never waits for a worker."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self.sock = sock
        self._inbox = bytearray()
        self._outbox = memoryview(b"")

    def fileno(self) -> int:
        return self.sock.fileno()

    @property
    def closed(self) -> bool:
        return self.sock.fileno() < 0

    def receive(self) -> list[bytes]:
        """The messages completed by what can be read now; EOFError once the worker hung up."""
        while True:
            try:
                chunk = self.sock.recv(_RECEIVE_CHUNK)
            except BlockingIOError:
                break
            if not chunk:
                raise EOFError
            self._inbox += chunk
            if len(chunk) < _RECEIVE_CHUNK:
                break
        messages = []
        inbox = self._inbox
        while len(inbox) >= _LENGTH.size:
            end = _LENGTH.size + _LENGTH.unpack_from(inbox)[0]
            if len(inbox) < end:
                break
            messages.append(bytes(inbox[_LENGTH.size : end]))
            del inbox[:end]
        return messages

    def send(self, payloads: Sequence[bytes]) -> bool:
        """Start sending ``payloads``, a message each, in one write; False when the rest waits
        for ``flush`` (one write at a time: a worker is sent items only when it has none)."""
        data = memoryview(b"".join(_LENGTH.pack(len(p)) + p for p in payloads))
        self._outbox = data[self._write(data) :]
        return not self._outbox

    def flush(self) -> bool:
        """Send more of the waiting message; True once it is all sent."""
        self._outbox = self._outbox[self._write(self._outbox) :]
        return not self._outbox

    def _write(self, data: memoryview) -> int:
        try:
            return self.sock.send(data)
        except BlockingIOError:
            return 0

    def close(self) -> None:
        self.sock.close()


@dataclass(eq=False)
class _Worker:
    process: BaseProcess
    channel: _Channel
    slot: int
    ready: bool = False
    lost: bool = False  # killed or dying: whatever it still sends is ignored
    # Items sent and not answered yet, in the order it runs them: the first is running.
    jobs: deque[_Job] = field(default_factory=deque)


@dataclass(eq=False)
class _Job:
    payload: bytes
    timeout_s: float
    future: asyncio.Future[bytes]
    cost: tuple[Callable[..., Any], str] | None  # its running estimate's key; None: none
    worker: _Worker | None = None
    timer: asyncio.TimerHandle | None = None
    finished: float = 0.0


class Executor:
    """Worker processes fed by the event loop (one item at a time, or a few cheap ones under
    saturation), with a bounded number of items in flight; a worker that dies or overruns is
    replaced."""

    def __init__(
        self,
        workers: int,
        *,
        max_queue_items: int,
        retry_after_s: int = 1,
        initializer: Callable[[], None] | None = None,
        warm_up: Callable[[], None] | None = None,
        preload: Sequence[str] = (),
        max_start_failures: int = 5,
        coalesce_item_s: float = 0.0,
    ) -> None:
        # forkserver: workers never inherit the server's threads or event loop, and restarts
        # after a kill fork from a process that has already imported the families.
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(list(preload))
        self._initializer = initializer
        # Only the workers of a slot's first start warm up: the pool's start waits for them
        # (ready means warm), while a replacement takes items as soon as it has forked, paying
        # first-call costs on its first items. After the fork server dies every worker is
        # replaced at once, and a warm-up each (seconds, far more on a loaded machine) would
        # leave the pool with none for that long.
        self._warm_up = warm_up
        self.workers = workers
        self.max_queue_items = max_queue_items
        self.retry_after_s = retry_after_s
        self.max_start_failures = max_start_failures
        self.coalesce_item_s = coalesce_item_s
        self.in_flight = 0
        self.timeouts = 0
        self.crashes = 0
        self.restarts = 0
        self.coalesced = 0  # items sent behind another in one write
        self._costs: dict[tuple[Callable[..., Any], str], float] = {}
        self._start_failures = 0  # in a row, since a worker last became ready
        self._start_error = ""
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots: list[_Worker | None] = [None] * workers
        self._ever_started = [False] * workers
        self._starting: dict[int, Future[_Worker]] = {}
        # Starts run on a thread: one may have to boot the fork server (seconds of imports).
        self._starter = ThreadPoolExecutor(1, thread_name_prefix="pool-start")
        self._idle: list[_Worker] = []
        self._queue: deque[_Job] = deque()

    # --- health --------------------------------------------------------------------------------

    def problem(self) -> str:
        """Why the pool cannot take work, or "" when it can (or is starting its workers)."""
        if self._closed:
            return "the worker pool is closed"
        if self._start_error and not any(w is not None and w.ready for w in self._slots):
            return self._start_error
        return ""

    @property
    def alive(self) -> bool:
        """Whether the pool can take work now."""
        return not self.problem()

    @property
    def healthy(self) -> bool:
        """False once workers keep failing to start: the process should restart."""
        return self._start_failures < self.max_start_failures

    def live_workers(self) -> int:
        """Worker processes alive now."""
        return sum(1 for w in self._slots if w is not None and w.process.is_alive())

    def ready_workers(self) -> int:
        """Workers that have started and take items now."""
        return sum(1 for w in self._slots if w is not None and w.ready and not w.lost)

    def degraded(self) -> str:
        """What the pool lacks while it replaces lost workers, or "" at full strength."""
        ready = self.ready_workers()
        if self._closed or ready >= self.workers:
            return ""
        return f"{ready} of {self.workers} pool workers ready; the others are being replaced"

    def check(self) -> None:
        """Take in the workers started meanwhile and start one for every empty slot."""
        self._adopt()
        self._fill()

    async def watch(self, interval_s: float = 0.25) -> None:
        """Check the pool every ``interval_s`` until cancelled (runs for the app's lifetime):
        starts that failed are retried from here, at this pace."""
        self._attach()
        while not self._closed:
            self.check()
            await asyncio.sleep(interval_s)

    def close(self, grace_s: float = 2.0) -> None:
        """Stop the workers; items in flight or queued end with ``error``. Idle workers leave by
        themselves once their sockets close, running their exit handlers: multiprocessing's
        finalizers unlink the semaphores a library made there (tqdm makes one even for a hidden
        bar), which a killed worker leaks (the resource tracker's warning at Ctrl-C). Busy ones,
        and any not gone within ``grace_s``, are killed."""
        self._closed = True
        idle = [w for w in self._slots if w is not None and not w.jobs]
        for leaving in idle:
            self._hang_up(leaving)
        deadline = time.monotonic() + grace_s
        for leaving in idle:
            leaving.process.join(max(0.0, deadline - time.monotonic()))
        for worker in self._slots:
            if worker is not None:
                self._retire(worker)
                for job in worker.jobs:
                    if not job.future.done():
                        self._settle(job)
                        job.future.set_exception(PoolBroken("the worker pool closed"))
                worker.jobs.clear()
        for future in self._starting.values():
            future.add_done_callback(_kill_started)
        self._starter.shutdown(wait=False, cancel_futures=True)
        self._fail_queued("the worker pool closed")

    # --- work ----------------------------------------------------------------------------------

    def reserve(self, items: int) -> None:
        """Admit ``items`` more or raise ``Overloaded``/``PoolUnavailable``: checked before any work
        is scheduled, so a refused request costs nothing."""
        if not self.alive:
            self.check()
        if reason := self.problem():
            raise PoolUnavailable(reason, self.retry_after_s)
        if self.in_flight + items > self.max_queue_items:
            raise Overloaded(
                f"{self.in_flight + items} items in flight; limit is {self.max_queue_items}",
                self.retry_after_s,
            )

    async def run(self, calls: Sequence[Call[T]]) -> list[Outcome[T]]:
        """Run ``calls`` across the workers; outcomes in call order. Raises ``Overloaded`` or
        ``PoolUnavailable``.

        Cancelling the awaiting task (a whole-request deadline) drops the queued calls and
        stops the workers running the others. Inline calls neither take a place in the queue
        nor need the pool.
        """
        loop = self._attach()
        pooled = sum(not call.inline for call in calls)
        if pooled:
            self.reserve(pooled)
        self.in_flight += pooled
        slots: list[_Job | Outcome[T] | None] = []
        try:
            started = time.perf_counter()
            for call in calls:
                slots.append(None if call.inline else self._enqueue(call, loop))
            self._dispatch()
            # The pool's items run meanwhile.
            done = 0
            for index, call in enumerate(calls):
                if call.inline:
                    slots[index] = _run_inline(call)
                    done += 1
                    if done % INLINE_SLICE == 0:
                        await asyncio.sleep(0)
            jobs = [job for job in slots if isinstance(job, _Job)]
            if jobs:
                await asyncio.wait([job.future for job in jobs])
            return [
                self._outcome(job, call, job.finished - started) if isinstance(job, _Job) else job
                for job, call in zip(slots, calls, strict=True)
                if job is not None
            ]
        finally:
            for job in slots:
                if isinstance(job, _Job) and not job.future.done():
                    self._abandon(job)
            self.in_flight -= pooled

    def _enqueue(self, call: Call[T], loop: asyncio.AbstractEventLoop) -> _Job | Outcome[T]:
        try:
            payload = pickle.dumps((call.fn, call.args), _PICKLE)
        except (RecursionError, pickle.PicklingError, TypeError, AttributeError) as exc:
            detail = f"the item cannot be sent to a worker: {type(exc).__name__}: {exc}"
            return Outcome("error", detail=detail)
        cost = (call.fn, call.cost_key) if call.cost_key else None
        job = _Job(payload, call.timeout_s, loop.create_future(), cost)
        self._queue.append(job)
        return job

    def _outcome(self, job: _Job, call: Call[T], seconds: float) -> Outcome[T]:
        try:
            message = job.future.result()
        except TimeoutError:
            detail = f"exceeded the {call.timeout_s:g} s limit; the worker was stopped"
            return Outcome("timeout", detail=detail, seconds=seconds)
        except (WorkerDied, PoolBroken) as exc:
            return Outcome("error", detail=str(exc), seconds=seconds)
        try:
            value = pickle.loads(memoryview(message)[_PICKLE_AT:])  # noqa: S301 - our worker's
        except (RecursionError, pickle.UnpicklingError, EOFError) as exc:
            return Outcome("error", detail=f"unreadable result: {exc}", seconds=seconds)
        if message[:1] == _RESULT:
            return Outcome("ok", value=value, seconds=seconds)
        detail = f"{type(value).__name__}: {value}"
        return Outcome("error", detail=detail, raised=value, seconds=seconds)

    # --- the event loop's side of the workers ---------------------------------------------------

    def _attach(self) -> asyncio.AbstractEventLoop:
        """Serve the workers from the running loop (a new one in tests that run several)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop = loop
            for worker in self._slots:
                if worker is not None:
                    self._listen(worker)
            self.check()
        return loop

    def _listen(self, worker: _Worker) -> None:
        if self._loop is not None:
            self._loop.add_reader(worker.channel.fileno(), self._on_readable, worker)
            # The sentinel turns readable when the process has ended, with its exit code.
            self._loop.add_reader(worker.process.sentinel, self._on_exit, worker)

    def _dispatch(self, freed: _Worker | None = None) -> None:
        """Hand queued items to idle workers: one each, but several to ``freed`` (a worker that
        has just answered its last item) when no other worker is idle (see the module's doc)."""
        assert self._loop is not None
        while self._queue and self._idle:
            worker = self._idle.pop()
            jobs = self._take(several=worker is freed and not self._idle)
            if not jobs:
                self._idle.append(worker)
                return
            try:
                sent = worker.channel.send([job.payload for job in jobs])
            except OSError:  # the worker died since it was idle: the items never reached it
                self._queue.extendleft(reversed(jobs))
                self._kill(worker)
                continue
            if not sent:  # large items: the rest goes as the worker reads
                self._loop.add_writer(worker.channel.fileno(), self._on_writable, worker)
            for job in jobs:
                job.worker = worker
            worker.jobs.extend(jobs)
            self.coalesced += len(jobs) - 1
            self._begin(jobs[0])

    def _take(self, several: bool) -> list[_Job]:
        """The next queued item (skipping cancelled ones) and, when ``several`` and it is
        cheap, the cheap items found within ``COALESCE_SCAN`` of the queue, up to the limits."""
        queue = self._queue
        while queue and queue[0].future.done():  # its request was cancelled while it queued
            queue.popleft()
        if not queue:
            return []
        first = queue.popleft()
        budget = COALESCE_BUDGET * self.coalesce_item_s - self._estimate(first)
        if not several or not queue or budget < 0 or not self._cheap(first):
            return [first]
        limit = min(COALESCE_MAX_ITEMS, 1 + len(queue) // (2 * self.workers))
        taken, passed = [first], list[_Job]()
        while queue and len(passed) < COALESCE_SCAN and len(taken) < limit:
            job = queue.popleft()
            if job.future.done():
                continue
            cost = self._estimate(job)
            if self._cheap(job) and cost <= budget:
                taken.append(job)
                budget -= cost
            else:
                passed.append(job)
        queue.extendleft(reversed(passed))
        return taken

    def _estimate(self, job: _Job) -> float:
        """The running cost estimate of ``job``'s kind; infinite when unknown or not kept."""
        return self._costs.get(job.cost, math.inf) if job.cost is not None else math.inf

    def _cheap(self, job: _Job) -> bool:
        return self._estimate(job) <= self.coalesce_item_s

    def _observe(self, job: _Job, seconds: float) -> None:
        """Fold an item's seconds in its kind's estimate: up at once, down by ``COST_DECAY``."""
        if job.cost is not None:
            known = self._costs.get(job.cost, 0.0)
            step = 1.0 if seconds >= known else COST_DECAY
            self._costs[job.cost] = known + (seconds - known) * step

    def _begin(self, job: _Job) -> None:
        """``job`` is running now (it is the first its worker has): its deadline starts."""
        assert self._loop is not None
        job.timer = self._loop.call_later(job.timeout_s, self._expire, job)

    def _on_writable(self, worker: _Worker) -> None:
        try:
            done = worker.channel.flush()
        except OSError:  # it is gone; the sentinel says how it ended
            done = True
        if done:
            self._unwatch_writes(worker.channel.fileno())

    def _on_readable(self, worker: _Worker) -> None:
        try:
            messages = worker.channel.receive()
        except (EOFError, OSError):  # it is gone; the sentinel says how it ended
            self._unlisten(worker.channel.fileno())
            return
        for message in messages:
            self._on_message(worker, message)

    def _on_message(self, worker: _Worker, message: bytes) -> None:
        if worker.lost:
            return
        if message == _READY:
            worker.ready = True
            self._start_failures, self._start_error = 0, ""
            self._idle.append(worker)
            self._dispatch()
            return
        if not worker.jobs:
            log.error("pool worker %s sent a message with no item; stopping it", worker.process.pid)
            self._kill(worker)
            return
        job = worker.jobs.popleft()
        self._observe(job, _SECONDS.unpack_from(message, 1)[0])
        if not job.future.done():
            self._settle(job)
            job.future.set_result(message)
        elif job.timer is not None:  # its request was cancelled while it waited in this worker
            job.timer.cancel()
        if worker.jobs:
            self._begin(worker.jobs[0])
        else:
            self._idle.append(worker)
            self._dispatch(freed=worker)

    def _on_exit(self, worker: _Worker) -> None:
        self._retire(worker)
        exitcode = worker.process.exitcode
        worker.process.close()  # its sentinel's descriptor
        if not worker.ready:  # it died starting: the watchdog retries at its pace, not at once
            self._start_failed(f"a worker process exited while starting (exit code {exitcode})")
            return
        if worker.jobs:
            running = worker.jobs.popleft()
            if not running.future.done():
                self.crashes += 1
                self._settle(running)
                running.future.set_exception(WorkerDied(exitcode))
            self._requeue(worker)
        self._fill()
        self._dispatch()

    def _requeue(self, worker: _Worker) -> None:
        """The items a lost worker was sent but never started go back to the queue's front."""
        waiting = [job for job in worker.jobs if not job.future.done()]
        worker.jobs.clear()
        for job in waiting:
            job.worker = None
        self._queue.extendleft(reversed(waiting))

    def _expire(self, job: _Job) -> None:
        """The item overran its limit: stop its worker (the sentinel brings a new one)."""
        self.timeouts += 1
        worker = job.worker
        if worker is not None:
            self._observe(job, job.timeout_s)
        if not job.future.done():
            self._settle(job)
            job.future.set_exception(TimeoutError())
        if worker is not None:
            self._kill(worker)

    def _abandon(self, job: _Job) -> None:
        """The item's request is gone: forget a queued item, stop the worker of a running one
        (one sent behind another runs, and its answer is dropped)."""
        worker = job.worker
        running = worker is not None and worker.jobs and worker.jobs[0] is job
        self._settle(job)
        job.future.cancel()
        if running:
            assert worker is not None
            self._kill(worker)

    @staticmethod
    def _settle(job: _Job) -> None:
        if job.timer is not None:
            job.timer.cancel()
        job.finished = time.perf_counter()

    def _kill(self, worker: _Worker) -> None:
        worker.lost = True
        with contextlib.suppress(ValueError):
            self._idle.remove(worker)
        if worker.process.exitcode is None:
            with contextlib.suppress(OSError):
                worker.process.kill()

    def _retire(self, worker: _Worker) -> None:
        """Forget a worker: stop listening, free its slot, make sure its process is gone."""
        self._kill(worker)
        if self._slots[worker.slot] is worker:
            self._slots[worker.slot] = None
        self._hang_up(worker)

    def _hang_up(self, worker: _Worker) -> None:
        """Stop listening to a worker and close its socket (an idle one then leaves)."""
        self._unlisten(worker.process.sentinel)
        if not worker.channel.closed:
            self._unlisten(worker.channel.fileno())
            self._unwatch_writes(worker.channel.fileno())
            worker.channel.close()

    def _unlisten(self, fd: int) -> None:
        if self._loop is not None:
            with contextlib.suppress(Exception):  # a closed loop listens to nothing anyway
                self._loop.remove_reader(fd)

    def _unwatch_writes(self, fd: int) -> None:
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_writer(fd)

    # --- starting workers ----------------------------------------------------------------------

    def _fill(self) -> None:
        """Start a worker for every empty slot."""
        if self._closed:
            return
        loop = self._loop
        for slot, worker in enumerate(self._slots):
            if worker is None and slot not in self._starting:
                future = self._starter.submit(self._spawn, slot)
                self._starting[slot] = future
                future.add_done_callback(functools.partial(_soon, loop, self._adopt))

    def _spawn(self, slot: int) -> _Worker:
        # A fork server that just died (killed, or out of memory) is seen alive until its exit
        # is reaped: a start then finds its socket closed (refused) or loses it mid-request
        # (EOF). Its exit is reaped within milliseconds, and the next start launches a new one.
        deadline = time.monotonic() + FORK_SERVER_GONE_WAIT_S
        while True:
            try:
                return self._start(slot)
            except (ConnectionRefusedError, EOFError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _start(self, slot: int) -> _Worker:
        ours, theirs = socket.socketpair()
        warm_up = None if self._ever_started[slot] else self._warm_up
        process = self._context.Process(
            target=_serve,
            args=(theirs, self._initializer, warm_up),
            name="envserver-worker",
            daemon=True,
        )
        try:
            process.start()
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return _Worker(process, _Channel(ours), slot)

    def _adopt(self) -> None:
        """Take in the workers whose start finished (on the loop, or from ``check``)."""
        for slot, future in list(self._starting.items()):
            if not future.done() or future.cancelled():
                continue
            del self._starting[slot]
            if (error := future.exception()) is not None:
                self._start_failed(f"cannot start a worker process: {error}")
                continue
            worker = future.result()
            if self._closed:
                _kill_started(future)
                continue
            self.restarts += self._ever_started[slot]
            self._ever_started[slot] = True
            self._slots[slot] = worker
            self._listen(worker)

    def _start_failed(self, reason: str) -> None:
        """Count a failed start; with no worker left to run them, queued items end now."""
        self._start_failures += 1
        self._start_error = reason
        # Retried from ``watch``: an error once the process gives up (``healthy`` turns false).
        level = logging.WARNING if self.healthy else logging.ERROR
        log.log(level, "%s (%d in a row)", reason, self._start_failures)
        if self.problem():
            self._fail_queued(reason)

    def _fail_queued(self, reason: str) -> None:
        while self._queue:
            job = self._queue.popleft()
            if not job.future.done():
                job.finished = time.perf_counter()
                job.future.set_exception(PoolBroken(reason))


def _soon(
    loop: asyncio.AbstractEventLoop | None, callback: Callable[[], None], _: object = None
) -> None:
    """Run ``callback`` on ``loop`` from another thread; a closed loop leaves it to the next
    ``check``."""
    if loop is not None:
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(callback)


def _kill_started(future: Future[_Worker]) -> None:
    if not future.cancelled() and future.exception() is None:
        worker = future.result()
        with contextlib.suppress(OSError):
            worker.process.kill()
        worker.channel.close()


def _run_inline(call: Call[T]) -> Outcome[T]:
    started = time.perf_counter()
    try:
        value = call.fn(*call.args)
    except Exception as exc:  # the caller maps it, as it maps what a worker raised
        exc.traceback = traceback.format_exc()  # type: ignore[attr-defined]  # as a worker's
        detail = f"{type(exc).__name__}: {exc}"
        return Outcome("error", detail=detail, raised=exc, seconds=time.perf_counter() - started)
    return Outcome("ok", value=value, seconds=time.perf_counter() - started)
