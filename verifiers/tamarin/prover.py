"""Finding and running a ``tamarin-prover`` binary: every prover process of the project starts
here, so each one gets the same limits and dies with the process that started it."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from sandbox.linux import PR_SET_PDEATHSIG, prctl

PROVER_ENV = "TAMARIN_PROVER"
"""Names the binary (a path or a command on PATH); default ``tamarin-prover``."""
MEMORY_ENV = "ENVSERVER_TAMARIN_MEMORY_MB"
"""Address-space limit of one prover process (Tamarin plus its Maude child); default 8192."""


class ProverNotFound(RuntimeError):
    """No prover binary on this machine."""


@dataclass(frozen=True)
class Prover:
    """A prover binary and the version it reports."""

    path: str
    version: str

    def __str__(self) -> str:
        return f"{Path(self.path).name} {self.version}"


@cache
def find_prover(name: str | None = None) -> Prover | None:
    """The binary ``name`` (default: ``$TAMARIN_PROVER``, else ``tamarin-prover``) with its
    version, or None when there is none. Cached per process: a binary installed later needs a
    restart."""
    path = shutil.which(name or os.environ.get(PROVER_ENV, "tamarin-prover"))
    if path is None:
        return None
    try:
        out = subprocess.run(  # noqa: S603 - a configured binary, fixed arguments
            [path, "--version"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    version = next(
        (line.split()[-1] for line in out.splitlines() if line.startswith("tamarin-prover")),
        "unknown",
    )
    return Prover(path, version)


def _limits() -> None:  # pragma: no cover - runs in the child between fork and exec
    # Die with the worker that started us, so a killed worker leaves no prover behind.
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    memory = int(os.environ.get(MEMORY_ENV, "8192")) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def start(args: Sequence[str], cwd: str) -> subprocess.Popen[bytes]:
    """Start a prover process in its own session (so ``stop`` reaches Maude too), with a
    memory limit, no core dumps and no stdin; stdout and stderr are pipes."""
    return subprocess.Popen(  # noqa: S603 - the configured prover binary
        list(args),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_limits,  # noqa: PLW1509 - the worker is single-threaded when it spawns
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    """Kill the process's whole session and reap it; idempotent."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    process.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def run(args: Sequence[str], cwd: str, timeout_s: float) -> tuple[int, str, str]:
    """Run a prover to completion; returns ``(exit code, stdout, stderr)``.

    Raises TimeoutError after ``timeout_s`` (the process tree is killed and reaped first).
    """
    process = start(args, cwd)
    try:
        out, err = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop(process)
        raise TimeoutError(f"the prover ran past {timeout_s:g} s and was stopped") from None
    finally:
        if process.returncode is None:
            stop(process)
    return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")
