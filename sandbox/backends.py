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

from sandbox.model import MODEL_MAXIMA, Limits
from sandbox.pool import LocalFactory, SandboxPool
from sandbox.runner import Sandbox

log = logging.getLogger("envserver.sandbox")

Backend = Literal["auto", "local", "weak", "docker"]
MACHINE_SHARE = 0.8  # of physical memory, split between the workers, is the default maximum
DEFAULT_MAX_PROCESSES = 256


def memory_share(workers: int) -> int:
    """MiB a run may hold by default: ``MACHINE_SHARE`` of the machine's memory over the
    workers (runs of every worker at their maximum together stay within the machine), at least
    the default limit of 1 GiB and at most the model's 16 GiB."""
    total_mb = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") >> 20
    share = int(total_mb * MACHINE_SHARE) // max(1, workers)
    return max(Limits().memory_mb, min(MODEL_MAXIMA.memory_mb, share))


@dataclass(frozen=True)
class SandboxConfig:
    """How to start the sandbox (the server fills this from ``ENVSERVER_SANDBOX_*``)."""

    backend: Backend = "auto"
    workers: int = 0  # 0: twice the CPU count, at least 2
    workdir: str = ""  # weak isolation's scratch space on the host; a temp dir by default
    docker_image: str = "envserver-sandbox:latest"
    docker_runtime: str = ""  # e.g. "runsc" for gVisor
    docker_recycle_after: int = 500
    cgroup_parent: str = ""  # where the workers' memory cgroups go; '' : this process's own
    max_limits: Limits | None = None  # None: the model's, memory and processes sized here

    def size(self) -> int:
        """The number of workers."""
        return self.workers or max(2, 2 * (os.cpu_count() or 1))

    def maxima(self) -> Limits:
        """The most a request may ask for."""
        if self.max_limits is not None:
            return self.max_limits
        return MODEL_MAXIMA.model_copy(
            update={"memory_mb": memory_share(self.size()), "processes": DEFAULT_MAX_PROCESSES}
        )


def open_sandbox(config: SandboxConfig = SandboxConfig()) -> Sandbox:
    """Start workers with the strongest backend ``config`` allows; ``OSError`` if none starts."""
    maxima = config.maxima()
    if config.backend in ("auto", "docker"):
        from sandbox import docker  # noqa: PLC0415 - the docker SDK is optional

        problem = docker.unavailable(config.docker_image)
        if problem is None:
            return Sandbox(SandboxPool(docker.factory(config), config.size()), maxima=maxima)
        if config.backend == "docker":
            raise OSError(f"the docker backend is unavailable: {problem}")
        log.info("sandbox: docker backend unavailable (%s); using local workers", problem)
    if config.backend in ("auto", "local"):
        try:
            pool = SandboxPool(
                LocalFactory("full", "", cgroup_parent=config.cgroup_parent), config.size()
            )
            return Sandbox(pool, maxima=maxima)
        except OSError as exc:
            if config.backend == "local":
                raise
            log.warning("sandbox: full isolation is unavailable here (%s)", exc)
    log.warning(
        "sandbox: WEAK isolation (rlimits, seccomp, Landlock, own uid; no namespaces): the host "
        "filesystem is visible to programs where Landlock does not hide it, and they share the "
        "host's network namespace"
    )
    workdir, owned = config.workdir, ""
    if not workdir:
        workdir = owned = tempfile.mkdtemp(prefix="envserver-sandbox-")
        Path(workdir).chmod(0o711)  # runs (another uid) traverse to their scratch directories
    try:
        factory = LocalFactory("weak", workdir, cgroup_parent=config.cgroup_parent)
        pool = SandboxPool(factory, config.size())
    except OSError:
        if owned:
            shutil.rmtree(owned, ignore_errors=True)
        raise
    return Sandbox(pool, owned_dir=owned, maxima=maxima)
