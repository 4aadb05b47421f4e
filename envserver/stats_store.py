"""Where the task statistics live (``envserver.stats``): one row per caller, run and task id,
in a SQLAlchemy store opened as every store here is (``environments.sql``: SQLite in the data
directory by default, PostgreSQL when replicas share it).

A row holds counts only: the attempts, and the reward they earned split into successes and
failures (a reward r in [0, 1] adds r to one and 1 - r to the other: for the usual 0-or-1
rewards, passes and fails). Writes are additive upserts (``INSERT ... ON CONFLICT DO UPDATE
SET successes = successes + excluded.successes``, the same statement on SQLite and PostgreSQL),
so any number of processes and replicas add to the same row without reading it first, and none
of their outcomes is lost. The statement is written out rather than built by SQLAlchemy's
dialects for each write: it runs on the server's thread beside the event loop, and building it
cost as much again (``benchmarks/curriculum_recording.py``). A SQLite store runs in WAL mode with
``synchronous=NORMAL``: readers do not wait for the writer, and a commit does not wait for the
disk (a power cut may lose the last half second of counts, never corrupt them).

Imported only where statistics are on: SQLAlchemy is an optional dependency.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Float, Index, Integer, String, event, select, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from environments.sql import open_engine, race
from environments.task_id import MAX_TASK_ID_LENGTH

MAX_LABEL_CHARS = 200
"""The longest caller name and run label a row keeps (the wire allows shorter run labels)."""


class _Base(DeclarativeBase):
    pass


class TaskRow(_Base):
    __tablename__ = "envserver_task_stats"
    __table_args__ = (Index("ix_envserver_task_stats_run", "owner", "run", "env"),)
    owner: Mapped[str] = mapped_column(String(MAX_LABEL_CHARS), primary_key=True)
    run: Mapped[str] = mapped_column(String(MAX_LABEL_CHARS), primary_key=True)
    task_id: Mapped[str] = mapped_column(String(MAX_TASK_ID_LENGTH), primary_key=True)
    env: Mapped[str] = mapped_column(String(MAX_TASK_ID_LENGTH))
    version: Mapped[str] = mapped_column(String(MAX_TASK_ID_LENGTH))
    options: Mapped[str] = mapped_column(String(MAX_TASK_ID_LENGTH))
    successes: Mapped[float] = mapped_column(Float)
    failures: Mapped[float] = mapped_column(Float)
    attempts: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


@dataclass(frozen=True, slots=True)
class Tally:
    """What a run did on one task: as a flush adds it, and as the store holds it."""

    owner: str
    run: str
    task_id: str
    env: str
    version: str
    options: str
    """The task id's options part (``difficulty=hard``; empty for the defaults)."""
    successes: float
    failures: float
    attempts: int


_UPSERT = text(
    "INSERT INTO envserver_task_stats (owner, run, task_id, env, version, options, successes, "
    "failures, attempts, updated_at) VALUES (:owner, :run, :task_id, :env, :version, :options, "
    ":successes, :failures, :attempts, :updated_at) ON CONFLICT (owner, run, task_id) DO UPDATE "
    "SET successes = envserver_task_stats.successes + excluded.successes, "
    "failures = envserver_task_stats.failures + excluded.failures, "
    "attempts = envserver_task_stats.attempts + excluded.attempts, "
    "updated_at = excluded.updated_at"
)


def _sqlite_pragmas(connection: Any, _: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class StatsStore:
    """The task statistics at one SQLAlchemy URL."""

    def __init__(self, url: str) -> None:
        self.engine: Engine = open_engine(url)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        race(lambda: _Base.metadata.create_all(self.engine))

    def close(self) -> None:
        """Close the engine's pooled connections."""
        self.engine.dispose()

    def add(self, tallies: Sequence[Tally]) -> None:
        """Add ``tallies`` to their rows (made where missing), in one transaction."""
        if not tallies:
            return
        now = datetime.now(UTC)
        rows = [
            {
                "owner": t.owner, "run": t.run, "task_id": t.task_id, "env": t.env,
                "version": t.version, "options": t.options, "successes": t.successes,
                "failures": t.failures, "attempts": t.attempts, "updated_at": now,
            }
            for t in tallies
        ]  # fmt: skip
        with self.engine.begin() as connection:
            connection.execute(_UPSERT, rows)

    def tasks(
        self, owner: str, run: str, env: str | None = None, version: str | None = None
    ) -> list[Tally]:
        """The rows of ``owner``'s ``run`` (of one environment, and version, when given), most
        attempted first."""
        query = select(TaskRow).where(TaskRow.owner == owner, TaskRow.run == run)
        if env is not None:
            query = query.where(TaskRow.env == env)
        if version is not None:
            query = query.where(TaskRow.version == version)
        query = query.order_by(TaskRow.attempts.desc(), TaskRow.task_id)
        with Session(self.engine) as session:
            rows = session.scalars(query)
            return [
                Tally(r.owner, r.run, r.task_id, r.env, r.version, r.options, r.successes,
                      r.failures, r.attempts)
                for r in rows
            ]  # fmt: skip
