"""Choosing a backend at start-up: Docker when an engine and the worker image are there, else
local workers with full isolation, else (namespaces refused) weak isolation, loudly reported."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sandbox.pool import SandboxPool, local_factory
from sandbox.runner import Sandbox

log = logging.getLogger("envserver.sandbox")

Backend = Literal["auto", "local", "weak", "docker"]


@dataclass(frozen=True)
class SandboxConfig:
    """How to start the sandbox (the server fills this from ``ENVSERVER_SANDBOX_*``)."""

    backend: Backend = "auto"
    workers: int = 0  # 0: twice the CPU count, at least 2
    workdir: str = ""  # weak isolation's scratch space on the host; a temp dir by default
    docker_image: str = "envserver-sandbox:latest"
    docker_runtime: str = ""  # e.g. "runsc" for gVisor
    docker_recycle_after: int = 500

    def size(self) -> int:
        """The number of workers."""
        return self.workers or max(2, 2 * (os.cpu_count() or 1))


def open_sandbox(config: SandboxConfig = SandboxConfig()) -> Sandbox:
    """Start workers with the strongest backend ``config`` allows; ``OSError`` if none starts."""
    if config.backend in ("auto", "docker"):
        from sandbox import docker  # noqa: PLC0415 - the docker SDK is optional

        problem = docker.unavailable(config.docker_image)
        if problem is None:
            return Sandbox(SandboxPool(docker.factory(config), config.size()))
        if config.backend == "docker":
            raise OSError(f"the docker backend is unavailable: {problem}")
        log.info("sandbox: docker backend unavailable (%s); using local workers", problem)
    if config.backend in ("auto", "local"):
        try:
            return Sandbox(SandboxPool(local_factory("full", ""), config.size()))
        except OSError as exc:
            if config.backend == "local":
                raise
            log.warning(
                "sandbox: namespaces are refused here (%s); falling back to WEAK isolation "
                "(rlimits, seccomp, own uid): the host filesystem is visible to programs",
                exc,
            )
    if config.workdir:
        return Sandbox(SandboxPool(local_factory("weak", config.workdir), config.size()))
    workdir = tempfile.mkdtemp(prefix="envserver-sandbox-")
    Path(workdir).chmod(0o711)  # runs (another uid) traverse to their scratch directories
    try:
        pool = SandboxPool(local_factory("weak", workdir), config.size())
    except OSError:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    return Sandbox(pool, owned_dir=workdir)
