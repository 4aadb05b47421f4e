"""The process pool that runs all CPU-heavy work, with hard per-item timeouts and backpressure.

Each item is its own pool task so that a hung item is killed alone (pebble stops the worker and
starts a fresh one) while the other items of its batch and other requests carry on. The event
loop only schedules and awaits.
"""

from __future__ import annotations

import asyncio
import multiprocessing
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
            for call in calls:
                futures.append(self._pool.schedule(call.fn, args=call.args, timeout=call.timeout_s))
            return list(
                await asyncio.gather(
                    *(self._await(f, c) for f, c in zip(futures, calls, strict=True))
                )
            )
        finally:
            for future in futures:
                future.cancel()
            self.in_flight -= len(calls)

    async def _await(self, future: Future[T], call: Call[T]) -> Outcome[T]:
        started = time.perf_counter()
        try:
            value = await asyncio.wrap_future(future)
        except TimeoutError:
            self.timeouts += 1
            return Outcome(
                "timeout",
                detail=f"exceeded the {call.timeout_s:g} s limit; the worker was stopped",
                seconds=time.perf_counter() - started,
            )
        except ProcessExpired as exc:
            self.crashes += 1
            return Outcome(
                "error",
                detail=f"the worker process died (exit code {exc.exitcode})",
                seconds=time.perf_counter() - started,
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return Outcome("error", detail=f"{type(exc).__name__}: {exc}", raised=exc)
        return Outcome("ok", value=value, seconds=time.perf_counter() - started)
