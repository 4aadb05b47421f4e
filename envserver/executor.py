"""The process pool that runs all CPU-heavy work, with hard per-item timeouts and backpressure.

Each item is its own pool task so that a hung item is killed alone (pebble stops the worker and
starts a fresh one) while the other items of its batch and other requests carry on. The event
loop only schedules and awaits.

Calls marked ``inline`` (work that is cheap by its family's own declaration, such as a seeded
task generation) run in the server process instead, a few at a time between yields to the event
loop: the pool hop costs twenty times such work.

Nothing one item carries may take the pool down: arguments are pickled here, before they reach
the pool's scheduling thread, and results are pickled by the worker, so a value that cannot
cross (too deep, not picklable) fails its own item alone. If the pool breaks anyway (its helper
threads die, its fork server or channel fails), a watchdog replaces it: the items in flight end
with ``error``, requests meanwhile answer ``PoolUnavailable`` (503, retryable), and ``healthy``
turns false if a replacement cannot be built, so an orchestrator restarts the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import pickle
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Future, InvalidStateError
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pebble import ProcessExpired, ProcessPool

T = TypeVar("T")
log = logging.getLogger("envserver")
_PICKLE = pickle.HIGHEST_PROTOCOL
INLINE_SLICE = 8
"""Inline calls run this many at a time between yields to the event loop, so a batch of cheap
items never holds the loop longer than a few of them take."""


class Overloaded(Exception):
    """The bounded queue is full; the caller should retry after ``retry_after_s``."""

    def __init__(self, queued: int, limit: int, retry_after_s: int) -> None:
        super().__init__(f"{queued} items in flight; limit is {limit}")
        self.retry_after_s = retry_after_s


class PoolUnavailable(Exception):
    """The pool broke and is being replaced; the caller should retry after ``retry_after_s``."""

    def __init__(self, reason: str, retry_after_s: int) -> None:
        super().__init__(reason)
        self.retry_after_s = retry_after_s


class PoolBroken(RuntimeError):
    """Set on the items that were in flight in a pool that broke."""


@dataclass(frozen=True)
class Call(Generic[T]):
    """One pool task: ``fn(*args)`` with a hard wall-clock limit; or, when ``inline``, work
    declared cheap (bounded by design, well under a millisecond), run in this process."""

    fn: Callable[..., T]
    args: tuple[Any, ...]
    timeout_s: float
    inline: bool = False


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """How one call ended. ``raised`` is an exception the function itself raised (for the
    caller to map: bad input or a family bug); ``timeout``/``error`` are infrastructure."""

    status: Literal["ok", "timeout", "error"]
    value: T | None = None
    detail: str = ""
    raised: BaseException | None = None
    seconds: float = 0.0


def invoke(payload: bytes) -> bytes:
    """Worker side of a call: unpickle ``(fn, args)``, run it, pickle the result here, where a
    result that cannot be pickled fails its own item (an exception the pool carries back)."""
    fn, args = pickle.loads(payload)  # noqa: S301 - the server's own payload
    result = fn(*args)
    try:
        return pickle.dumps(result, _PICKLE)
    except (RecursionError, pickle.PicklingError, TypeError, AttributeError) as exc:
        raise TypeError(
            f"{getattr(fn, '__name__', fn)} returned a value that cannot be sent back: "
            f"{type(exc).__name__}: {exc}"
        ) from None


class Executor:
    """A pebble ``ProcessPool`` behind an asyncio interface with a bounded number of items,
    replaced by ``watch`` when it breaks."""

    def __init__(
        self,
        workers: int,
        *,
        max_queue_items: int,
        retry_after_s: int = 1,
        initializer: Callable[[], None] | None = None,
        preload: Sequence[str] = (),
        max_rebuilds: int = 5,
    ) -> None:
        # forkserver: workers never inherit the server's threads or event loop, and restarts
        # after a kill fork from a process that has already imported the families.
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(list(preload))
        self._initializer = initializer
        self.workers = workers
        self.max_queue_items = max_queue_items
        self.retry_after_s = retry_after_s
        self.max_rebuilds = max_rebuilds
        self.in_flight = 0
        self.timeouts = 0
        self.crashes = 0
        self.rebuilds = 0
        self._failed_rebuilds = 0
        self._broken_reason = ""
        self._closed = False
        self._futures: set[Future[bytes]] = set()
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPool:
        return ProcessPool(
            max_workers=self.workers, initializer=self._initializer, context=self._context
        )

    # --- health --------------------------------------------------------------------------------

    def problem(self) -> str:
        """Why the current pool cannot take work, or "" when it can. (pebble marks its pool
        failed when one of its helper threads dies, or its workers or channel fail.)"""
        return "" if self._pool.active else "the worker pool stopped working"

    @property
    def alive(self) -> bool:
        """Whether the pool can take work now."""
        return not self._closed and not self._broken_reason and not self.problem()

    @property
    def healthy(self) -> bool:
        """False once the pool broke and could not be replaced: the process should restart."""
        return self._failed_rebuilds < self.max_rebuilds

    def live_workers(self) -> int:
        """Worker processes alive now."""
        manager = getattr(self._pool, "_pool_manager", None)
        processes = getattr(getattr(manager, "worker_manager", None), "workers", {})
        return sum(1 for process in list(processes.values()) if process.is_alive())

    def check(self) -> bool:
        """Replace the pool if it broke; True when a replacement was made. Items in flight in
        the broken pool end with ``error``."""
        if self._closed:
            return False
        reason = self._broken_reason or self.problem()
        if not reason:
            return False
        log.error("worker pool broken: %s; replacing it", reason)
        self._broken_reason = reason
        old, stranded = self._pool, list(self._futures)
        try:
            self._pool = self._new_pool()
        except Exception:
            self._failed_rebuilds += 1
            log.exception("could not start a new worker pool (%d failures)", self._failed_rebuilds)
            return False
        self.rebuilds += 1
        self._failed_rebuilds = 0
        self._broken_reason = ""
        for future in stranded:
            with contextlib.suppress(InvalidStateError):
                future.set_exception(PoolBroken(reason))
        threading.Thread(target=_stop, args=(old,), daemon=True, name="pool-stop").start()
        return True

    async def watch(self, interval_s: float = 0.25) -> None:
        """Check the pool every ``interval_s`` until cancelled (runs for the app's lifetime)."""
        while not self._closed:
            self.check()
            await asyncio.sleep(interval_s)

    def close(self) -> None:
        """Stop the workers; running items are abandoned."""
        self._closed = True
        _stop(self._pool)

    # --- work ----------------------------------------------------------------------------------

    def reserve(self, items: int) -> None:
        """Admit ``items`` more or raise ``Overloaded``/``PoolUnavailable``: checked before any work
        is scheduled, so a refused request costs nothing."""
        if not self.alive:
            self.check()
        if not self.alive:
            raise PoolUnavailable(
                self._broken_reason or self.problem() or "the worker pool is restarting",
                self.retry_after_s,
            )
        if self.in_flight + items > self.max_queue_items:
            raise Overloaded(self.in_flight + items, self.max_queue_items, self.retry_after_s)

    async def run(self, calls: Sequence[Call[T]]) -> list[Outcome[T]]:
        """Run ``calls`` across the workers; outcomes in call order. Raises ``Overloaded`` or
        ``PoolUnavailable``.

        Cancelling the awaiting task (a whole-request deadline) cancels the pending calls.
        Inline calls neither take a place in the queue nor need the pool.
        """
        pooled = sum(not call.inline for call in calls)
        if pooled:
            self.reserve(pooled)
        self.in_flight += pooled
        futures: list[Future[bytes] | Outcome[T] | None] = []
        try:
            started = time.perf_counter()
            for call in calls:
                futures.append(None if call.inline else self._schedule(call))
            # The pool's items run meanwhile.
            done = 0
            for index, call in enumerate(calls):
                if call.inline:
                    futures[index] = _run_inline(call)
                    done += 1
                    if done % INLINE_SLICE == 0:
                        await asyncio.sleep(0)
            pending = [f for f in futures if isinstance(f, Future)]
            finished = iter(await _all_done(pending))
            return [
                self._outcome(f, call, next(finished) - started) if isinstance(f, Future) else f
                for f, call in zip(futures, calls, strict=True)
                if f is not None
            ]
        finally:
            for future in futures:
                if isinstance(future, Future):
                    future.cancel()
                    self._futures.discard(future)
            self.in_flight -= pooled

    def _schedule(self, call: Call[T]) -> Future[bytes] | Outcome[T]:
        try:
            payload = pickle.dumps((call.fn, call.args), _PICKLE)
        except (RecursionError, pickle.PicklingError, TypeError, AttributeError) as exc:
            detail = f"the item cannot be sent to a worker: {type(exc).__name__}: {exc}"
            return Outcome("error", detail=detail)
        try:
            future: Future[bytes] = self._pool.schedule(
                invoke, args=(payload,), timeout=call.timeout_s
            )
        except RuntimeError as exc:  # the pool stopped between the check and now
            self._broken_reason = str(exc)
            return Outcome("error", detail=f"the worker pool broke ({exc})")
        self._futures.add(future)
        return future

    def _outcome(self, future: Future[bytes], call: Call[T], seconds: float) -> Outcome[T]:
        error = future.exception()
        if error is None:
            try:
                value: T = pickle.loads(future.result())  # noqa: S301 - our worker's bytes
            except (RecursionError, pickle.UnpicklingError, EOFError) as exc:
                return Outcome("error", detail=f"unreadable result: {exc}", seconds=seconds)
            return Outcome("ok", value=value, seconds=seconds)
        if isinstance(error, TimeoutError):
            self.timeouts += 1
            detail = f"exceeded the {call.timeout_s:g} s limit; the worker was stopped"
            return Outcome("timeout", detail=detail, seconds=seconds)
        if isinstance(error, ProcessExpired):
            self.crashes += 1
            detail = f"the worker process died (exit code {error.exitcode})"
            return Outcome("error", detail=detail, seconds=seconds)
        if isinstance(error, BrokenProcessPool):  # pebble aborted its items: replace the pool
            self._broken_reason = self._broken_reason or str(error) or "the worker pool broke"
        if isinstance(error, BrokenProcessPool | PoolBroken):
            detail = f"the worker pool broke ({error})"
            return Outcome("error", detail=detail, seconds=seconds)
        detail = f"{type(error).__name__}: {error}"
        return Outcome("error", detail=detail, raised=error, seconds=seconds)


def _run_inline(call: Call[T]) -> Outcome[T]:
    started = time.perf_counter()
    try:
        value = call.fn(*call.args)
    except Exception as exc:  # the caller maps it, as it maps what a worker raised
        exc.traceback = traceback.format_exc()  # type: ignore[attr-defined]  # as pebble does
        detail = f"{type(exc).__name__}: {exc}"
        return Outcome("error", detail=detail, raised=exc, seconds=time.perf_counter() - started)
    return Outcome("ok", value=value, seconds=time.perf_counter() - started)


def _stop(pool: ProcessPool) -> None:
    pool.stop()  # type: ignore[no-untyped-call]
    with contextlib.suppress(Exception):
        pool.join(timeout=10)


async def _all_done(futures: Sequence[Future[Any]]) -> list[float]:
    """Wait until every future is done; the ``perf_counter`` time at which each finished.

    One wake-up of the event loop per batch instead of one per item: pebble completes futures
    on its own thread, and a per-item ``asyncio.wrap_future`` costs a cross-thread hand-off each.
    """
    loop = asyncio.get_running_loop()
    all_done: asyncio.Future[None] = loop.create_future()
    finished = [0.0] * len(futures)
    remaining = len(futures)
    lock = threading.Lock()

    def wake() -> None:
        if not all_done.done():
            all_done.set_result(None)

    def on_done(index: int) -> Callable[[Future[Any]], None]:
        def record(_: Future[Any]) -> None:
            nonlocal remaining
            finished[index] = time.perf_counter()
            with lock:
                remaining -= 1
                last = remaining == 0
            if last:
                with contextlib.suppress(RuntimeError):  # the loop closed: nobody is waiting
                    loop.call_soon_threadsafe(wake)

        return record

    if not futures:
        return finished
    for index, future in enumerate(futures):
        future.add_done_callback(on_done(index))
    await all_done
    return finished
