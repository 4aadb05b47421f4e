"""Per-run task statistics (off unless ``ENVSERVER_STATS``): the outcome of every task-id
verification and every finished episode whose request names a ``run``, kept per caller, run
label and task id in a store replicas share (``envserver.stats_store``), for the curriculum
(``envserver.curriculum``).

What is kept is counts, and nothing else: no response, no state, no reference. A run label is
the client's (pass rates belong to a policy, and a trainer names its run); the caller is the
name of the API key that sent the request (empty on a server without keys), so two tenants'
runs of one name never mix, and a run's statistics are read only with its own key.

An outcome is recorded where it is scored: ``Service.verify`` for an item with a task id, and
``Service.step`` for a step that ends an episode (terminated or truncated) started by a reset
that named a run, which the state token carries sealed, beside the task id, from step to step
(``Label``). Items that could not be scored (``timeout``, ``error``) are not outcomes.

Recording costs the request an append to a list (``Recorder.record``); a task of the server's
writes what has gathered every ``stats_flush_s`` (or at once when ``FLUSH_ITEMS`` are
waiting), aggregated by task, in one transaction on a thread, so the store's latency never
reaches the event loop. With statistics off there is no recorder and scoring skips this
altogether.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from prometheus_client import CollectorRegistry, Counter
from pydantic import BaseModel

from environments.task_id import MAX_TASK_ID_LENGTH, TaskId
from envserver.config import Settings
from envserver.metrics import Metrics

if TYPE_CHECKING:
    from envserver.stats_store import StatsStore, Tally

log = logging.getLogger("envserver.stats")
FLUSH_ITEMS = 16_384
"""Outcomes that start a write at once instead of at the next tick (a burst: the writes are
otherwise timed, so a task a group scores many times in a tick is one row's update)."""
MAX_WAITING = 200_000
"""Outcomes kept while the store cannot be written; beyond this the oldest are dropped (and
counted in ``envserver_stats_dropped_outcomes``), so a store that is down never grows the
server's memory without bound."""


@dataclass(frozen=True, slots=True)
class Label:
    """What a state token carries for statistics: who started the episode, in which run, on
    which task. Sealed with the state, so a client can neither read nor change it."""

    owner: str
    run: str
    task_id: str

    def sealed(self) -> dict[str, str]:
        return {"owner": self.owner, "run": self.run, "task": self.task_id}

    @classmethod
    def opened(cls, value: object) -> Label | None:
        """The label a token carried (None when it carried none or another shape)."""
        if isinstance(value, dict):
            owner, run, task = value.get("owner"), value.get("run"), value.get("task")
            if isinstance(owner, str) and isinstance(run, str) and isinstance(task, str):
                return cls(owner, run, task)
        return None


Task = str | tuple[int, BaseModel]
"""A task as an attempt names it: its canonical id (an episode's label carries it), or the seed
and options it is made from, formatted into the id by the writer, off the event loop."""


class Attempt(NamedTuple):
    """One scored attempt of a run at a task of ``env@version``, and its reward (clamped to
    [0, 1] when written: the share of a success). A named tuple: made on the event loop for
    every counted item, where a frozen dataclass costs about twice as much."""

    owner: str
    run: str
    env: str
    version: str
    task: Task
    reward: float

    def task_id(self) -> str | None:
        """The canonical task id (None: the options make it too long to be an id)."""
        if isinstance(self.task, str):
            return self.task
        seed, options = self.task
        text = TaskId.format(
            self.env, self.version, seed, options.model_dump(mode="json", exclude_defaults=True)
        )
        return text if len(text) <= MAX_TASK_ID_LENGTH else None


class Recorder:
    """Gathers outcomes on the event loop and writes them to ``store`` off it (see the module
    docstring). ``run`` is the writing task, started with the server and cancelled at its
    stop, when it writes what is left."""

    def __init__(
        self,
        store: StatsStore,
        flush_s: float,
        registry: CollectorRegistry,
    ) -> None:
        self.store = store
        self.flush_s = flush_s
        self._waiting: list[Attempt] = []
        self._full = asyncio.Event()
        self._lock = asyncio.Lock()
        self.recorded = Counter(
            "envserver_stats_outcomes",
            "Outcomes written to the statistics store.",
            registry=registry,
        )
        self.dropped = Counter(
            "envserver_stats_dropped_outcomes",
            f"Outcomes dropped because more than {MAX_WAITING} waited for a store that failed.",
            registry=registry,
        )
        self.failures = Counter(
            "envserver_stats_write_failures",
            "Writes to the statistics store that failed (their outcomes are tried again).",
            registry=registry,
        )

    def record(self, attempt: Attempt) -> None:
        """Keep ``attempt`` for the next write (O(1), on the event loop)."""
        self._waiting.append(attempt)
        if len(self._waiting) >= FLUSH_ITEMS:
            self._full.set()

    async def flush(self) -> None:
        """Write every outcome gathered so far (a caller that must read what it just recorded
        awaits this first). A failed write keeps the outcomes for the next one."""
        async with self._lock:
            batch, self._waiting = self._waiting, []
            self._full.clear()
            if not batch:
                return
            try:
                await asyncio.to_thread(self.store.add, tallies(batch))
            except Exception:
                self.failures.inc()
                log.exception("writing %d outcomes to the statistics store failed", len(batch))
                self._waiting[:0] = batch
                excess = len(self._waiting) - MAX_WAITING
                if excess > 0:
                    del self._waiting[:excess]
                    self.dropped.inc(excess)
                return
            self.recorded.inc(len(batch))

    async def run(self) -> None:
        """Write every ``flush_s`` or when full, until cancelled; then write what is left."""
        try:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._full.wait(), self.flush_s)
                await self.flush()
        finally:
            await self.flush()


def open_recorder(settings: Settings, metrics: Metrics) -> Recorder | None:
    """The recorder of this serving process, its store opened now (after any fork); None
    when statistics are off."""
    if not settings.stats:
        return None
    from envserver.stats_store import StatsStore  # noqa: PLC0415 - only where stats are on

    return Recorder(StatsStore(settings.stats_url), settings.stats_flush_s, metrics.registry)


@contextlib.asynccontextmanager
async def recording(recorder: Recorder | None) -> AsyncIterator[None]:
    """Run ``recorder``'s writer for the block; then write what is left and close its store."""
    if recorder is None:
        yield
        return
    writer = asyncio.create_task(recorder.run(), name="stats-writer")
    try:
        yield
    finally:
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writer
        recorder.store.close()


def tallies(attempts: list[Attempt]) -> list[Tally]:
    """``attempts`` summed per (caller, run, task): one row each for the store."""
    from envserver.stats_store import Tally  # noqa: PLC0415 - SQLAlchemy only where stats are on

    summed: dict[tuple[str, str, str], list[float]] = {}
    parts: dict[tuple[str, str, str], Attempt] = {}
    for attempt in attempts:
        task_id = attempt.task_id()
        if task_id is None:
            continue
        key = (attempt.owner, attempt.run, task_id)
        counts = summed.get(key)
        if counts is None:
            counts = summed[key] = [0.0, 0.0, 0.0]
            parts[key] = attempt
        share = min(1.0, max(0.0, attempt.reward))
        counts[0] += share
        counts[1] += 1.0 - share
        counts[2] += 1.0
    rows = []
    for (owner, run, task_id), (successes, failures, count) in summed.items():
        first, options = parts[owner, run, task_id], task_id.partition("?")[2]
        rows.append(
            Tally(owner, run, task_id, first.env, first.version, options, successes, failures,
                  int(count))
        )  # fmt: skip
    return rows
