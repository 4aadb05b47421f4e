"""The ``docker`` backend: the same zygote worker, one per long-lived, locked-down container.

No container is created per run (seconds each); a pool of containers runs the worker loop and
is recycled after ``docker_recycle_after`` requests or any failure. Each container: no network,
read-only root, a size-capped tmpfs for scratch, memory = memory+swap, a pids limit, a CPU
quota, every capability dropped, ``no-new-privileges``, a non-root user, the engine's default
seccomp profile, and gVisor's ``runsc`` runtime when configured. The worker speaks frames on
the container's attached stdin/stdout (not ``docker exec``, which costs tens of ms per call).

Tested for real where an engine runs (``make engine``, ``make image``): tests/test_containers.py,
and the attack suite (tests/test_sandbox_attacks.py) runs through it.
"""

from __future__ import annotations

import contextlib
import secrets
import select
import socket
import struct
import time
from typing import TYPE_CHECKING, Any

from sandbox import frames
from sandbox.children import RUN_NICE_ENV
from sandbox.pool import (
    POOL_IDS,
    START_TIMEOUT_S,
    WORKER_ENV,
    WorkerFactory,
    WorkerLost,
    slot_index,
)

if TYPE_CHECKING:
    from sandbox.backends import SandboxConfig

# The image's own command starts the worker (its Dockerfile's CMD: the zygote, weak inside, its
# scratch under the container's /tmp), with the image's PATH, which leads to its interpreter.
CONTAINER_ENV = {name: value for name, value in WORKER_ENV.items() if name != "PATH"}
CONTAINER_ENV[RUN_NICE_ENV] = "10"  # the worker before its runs, within the container's CPU
_STDOUT = 1
CONTAINER_UID_BASE = 100_000
"""Each container worker runs as a uid of its own, from here up (a pool's 16 slots at a random
place among 2,048: below the local backend's run uids, which start at 200,000). The kernel
counts a run's process limit (``RLIMIT_NPROC``) per uid across the host: with one uid for every
container (the image's 65534), a fork bomb in one container, or a busy neighbour, made another
container's honest run fail to fork."""


def unavailable(image: str) -> str | None:
    """Why the backend cannot be used here, or None when an engine answers and has ``image``."""
    try:
        import docker  # noqa: PLC0415 - optional dependency
    except ImportError:
        return "the docker package is not installed (pip install 'envserver[docker]')"
    try:
        client = docker.from_env(timeout=3)
        client.ping()
        client.images.get(image)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"[:300]
    return None


class _Demux:
    """Reads the engine's multiplexed attach stream (8-byte headers: stream, size)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()
        self.stdout = bytearray()

    def pull(self, timeout_s: float) -> bool:
        ready, _, _ = select.select([self.sock], [], [], timeout_s)
        if not ready:
            return True
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            return False
        self.buffer += chunk
        while len(self.buffer) >= 8:
            stream, size = struct.unpack(">BxxxI", self.buffer[:8])
            if len(self.buffer) < 8 + size:
                break
            if stream == _STDOUT:
                self.stdout += self.buffer[8 : 8 + size]
            del self.buffer[: 8 + size]
        return True


class ContainerWorker:
    """One container running the zygote."""

    isolation = "container"
    memory_cap = "container"  # the container's own memory limit holds every run together

    def __init__(self, config: SandboxConfig, slot: int, uid: int) -> None:
        import docker  # noqa: PLC0415 - optional dependency

        self.client = docker.from_env(timeout=10)
        self.recycle_after = config.docker_recycle_after
        self.calls = 0
        api = self.client.api
        host_config = api.create_host_config(
            network_mode="none",
            read_only=True,
            # exec: the worker runs what it builds from here (Docker's tmpfs default is noexec).
            tmpfs={"/tmp": "rw,exec,nosuid,nodev,size=512m,mode=1777"},  # noqa: S108
            mem_limit="2g",
            memswap_limit="2g",
            pids_limit=256,
            nano_cpus=1_000_000_000,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            runtime=config.docker_runtime or None,
            auto_remove=True,
        )
        created = api.create_container(
            config.docker_image,
            user=f"{uid}:{uid}",
            stdin_open=True,
            tty=False,
            environment=CONTAINER_ENV,
            host_config=host_config,
            labels={"envserver.sandbox.slot": str(slot)},
        )
        self.id = created["Id"]
        raw = api.attach_socket(self.id, params={"stdin": 1, "stdout": 1, "stream": 1})
        self.sock: socket.socket = raw._sock
        api.start(self.id)
        self.demux = _Demux(self.sock)
        self.reader = frames.FrameReader()
        hello = self._receive(START_TIMEOUT_S)
        if hello.get("status") != "ok":
            self.close()
            raise OSError(str(hello.get("detail") or "the container worker did not start"))

    @property
    def exhausted(self) -> bool:
        """Time to recycle the container."""
        return self.calls >= self.recycle_after

    @property
    def alive(self) -> bool:
        """Whether its stream is still open (the engine is not asked: too slow to poll)."""
        return self.sock.fileno() != -1

    def _receive(self, timeout_s: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            if self.demux.stdout:
                found = self.reader.feed(bytes(self.demux.stdout))
                self.demux.stdout.clear()
                if found:
                    return dict(found[0])
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerLost(f"no reply within {timeout_s:.1f} s")
            if not self.demux.pull(left):
                raise WorkerLost("the container closed its stream")

    def call(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        self.calls += 1
        try:
            self.sock.sendall(frames.pack(request))
            reply = self._receive(timeout_s)
        except (OSError, frames.FrameError, WorkerLost) as exc:
            self.close()
            raise WorkerLost(str(exc)) from None
        if "isolation" in reply:  # the worker's own mode inside is weak; the container is ours
            reply["isolation"] = self.isolation
        return reply

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.sock.close()
        with contextlib.suppress(Exception):
            self.client.api.kill(self.id)


class _Factory:
    """Starts a container worker per slot, each as a uid of its own (``CONTAINER_UID_BASE``)."""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self.pool_id = secrets.randbelow(POOL_IDS)

    def __call__(self, slot: int) -> ContainerWorker:
        uid = CONTAINER_UID_BASE + slot_index(self.pool_id, slot)
        try:
            return ContainerWorker(self.config, slot, uid)
        except OSError:
            raise
        except Exception as exc:
            raise OSError(f"could not start a sandbox container: {exc}") from None

    def close(self) -> None:
        """Nothing to release: each container is removed when it stops."""


def factory(config: SandboxConfig) -> WorkerFactory:
    """Starts a container worker per slot."""
    return _Factory(config)
