"""Finding a ``tamarin-prover`` binary, and the limits every prover process gets. Prover
processes start through ``sandbox.tools`` (own session, limits, dead with their worker)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from sandbox import tools
from sandbox.tools import ToolLimits

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
        out = tools.run([path, "--version"], timeout_s=60, limits=limits()).stdout
    except OSError:  # ToolTimeout included
        return None
    version = next(
        (line.split()[-1] for line in out.splitlines() if line.startswith("tamarin-prover")),
        "unknown",
    )
    return Prover(path, version)


def limits() -> ToolLimits:
    """A prover process's limits: ``$ENVSERVER_TAMARIN_MEMORY_MB`` of address space (Tamarin
    plus its Maude child each), no core dumps."""
    return ToolLimits(memory_mb=int(os.environ.get(MEMORY_ENV, "8192")))
