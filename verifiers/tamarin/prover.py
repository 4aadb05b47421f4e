"""Finding a ``tamarin-prover`` binary, and the limits every prover process gets. Prover
processes start through ``sandbox.tools`` (own session, limits, dead with their worker).

Whether a prover is *there* (``locate_prover``: a look on PATH) is what decides, at import, if
the family serves; *running* it (``find_prover``, which asks its version) happens only when a
worker first needs it. Families are imported by the pool's fork server, and nothing started
there (a process, the thread that spawns it) survives into the workers forked from it.
"""

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


def locate_prover(name: str | None = None) -> str | None:
    """The path of the binary ``name`` (default: ``$TAMARIN_PROVER``, else ``tamarin-prover``),
    or None when there is none; starts nothing, so it is safe at import time."""
    return shutil.which(name or os.environ.get(PROVER_ENV, "tamarin-prover"))


@cache
def find_prover(name: str | None = None) -> Prover | None:
    """The binary ``name`` (as ``locate_prover``) with the version it reports, or None when
    there is none or it does not answer. Runs the binary: call it where a prover is about to
    run, never at import. Cached per process: a binary installed later needs a restart."""
    path = locate_prover(name)
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
