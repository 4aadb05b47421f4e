"""The server's sandbox: started with the app, lent to the verifier workers over a Unix socket,
and called by the ``/v1/sandbox`` routes and SandboxFusion's ``/run_code``.

Sandbox calls block on worker pipes, so they run on a thread pool of their own (the event loop
only awaits); the workers themselves are separate processes doing the real work.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from envserver.config import Settings
from envserver.problems import Problem, problem_for
from envserver.wire import ProblemKind
from sandbox import use_server
from sandbox.backends import SandboxConfig, memory_share, open_sandbox
from sandbox.model import MODEL_MAXIMA, Limits
from sandbox.pool import Overloaded, PoolHealth
from sandbox.remote import SandboxSocketServer
from sandbox.runner import Sandbox, SandboxInputError

log = logging.getLogger("envserver")
T = TypeVar("T")
NO_SANDBOX = "this server runs no sandbox (ENVSERVER_SANDBOX_BACKEND=none)"
FIX = (
    "Fix that and restart, or choose another ENVSERVER_SANDBOX_BACKEND (now {backend}; "
    "'none' serves without running programs)"
)


def maxima(settings: Settings, workers: int) -> Limits:
    """The most a request may ask of the sandbox, from the settings."""
    return Limits(
        wall_s=settings.sandbox_max_wall_s,
        cpu_s=settings.sandbox_max_wall_s,
        memory_mb=settings.sandbox_max_memory_mb or memory_share(workers),
        output_bytes=settings.sandbox_max_output_bytes,
        file_mb=settings.sandbox_max_file_mb,
        processes=settings.sandbox_max_processes,
        open_files=settings.sandbox_max_open_files,
    )


@dataclass(eq=False)  # hashable by identity: it is registered as a Prometheus collector
class SandboxHost:
    """The sandbox (None when it could not start, with the reason) and its socket."""

    sandbox: Sandbox | None
    reason: str
    socket_path: str | None
    _server: SandboxSocketServer | None
    _threads: ThreadPoolExecutor
    _socket_dir: str | None = None
    _restore: Callable[[], None] | None = None

    @classmethod
    def start(cls, settings: Settings) -> SandboxHost:
        """Start the workers with the configured backend. A failure leaves the server up but
        not ready (``/readyz`` answers 503 with the reason and the fix), items that run programs
        score ``error``, never 0, and nothing starts another backend in its place. Backend
        ``none`` starts no sandbox, on purpose: the server is ready, and such items score
        ``error``."""
        if settings.sandbox_backend == "none":
            log.info("sandbox: none (ENVSERVER_SANDBOX_BACKEND=none): no program runs here")
            return cls(None, NO_SANDBOX, None, None, ThreadPoolExecutor(max_workers=1))
        config = SandboxConfig(
            backend=settings.sandbox_backend,
            workers=settings.sandbox_workers,
            docker_image=settings.sandbox_docker_image,
            docker_runtime=settings.sandbox_docker_runtime,
            cgroup_parent=settings.sandbox_cgroup,
        )
        config = replace(config, max_limits=maxima(settings, config.size()))
        threads = ThreadPoolExecutor(
            max_workers=4 * config.size() + 4, thread_name_prefix="sandbox"
        )
        try:
            sandbox = open_sandbox(config)
        except OSError as exc:
            reason = f"{exc}. {FIX.format(backend=settings.sandbox_backend)}"
            log.error("the sandbox did not start: %s", reason)
            return cls(None, reason, None, None, threads)
        # A short path: Unix socket paths are limited to 107 bytes.
        socket_dir = tempfile.mkdtemp(prefix="envserver-")
        server = SandboxSocketServer(sandbox, str(Path(socket_dir) / "sandbox.sock"))
        log.info("sandbox: %d workers, isolation %s", sandbox.pool.size, sandbox.isolation)
        return cls(sandbox, "", server.path, server, threads, socket_dir)

    @property
    def problem(self) -> str:
        """Why the server is not ready for want of its sandbox ('' when it runs, or when
        ``none`` was chosen)."""
        return "" if self.sandbox is not None or self.reason == NO_SANDBOX else self.reason

    @property
    def isolation(self) -> str:
        """The isolation level in force, ``none`` (chosen) or ``unavailable`` (did not start)."""
        if self.sandbox is not None:
            return self.sandbox.isolation
        return "none" if self.reason == NO_SANDBOX else "unavailable"

    @property
    def maxima(self) -> Limits:
        """The most a request may ask for (the model's bounds when there is no sandbox)."""
        return self.sandbox.maxima if self.sandbox is not None else MODEL_MAXIMA

    def health(self) -> PoolHealth:
        """The sandbox pool's health: ``healthy`` while it is open and at least one worker
        runs (lost workers are replaced within seconds); never healthy without a sandbox."""
        if self.sandbox is None:
            return PoolHealth(size=0, alive=0, busy=0, waiting=0, restarts=0, healthy=False)
        return self.sandbox.pool.health()

    def serve_this_process(self) -> None:
        """Make it this process's sandbox (``sandbox.default()``) and its children's, as it is
        the verifier workers' (the server's own threads, a family's routes, reach it so), until
        ``close`` puts back what was there (a server that stops in a process that goes on)."""
        self._restore = use_server(self.socket_path, self.reason)

    def close(self) -> None:
        """Stop the socket and the workers."""
        if self._restore is not None:
            self._restore()
        if self._server is not None:
            self._server.close()
        if self.sandbox is not None:
            self.sandbox.close()
        self._threads.shutdown(wait=False, cancel_futures=True)
        if self._socket_dir:
            shutil.rmtree(self._socket_dir, ignore_errors=True)

    async def call(self, fn: Callable[[Sandbox], T]) -> T:
        """``fn(sandbox)`` on the sandbox threads, with its errors as problems."""
        sandbox = self.sandbox
        if sandbox is None:
            raise Problem(
                503,
                f"the sandbox is unavailable: {self.reason}",
                kind=ProblemKind.SANDBOX_UNAVAILABLE,
            )
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._threads, fn, sandbox)
        except (SandboxInputError, Overloaded) as exc:
            raise problem_for(exc) or exc from None

    def collect(self) -> Iterator[Metric]:
        """Prometheus collector: the pool's counters, read at scrape time."""
        pool = self.sandbox.pool if self.sandbox is not None else None
        workers = GaugeMetricFamily(
            "envserver_sandbox_workers",
            "Sandbox workers, by isolation level.",
            labels=["isolation"],
        )
        workers.add_metric([self.isolation], pool.size if pool else 0)
        yield workers
        yield GaugeMetricFamily(
            "envserver_sandbox_workers_alive",
            "Sandbox workers running now.",
            self.health().alive,
        )
        yield GaugeMetricFamily(
            "envserver_sandbox_busy",
            "Sandbox workers running a request now.",
            pool.busy if pool else 0,
        )
        yield GaugeMetricFamily(
            "envserver_sandbox_waiting",
            "Sandbox requests waiting for a worker.",
            pool.waiting if pool else 0,
        )
        yield CounterMetricFamily(
            "envserver_sandbox_requests", "Sandbox requests answered.", pool.runs if pool else 0
        )
        yield CounterMetricFamily(
            "envserver_sandbox_worker_restarts",
            "Sandbox workers replaced after dying, hanging or garbling.",
            pool.restarts if pool else 0,
        )
