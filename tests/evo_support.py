"""The evo tests' settings: an in-memory store and no model endpoints, as a server without
ENVSERVER_EVO_* variables would build them, and a probe secret of their own (a server makes one
in its data directory); fields given here, so the machine's environment cannot change what the
tests see."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from environments.evo.settings import EvoSettings

SETTINGS = EvoSettings(
    data_dir=Path(),
    store="sqlite://",
    reviewer_url="",
    solver_url="",
    model="default",
    pass_band=(0.05, 0.95),
    solver_samples=8,
    probe_secret=SecretStr("the evo tests' probe secret"),
    symbolic_cpu_s=1.0,
    admission_cpu_s=300.0,
    admission_workers=1,
    max_queued=64,
    lease_s=30.0,
)


def burning(source: str, iterations: int) -> str:
    """``source`` (an environment module) whose ``score`` first burns CPU: a sum over
    ``iterations`` squares (about 0.04 s of CPU per million), its verdicts unchanged."""
    marker = "def score(instance, response):\n"
    assert marker in source
    burn = f"    if sum(i * i for i in range({iterations})) < 0:\n        return None\n"
    return source.replace(marker, marker + burn, 1)
