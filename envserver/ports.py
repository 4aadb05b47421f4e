"""Whether the server can listen where it is told to, checked before anything starts.

Uvicorn binds its socket only after the application has loaded and, with several server
processes, after they have started; a busy port then surfaced seconds later as a worker's
traceback. ``check_port`` binds a probe the way uvicorn does (``SO_REUSEADDR``, so a port a
stopped server left in TIME_WAIT is free) and, when another process listens there, says which.
"""

from __future__ import annotations

import errno
import socket
from pathlib import Path

from envserver.config import ConfigError


def check_port(host: str, port: int) -> None:
    """Raise ``ConfigError`` (one line) when the server could not listen on ``host:port``,
    naming the process that holds the port when this user can see it. Port 0 (any free port)
    always binds."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise ConfigError(f"ENVSERVER_HOST {host!r} does not resolve: {exc.strerror}") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            where = f"{host}:{port}"
            if exc.errno != errno.EADDRINUSE:
                raise ConfigError(f"cannot listen on {where}: {exc.strerror}") from None
            raise ConfigError(
                f"{where} is in use by {holder(port)}: stop it, or serve on another port "
                "(--port or ENVSERVER_PORT)"
            ) from None


def holder(port: int) -> str:
    """Who listens on TCP ``port`` here: ``pid N (command line)``, read from ``/proc`` (Linux),
    or a description of what could not be seen."""
    sockets = _listening(port)
    if not sockets:
        return "another process"
    for process in Path("/proc").iterdir():
        if not process.name.isdigit():
            continue
        try:
            held = {str(fd.readlink()) for fd in (process / "fd").iterdir()}
            if held & sockets:
                command = (process / "cmdline").read_bytes().replace(b"\0", b" ").strip()
                return f"pid {process.name} ({command.decode(errors='replace')[:160]})"
        except OSError:  # gone, or another user's: its descriptors cannot be read
            continue
    return "a process this user cannot see (another user's, or outside this container)"


def _listening(port: int) -> set[str]:
    """The ``socket:[inode]`` links of the TCP sockets listening on ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            listening = fields[3] == "0A"  # TCP_LISTEN
            if listening and int(fields[1].rsplit(":", 1)[1], 16) == port:
                found.add(f"socket:[{fields[9]}]")
    return found
