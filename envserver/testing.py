"""A real server process on loopback, for end-to-end tests and benchmarks (the project's own and
a plugin family's): ``LiveServer`` runs ``envserver serve`` from the same source this module was
imported from, on a free port, with its own data directory."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx

SOURCE = Path(__file__).resolve().parents[1]
"""The folder the project's packages were imported from: a server started here runs them."""


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """``envserver serve`` as its own process, configured through ``ENVSERVER_*`` variables.

    ``start`` waits for ``/readyz``; the server's output goes to ``<workdir>/server.log``.
    ``args`` are options of ``serve`` (``--workers 2``).
    """

    def __init__(self, workdir: Path, *args: str, **env: str) -> None:
        self.args = args
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / "server.log"
        self.env = {
            **os.environ,
            "ENVSERVER_HOST": "127.0.0.1",
            "ENVSERVER_PORT": str(self.port),
            "ENVSERVER_DATA_DIR": str(workdir / "data"),
            "ENVSERVER_LOG_LEVEL": "warning",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(SOURCE), os.getenv("PYTHONPATH")])),
            **env,
        }
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 180) -> LiveServer:
        """Start and wait until ready; raises RuntimeError with the server's log otherwise."""
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
                [sys.executable, "-m", "envserver.cli", "serve", *self.args],
                cwd=SOURCE,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return self.wait_ready(timeout_s)

    def wait_ready(self, timeout_s: float = 180) -> LiveServer:
        """Wait until ``process`` (started by ``start``, or by a caller with its own command
        line) answers ``/readyz`` with 200; raises RuntimeError with the server's log, after
        stopping it, when it exits or the time runs out first."""
        if self.process is None:
            raise RuntimeError("the server was not started")
        deadline = time.monotonic() + timeout_s
        # One client for every probe: httpx.get builds a client (and its TLS context) per call,
        # about 40 ms of CPU, and a server starting on a loaded machine is probed for seconds.
        with httpx.Client(timeout=1) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"server exited:\n{self.log.read_text()}")
                try:
                    if client.get(f"{self.base_url}/readyz").status_code == 200:
                        return self
                except httpx.TransportError:
                    pass
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"server did not become ready:\n{self.log.read_text()}")

    def stop(self) -> None:
        """Terminate gracefully, then kill."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
