"""The one way a store here opens its database: a SQLAlchemy URL, SQLite by default (a file under
the server's data directory), PostgreSQL when replicas share it.

EvoEnv's store (``environments/evo/store.py``) and the service's task statistics
(``envserver/stats_store.py``) both open their engines here, so both are configured the same
way (one URL each; they may name the same PostgreSQL database: their tables do not collide),
each process opens its own after any fork, and the first processes to open a fresh database
race to create its schema without failing.

Imported only by those stores: SQLAlchemy is an optional dependency.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import create_engine
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DatabaseError

RACE_TRIES = 5
"""Attempts at a write that another process may make at the same moment (the schema, the
seeds): the loser's transaction fails on a unique constraint or a lock, and finds it done."""
DIALECTS = ("sqlite", "postgresql")
"""The databases the stores are written and tested for."""


def open_engine(url: str) -> Engine:
    """An engine for ``url`` (a SQLite file's folder is made; pooled connections are checked
    before use, so a database restarted under a long-running server is reconnected). Raises
    ``ValueError`` for a database other than SQLite or PostgreSQL."""
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, pool_pre_ping=True)
    if engine.dialect.name not in DIALECTS:
        engine.dispose()
        raise ValueError(f"a store must be SQLite or PostgreSQL, not {engine.dialect.name}")
    return engine


def masked(url: str) -> str:
    """``url`` as it may be logged or shown: its password replaced by ``***``."""
    return make_url(url).render_as_string(hide_password=True)


def race(write: Callable[[], None]) -> None:
    """Run ``write`` (one transaction), again after a database error while another process may
    be making the same write (``RACE_TRIES`` attempts, then the error)."""
    for attempt in range(RACE_TRIES):
        try:
            write()
            return
        except DatabaseError:
            if attempt == RACE_TRIES - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
