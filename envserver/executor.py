"""The process pool that runs all CPU-heavy work, with hard per-item timeouts and backpressure.

Each item is its own pool task so that a hung item is killed alone (pebble stops the worker and
starts a fresh one) while the other items of its batch and other requests carry on. The event
loop only schedules and awaits.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pebble import ProcessExpired, ProcessPool

T = TypeVar("T")


class Overloaded(Exception):
    """The bounded queue is full; the caller should retry after ``retry_after_s``."""

    def __init__(self, queued: int, limit: int, retry_after_s: int) -> None:
        super().__init__(f"{queued} items in flight; limit is {limit}")
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class Call(Generic[T]):
    """One pool task: ``fn(*args)`` with a hard wall-clock limit."""

    fn: Callable[..., T]
    args: tuple[Any, ...]
    timeout_s: float


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """How one call ended. ``raised`` is an exception the function itself raised (for the
    caller to map: bad input or a family bug); ``timeout``/``error`` are infrastructure."""

    status: Literal["ok", "timeout", "error"]
    value: T | None = None
    detail: str = ""
    raised: BaseException | None = None
    seconds: float = 0.0


class Executor:
    """A pebble ``ProcessPool`` behind an asyncio interface with a bounded number of items."""

    def __init__(
        self,
        workers: int,
        *,
        max_queue_items: int,
        retry_after_s: int = 1,
        initializer: Callable[[], None] | None = None,
        preload: Sequence[str] = (),
    ) -> None:
        # forkserver: workers never inherit the server's threads or event loop, and restarts
        # after a kill fork from a process that has already imported the families.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(preload))
        self.workers = workers
        self.max_queue_items = max_queue_items
        self.retry_after_s = retry_after_s
        self.in_flight = 0
        self.timeouts = 0
        self.crashes = 0
        self._pool = ProcessPool(max_workers=workers, initializer=initializer, context=context)

    @property
    def alive(self) -> bool:
        """Whether the pool is running."""
        return bool(self._pool.active)

    def close(self) -> None:
        """Stop the workers; running items are abandoned."""
        self._pool.stop()  # type: ignore[no-untyped-call]
        self._pool.join(timeout=10)

    def reserve(self, items: int) -> None:
        """Admit ``items`` more or raise ``Overloaded``: checked before any work is scheduled,
        so a refused request costs nothing."""
        if self.in_flight + items > self.max_queue_items:
            raise Overloaded(self.in_flight + items, self.max_queue_items, self.retry_after_s)

    async def run(self, calls: Sequence[Call[T]]) -> list[Outcome[T]]:
        """Run ``calls`` across the workers; outcomes in call order. Raises ``Overloaded``.

        Cancelling the awaiting task (a whole-request deadline) cancels the pending calls.
        """
        self.reserve(len(calls))
        self.in_flight += len(calls)
        futures: list[Future[T]] = []
        try:
            started = time.perf_counter()
            for call in calls:
                futures.append(self._pool.schedule(call.fn, args=call.args, timeout=call.timeout_s))
            finished = await _all_done(futures)
            return [
                self._outcome(future, call, seconds - started)
                for future, call, seconds in zip(futures, calls, finished, strict=True)
            ]
        finally:
            for future in futures:
                future.cancel()
            self.in_flight -= len(calls)

    def _outcome(self, future: Future[T], call: Call[T], seconds: float) -> Outcome[T]:
        error = future.exception()
        if error is None:
            return Outcome("ok", value=future.result(), seconds=seconds)
        if isinstance(error, TimeoutError):
            self.timeouts += 1
            detail = f"exceeded the {call.timeout_s:g} s limit; the worker was stopped"
            return Outcome("timeout", detail=detail, seconds=seconds)
        if isinstance(error, ProcessExpired):
            self.crashes += 1
            detail = f"the worker process died (exit code {error.exitcode})"
            return Outcome("error", detail=detail, seconds=seconds)
        detail = f"{type(error).__name__}: {error}"
        return Outcome("error", detail=detail, raised=error, seconds=seconds)


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
