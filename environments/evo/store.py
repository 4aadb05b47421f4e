"""The store of submissions and admitted environments (SQLAlchemy: SQLite by default,
PostgreSQL when replicas share it), and the queue of submissions waiting for their admission.

Sources are content-addressed by their SHA-256; an admitted environment is a (name, version)
pointing at one source, never changed in place: code under a taken name is a new version, and
the older one is retired. Every submission keeps its provenance (submitter, time, stage reports).

A submission is a job (``JobRow``) until its verdict is recorded: a worker claims it with a
lease (``claim``), renews the lease while it admits (``renew``), and records the verdict only
while it still holds it (``record``; ``StoreConflict`` when another worker took it over). A
lease that lapses (its server was killed) lets any worker on the store claim the job again, at
most ``MAX_ATTEMPTS`` times; a server that stops gracefully hands its jobs back (``release``).
Leases are read against each server's clock: replicas sharing a store keep their clocks in step
(NTP), a skew of a few seconds against a lease of ``lease_s`` only hands a job over that much
earlier or later.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    case,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.engine import CursorResult, Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.sql.elements import ColumnElement

from environments.evo.admission import Admission
from environments.evo.calibration import Rollout
from environments.evo.novelty import PoolEntry
from environments.evo.seeding import SUBMITTER, seed_admissions
from environments.sql import masked, open_engine, race
from sandbox.pool import Overloaded

log = logging.getLogger("envserver.evo")


class _Base(DeclarativeBase):
    pass


class SourceRow(_Base):
    __tablename__ = "evo_sources"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    text: Mapped[str] = mapped_column(Text)


class SubmissionRow(_Base):
    __tablename__ = "evo_submissions"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    digest: Mapped[str] = mapped_column(ForeignKey("evo_sources.digest"))
    submitter: Mapped[str] = mapped_column(String(200))
    submitted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    status: Mapped[str] = mapped_column(String(16))  # pending, admitted, rejected, error
    stage: Mapped[str | None] = mapped_column(String(4), nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    reports: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    env_name: Mapped[str | None] = mapped_column(String(64), nullable=True)
    env_version: Mapped[int | None] = mapped_column(Integer, nullable=True)


class EnvRow(_Base):
    __tablename__ = "evo_envs"
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    digest: Mapped[str] = mapped_column(ForeignKey("evo_sources.digest"))
    submission: Mapped[str] = mapped_column(ForeignKey("evo_submissions.id"))
    description: Mapped[str] = mapped_column(Text)
    difficulties: Mapped[list[int]] = mapped_column(JSON)
    answer_format: Mapped[str] = mapped_column(Text)
    normalised: Mapped[str] = mapped_column(String(64))
    fingerprint: Mapped[list[str]] = mapped_column(JSON)
    pass_rates: Mapped[dict[str, float]] = mapped_column(JSON)
    admitted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    retired: Mapped[bool] = mapped_column(Boolean, default=False)


class GenerationRow(_Base):
    """One row whose ``value`` every change of what is served bumps (an admission, a retirement,
    a restore, the seeds): a process re-reads the environments only when it moved."""

    __tablename__ = "evo_generation"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    value: Mapped[int] = mapped_column(Integer)


class JobRow(_Base):
    """A submission waiting for its admission or being admitted (the queue). ``owner`` holds it
    until ``lease_until`` (seconds since the epoch); ``attempts`` counts its claims."""

    __tablename__ = "evo_jobs"
    submission: Mapped[str] = mapped_column(ForeignKey("evo_submissions.id"), primary_key=True)
    rollouts: Mapped[list[list[Any]]] = mapped_column(JSON)
    enqueued: Mapped[float] = mapped_column(Float, index=True)
    owner: Mapped[str | None] = mapped_column(String(96), nullable=True)
    lease_until: Mapped[float | None] = mapped_column(Float, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)


MAX_ATTEMPTS = 3
"""Claims of one submission before it is given up (status ``error``): each claim beyond the
first means that the worker admitting it stopped without handing it back (a killed server)."""
RETRY_AFTER_S = 5
"""Retry-After of a submission refused because the queue is full: an admission takes seconds
(the README's Speed), so a place frees about that often."""
_CLAIM_CANDIDATES = 4
"""Jobs a claim tries in turn, oldest first, when other workers take the first at once."""


class StoreConflict(Exception):
    """A write that the store's state forbids: a verdict recorded by a worker that no longer
    holds the submission's lease (another worker took it over, or it was handed back)."""


@dataclass(frozen=True)
class Job:
    """A claimed submission: what its admission needs, and its claim count."""

    submission: str
    source: str
    rollouts: tuple[Rollout, ...]
    attempts: int


@dataclass(frozen=True)
class QueueCounts:
    """The queue in the store now: ``queued`` (no live lease), ``running`` (a live lease), and
    the age of the oldest job of either (0 when empty)."""

    queued: int
    running: int
    oldest_s: float


@dataclass(frozen=True)
class StoredEnv:
    """An admitted environment with its source."""

    name: str
    version: int
    digest: str
    source: str
    description: str
    difficulties: tuple[int, ...]
    answer_format: str
    pass_rates: dict[str, float]
    submission: str
    admitted_at: str
    retired: bool

    @property
    def id(self) -> str:
        """Its environment id."""
        return f"evo/{self.name}"


@dataclass(frozen=True)
class Submission:
    """A submission's status and per-stage report."""

    id: str
    digest: str
    submitter: str
    submitted_at: str
    status: str
    stage: str | None
    reason: str
    reports: list[dict[str, Any]]
    env: str | None


def _now() -> datetime:
    return datetime.now(UTC)


class Store:
    """Submissions and admitted environments at one SQLAlchemy URL."""

    def __init__(self, url: str) -> None:
        self.engine: Engine = open_engine(url)
        race(self._create)

    def _create(self) -> None:
        # Several replicas (or --workers processes) open a fresh store at once: on PostgreSQL
        # the loser of CREATE TABLE fails on a unique constraint of the catalogue, on SQLite
        # on "already exists" or a lock; the retry finds the tables there.
        _Base.metadata.create_all(self.engine)
        with Session(self.engine) as session, session.begin():
            if session.get(GenerationRow, 1) is None:
                session.add(GenerationRow(id=1, value=0))
            # A submission is pending only while it is a job: those of a version that admitted
            # in the server's memory (lost with a restart) are given up, with the reason.
            orphans = select(SubmissionRow).where(
                SubmissionRow.status == "pending",
                SubmissionRow.id.not_in(select(JobRow.submission)),
            )
            for row in session.scalars(orphans):
                _give_up(row, "its admission was lost in a restart of an older server; submit "
                         "it again")  # fmt: skip

    def close(self) -> None:
        """Close the engine's pooled connections."""
        self.engine.dispose()

    def generation(self) -> int:
        """The store's generation: it moves whenever what is served changes."""
        with self.engine.connect() as connection:
            value = connection.execute(
                select(GenerationRow.value).where(GenerationRow.id == 1)
            ).scalar_one()
        return int(value)

    @staticmethod
    def _bump(session: Session) -> None:
        row = session.get(GenerationRow, 1, with_for_update=True)
        assert row is not None  # made with the tables
        row.value += 1

    @staticmethod
    def _lock(session: Session) -> None:
        """Make ``session`` the store's only writer until it ends: it writes the generation row
        unchanged, which on SQLite opens the transaction and takes the write lock (SQLite's
        driver begins a transaction only at the first write, so what is read before that may be
        stale by the time it writes) and on PostgreSQL locks the row."""
        session.execute(
            update(GenerationRow).where(GenerationRow.id == 1).values(value=GenerationRow.value)
        )

    def submit(
        self,
        source: str,
        digest: str,
        submitter: str,
        rollouts: Sequence[Rollout] = (),
        *,
        max_queued: int,
    ) -> str:
        """Record a pending submission and queue its admission; its id. Raises ``Overloaded``
        when ``max_queued`` submissions are queued or being admitted already (all replicas: the
        count and the insert are one writer's turn, ``_lock``)."""
        submission = uuid.uuid4().hex
        with Session(self.engine) as session, session.begin():
            self._lock(session)
            waiting = session.scalar(select(func.count()).select_from(JobRow)) or 0
            if waiting >= max_queued:
                raise Overloaded(
                    f"{waiting} submissions are queued or being admitted, the most this store "
                    f"takes (ENVSERVER_EVO_MAX_QUEUED={max_queued})",
                    retry_after_s=RETRY_AFTER_S,
                )
            if session.get(SourceRow, digest) is None:
                session.add(SourceRow(digest=digest, text=source))
            session.add(
                SubmissionRow(
                    id=submission, digest=digest, submitter=submitter, submitted_at=_now(),
                    status="pending", reason="", reports=[],
                )
            )  # fmt: skip
            session.flush()  # the submission before its job (the job's foreign key)
            session.add(
                JobRow(
                    submission=submission, enqueued=time.time(), attempts=0,
                    rollouts=[[r.seed, r.difficulty, r.response] for r in rollouts],
                )
            )  # fmt: skip
        return submission

    def claim(self, owner: str, lease_s: float) -> Job | None:
        """The oldest job no live lease holds, now held by ``owner`` for ``lease_s`` seconds;
        None when there is none. A job claimed more than ``MAX_ATTEMPTS`` times is given up
        (status ``error``) instead, and the next one claimed."""
        while True:
            now = time.time()
            with Session(self.engine) as session, session.begin():
                candidates = session.scalars(
                    select(JobRow.submission)
                    .where(_free(now))
                    .order_by(JobRow.enqueued)
                    .limit(_CLAIM_CANDIDATES)
                ).all()
                if not candidates:
                    return None
                taken = next(
                    (c for c in candidates if _take(session, c, owner, now, lease_s)), None
                )
                if taken is None:
                    continue  # every candidate went to another worker: look again
                job = session.get(JobRow, taken, populate_existing=True)
                row = session.get(SubmissionRow, taken)
                assert job is not None and row is not None  # the job's foreign key
                if job.attempts > MAX_ATTEMPTS:
                    _give_up(row, f"its admission was interrupted {MAX_ATTEMPTS} times (the "
                             "server admitting it stopped each time); submit it again")  # fmt: skip
                    session.delete(job)
                    continue
                source = session.get(SourceRow, row.digest)
                assert source is not None  # the submission's foreign key
                return Job(
                    submission=taken,
                    source=source.text,
                    rollouts=tuple(Rollout(*rollout) for rollout in job.rollouts),
                    attempts=job.attempts,
                )

    def renew(self, owner: str, submissions: Collection[str], lease_s: float) -> None:
        """Extend ``owner``'s leases on ``submissions`` by ``lease_s`` from now (those it lost
        stay lost: their verdicts will be refused, ``record``)."""
        if not submissions:
            return
        with Session(self.engine) as session, session.begin():
            session.execute(
                update(JobRow)
                .where(JobRow.owner == owner, JobRow.submission.in_(list(submissions)))
                .values(lease_until=time.time() + lease_s)
            )

    def release(self, owner: str) -> None:
        """Hand back every job ``owner`` holds (a server stopping): free at once for any worker,
        and not counted as an attempt."""
        with Session(self.engine) as session, session.begin():
            session.execute(
                update(JobRow)
                .where(JobRow.owner == owner)
                .values(owner=None, lease_until=None, attempts=JobRow.attempts - 1)
            )

    def counts(self) -> QueueCounts:
        """What the queue holds now (all replicas on this store)."""
        now = time.time()
        running = case((JobRow.lease_until >= now, 1), else_=0)
        with Session(self.engine) as session:
            jobs, held, oldest = session.execute(
                select(
                    func.count(), func.coalesce(func.sum(running), 0), func.min(JobRow.enqueued)
                ).select_from(JobRow)
            ).one()
        return QueueCounts(
            queued=int(jobs) - int(held),
            running=int(held),
            oldest_s=max(0.0, now - oldest) if oldest is not None else 0.0,
        )

    def record(self, submission: str, admission: Admission, owner: str) -> Submission:
        """Store the verdict of the job ``owner`` holds and end the job; an admitted
        environment becomes the newest version of its name (the older versions are retired).
        Raises ``StoreConflict`` when ``owner`` no longer holds it (the verdict is another
        worker's to record), a ``DatabaseError`` when the store fails ``RACE_TRIES`` times."""

        def write() -> None:
            with Session(self.engine) as session, session.begin():
                # One writer at a time (``_lock``): the versions of a name are read and the next
                # one written with no other admission in between, on any replica.
                self._lock(session)
                job = session.get(JobRow, submission)
                if job is None or job.owner != owner:
                    holder = "nobody" if job is None or job.owner is None else job.owner
                    raise StoreConflict(
                        f"submission {submission}: {owner} no longer holds its admission "
                        f"(now {holder}); its verdict is not recorded"
                    )
                row = session.get(SubmissionRow, submission)
                assert row is not None  # the job's foreign key
                row.status, row.stage, row.reason = (
                    admission.outcome, admission.stage, admission.reason,
                )  # fmt: skip
                row.reports = [asdict(report) for report in admission.reports]
                if admission.outcome == "admitted" and admission.metadata is not None:
                    self._add_env(session, row, admission)
                    self._bump(session)
                session.delete(job)

        race(write)
        return self.submission(submission)

    def fail(self, submission: str, owner: str, reason: str) -> None:
        """End the job ``owner`` holds with status ``error`` and ``reason`` (its admission
        failed in a way that retrying cannot mend); nothing when it no longer holds it."""
        with Session(self.engine) as session, session.begin():
            job = session.get(JobRow, submission)
            if job is None or job.owner != owner:
                return
            row = session.get(SubmissionRow, submission)
            assert row is not None  # the job's foreign key
            _give_up(row, reason)
            session.delete(job)

    @staticmethod
    def _add_env(session: Session, row: SubmissionRow, admission: Admission) -> None:
        meta = admission.metadata
        assert meta is not None
        older = session.scalars(select(EnvRow).where(EnvRow.name == meta.name)).all()
        for env in older:
            env.retired = True
        version = 1 + max((env.version for env in older), default=0)
        session.add(
            EnvRow(
                name=meta.name, version=version, digest=admission.digest, submission=row.id,
                description=meta.description, difficulties=list(meta.difficulties),
                answer_format=meta.answer_format, normalised=admission.normalised,
                fingerprint=list(admission.fingerprint),
                pass_rates={str(k): v for k, v in admission.pass_rates.items()},
                admitted_at=_now(), retired=False,
            )
        )  # fmt: skip
        row.env_name, row.env_version = meta.name, version

    def plant(self, admitted: list[tuple[str, Admission]], submitter: str) -> list[str]:
        """Add each admitted ``(source, admission)`` whose name this store never served (the
        seeds on first open; a retired seed stays retired); the names added. Processes that
        plant at once take turns (``_lock``): the later finds the names taken."""
        planted: list[str] = []

        def write() -> None:
            planted.clear()
            with Session(self.engine) as session, session.begin():
                # Read what is taken only once no other process can plant: two processes that
                # both read "none taken" would each plant every seed, the later as version 2.
                self._lock(session)
                taken = set(session.scalars(select(EnvRow.name)).all())
                for source, admission in admitted:
                    meta = admission.metadata
                    if meta is None or meta.name in taken:
                        continue
                    if session.get(SourceRow, admission.digest) is None:
                        session.add(SourceRow(digest=admission.digest, text=source))
                    row = SubmissionRow(
                        id=uuid.uuid4().hex, digest=admission.digest, submitter=submitter,
                        submitted_at=_now(), status="admitted", stage=None, reason="",
                        reports=[asdict(report) for report in admission.reports],
                    )  # fmt: skip
                    session.add(row)
                    session.flush()
                    self._add_env(session, row, admission)
                    planted.append(meta.name)
                if planted:
                    self._bump(session)

        race(write)
        return planted

    def submission(self, submission: str) -> Submission:
        """The submission ``submission``; raises KeyError when there is none."""
        with Session(self.engine) as session:
            row = session.get(SubmissionRow, submission)
            if row is None:
                raise KeyError(submission)
            return Submission(
                id=row.id, digest=row.digest, submitter=row.submitter,
                submitted_at=row.submitted_at.isoformat(), status=row.status, stage=row.stage,
                reason=row.reason, reports=json.loads(json.dumps(row.reports)),
                env=f"evo/{row.env_name}@{row.env_version}" if row.env_name else None,
            )  # fmt: skip

    def envs(self, *, include_retired: bool = False) -> list[StoredEnv]:
        """The admitted environments (the serving ones only, by default), by name."""
        query = select(EnvRow, SourceRow.text).join(SourceRow, EnvRow.digest == SourceRow.digest)
        if not include_retired:
            query = query.where(EnvRow.retired.is_(False))
        with Session(self.engine) as session:
            rows = session.execute(query.order_by(EnvRow.name, EnvRow.version)).all()
            return [_stored(env, text) for env, text in rows]

    def latest(self, name: str) -> StoredEnv | None:
        """The newest version of ``name``, retired or not; None when never admitted."""
        versions = [env for env in self.envs(include_retired=True) if env.name == name]
        return versions[-1] if versions else None

    def pool(self) -> list[PoolEntry]:
        """The serving environments as the novelty check compares with them."""
        with Session(self.engine) as session:
            rows = session.scalars(select(EnvRow).where(EnvRow.retired.is_(False))).all()
            return [PoolEntry(r.name, r.normalised, tuple(r.fingerprint)) for r in rows]

    def set_retired(self, name: str, retired: bool) -> StoredEnv:
        """Retire (or restore) the newest version of ``name``; raises KeyError when it was
        never admitted."""
        with Session(self.engine) as session, session.begin():
            row = session.scalars(
                select(EnvRow).where(EnvRow.name == name).order_by(EnvRow.version.desc())
            ).first()
            if row is None:
                raise KeyError(name)
            row.retired = retired
            self._bump(session)
        latest = self.latest(name)
        assert latest is not None
        return latest


def _free(now: float) -> ColumnElement[bool]:
    """A job no live lease holds."""
    return or_(JobRow.lease_until.is_(None), JobRow.lease_until < now)


def _take(session: Session, submission: str, owner: str, now: float, lease_s: float) -> bool:
    """Claim ``submission`` for ``owner`` if no live lease holds it: a compare and set, so of
    workers claiming one job at once one changes the row (PostgreSQL checks the condition again
    on a row another claim just changed; SQLite has one writer at a time)."""
    claimed = session.execute(
        update(JobRow)
        .where(JobRow.submission == submission, _free(now))
        .values(owner=owner, lease_until=now + lease_s, attempts=JobRow.attempts + 1)
    )
    return cast(CursorResult[Any], claimed).rowcount == 1


def _give_up(row: SubmissionRow, reason: str) -> None:
    row.status, row.stage, row.reason = "error", None, reason


def _stored(env: EnvRow, text: str) -> StoredEnv:
    return StoredEnv(
        name=env.name, version=env.version, digest=env.digest, source=text,
        description=env.description, difficulties=tuple(env.difficulties),
        answer_format=env.answer_format, pass_rates=dict(env.pass_rates),
        submission=env.submission, admitted_at=env.admitted_at.isoformat(), retired=env.retired,
    )  # fmt: skip


def open_store(url: str) -> Store:
    """The store at ``url``, with the seeds planted where their names were never served
    (``seeding``). Each process opens its own (the core does, after any fork: a child that used
    its parent's pooled connections would talk over the parent's sockets)."""
    store = Store(url)
    planted = store.plant(seed_admissions(), SUBMITTER)
    if planted:
        log.info("evo: the store at %s now serves the seeds %s", masked(url), ", ".join(planted))
    return store
