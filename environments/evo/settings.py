"""The family's settings, from ``ENVSERVER_EVO_*`` variables (read where they are used, in the
server and in its workers alike)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class EvoSettings:
    """``store_url``: SQLAlchemy URL of the store (default: SQLite under the server's data
    directory; a ``postgresql+psycopg://`` URL when replicas share it). ``reviewer_url`` and
    ``solver_url``: OpenAI-compatible chat-completions endpoints for L3 and L4 (unset: rule
    review, and calibration from supplied rollouts only). ``pass_band``: the pass rates L4
    admits at every difficulty level."""

    store_url: str
    reviewer_url: str
    solver_url: str
    model: str
    pass_band: tuple[float, float]
    solver_samples: int

    @classmethod
    def from_environ(cls) -> EvoSettings:
        """The settings in ``os.environ``; raises ValueError on an unreadable band."""
        env = os.environ
        data_dir = Path(env.get("ENVSERVER_DATA_DIR", "data"))
        low, high = (float(v) for v in env.get("ENVSERVER_EVO_PASS_BAND", "0.05,0.95").split(","))
        if not 0.0 <= low < high <= 1.0:
            raise ValueError("ENVSERVER_EVO_PASS_BAND must be 'low,high' with 0 <= low < high <= 1")
        return cls(
            store_url=env.get("ENVSERVER_EVO_STORE") or f"sqlite:///{data_dir / 'evo.sqlite'}",
            reviewer_url=env.get("ENVSERVER_EVO_REVIEWER_URL", ""),
            solver_url=env.get("ENVSERVER_EVO_SOLVER_URL", ""),
            model=env.get("ENVSERVER_EVO_MODEL", "default"),
            pass_band=(low, high),
            solver_samples=int(env.get("ENVSERVER_EVO_SOLVER_SAMPLES", "8")),
        )
