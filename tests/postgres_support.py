"""A real PostgreSQL server for the tests, from Debian's ``postgresql`` package: ``initdb`` and
``pg_ctl`` as an unprivileged user, bound to 127.0.0.1, in a temporary directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, make_url, text

from tests.server import free_port


class PostgresUnavailable(RuntimeError):
    """The server could not start here; the message says why (the skip reason)."""


def _as_user(command: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root: run it as nobody, which owns the temporary directory.
    if os.geteuid() != 0:
        return command
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PostgresUnavailable("running as root without runuser to drop to 'nobody'")
    return [runuser, "-u", "nobody", "--", *command]


@contextmanager
def postgres_server() -> Iterator[str]:
    """A SQLAlchemy URL of a fresh PostgreSQL server, stopped and removed on exit; raises
    ``PostgresUnavailable`` when the binaries are missing or the server does not start."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if not found:
        raise PostgresUnavailable("no /usr/lib/postgresql/*/bin/pg_ctl: apt-get install postgresql")
    bindir = found[-1].parent
    root = Path(tempfile.mkdtemp(prefix="evo-pg-", dir="/tmp"))
    root.chmod(0o755)
    if os.geteuid() == 0:
        shutil.chown(root, "nobody")
    data, port = str(root / "data"), free_port()
    try:
        init = subprocess.run(
            _as_user([f"{bindir}/initdb", "-D", data, "-U", "evo", "--auth=trust", "-E", "UTF8"]),
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if init.returncode != 0:
            raise PostgresUnavailable(f"initdb failed: {init.stderr[-500:]}")
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root}"
        start = subprocess.run(
            _as_user([f"{bindir}/pg_ctl", "-D", data, "-o", options, "-l",
                      str(root / "log"), "-w", "-t", "60", "start"]),
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if start.returncode != 0:
            raise PostgresUnavailable(f"pg_ctl start failed: {start.stdout[-300:]}")
        try:
            yield f"postgresql+psycopg://evo@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                _as_user([f"{bindir}/pg_ctl", "-D", data, "-m", "fast", "-w", "stop"]),
                capture_output=True, check=False,
            )  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(server_url: str) -> str:
    """A new, empty database on the server at ``server_url`` (from ``postgres_server``): its
    URL. Tests that share one server start from an empty store this way."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {name}"))
    admin.dispose()
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)
