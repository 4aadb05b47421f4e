"""The store of submissions and admitted environments (SQLAlchemy: SQLite by default,
PostgreSQL when replicas share it).

Sources are content-addressed by their SHA-256; an admitted environment is a (name, version)
pointing at one source, never changed in place: code under a taken name is a new version, and
the older one is retired. Every submission keeps its provenance (submitter, time, stage reports).
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    select,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from environments.evo.admission import Admission
from environments.evo.novelty import PoolEntry
from environments.evo.seeding import SUBMITTER, seed_admissions
from environments.sql import open_engine, race

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


class StoreConflict(Exception):
    """The request contradicts the store (restore a superseded version, say)."""


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

    def public(self) -> dict[str, Any]:
        """What ``GET /v1/evo/envs`` shows (not the source)."""
        shown = asdict(self)
        del shown["source"]
        return {"id": f"evo/{self.name}", **shown}


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

    def submit(self, source: str, digest: str, submitter: str) -> str:
        """Record a pending submission; its id."""
        submission = uuid.uuid4().hex
        with Session(self.engine) as session, session.begin():
            if session.get(SourceRow, digest) is None:
                session.add(SourceRow(digest=digest, text=source))
            session.add(
                SubmissionRow(
                    id=submission, digest=digest, submitter=submitter, submitted_at=_now(),
                    status="pending", reason="", reports=[],
                )
            )  # fmt: skip
        return submission

    def record(self, submission: str, admission: Admission) -> Submission:
        """Store the verdict; an admitted environment becomes the newest version of its name
        (the older versions are retired)."""
        for _ in range(3):  # two replicas admitting one name at once: the loser retries
            try:
                with Session(self.engine) as session, session.begin():
                    row = session.get(SubmissionRow, submission)
                    if row is None:
                        raise KeyError(submission)
                    row.status, row.stage, row.reason = (
                        admission.outcome, admission.stage, admission.reason,
                    )  # fmt: skip
                    row.reports = [asdict(report) for report in admission.reports]
                    if admission.outcome == "admitted" and admission.metadata is not None:
                        self._add_env(session, row, admission)
                        self._bump(session)
                break
            except IntegrityError:
                continue
        return self.submission(submission)

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
        log.info("evo: the store at %s now serves the seeds %s", url, ", ".join(planted))
    return store
