"""The family's settings: the server's data directory, and ``ENVSERVER_EVO_*`` variables (the
core builds them once per process, see ``environments.extension``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from environments.extension import FamilySettings


class EvoSettings(FamilySettings):
    """``store``: SQLAlchemy URL of the store (empty: SQLite under the server's data directory;
    a ``postgresql+psycopg://`` URL when replicas share it). ``reviewer_url`` and
    ``solver_url``: OpenAI-compatible chat-completions endpoints for L3 and L4 (empty: rule
    review, and calibration from supplied rollouts only). ``pass_band``: the pass rates L4
    admits at every difficulty level (``low,high``)."""

    model_config = SettingsConfigDict(env_prefix="ENVSERVER_EVO_")

    store: str = ""
    reviewer_url: str = ""
    solver_url: str = ""
    model: str = "default"
    pass_band: Annotated[tuple[float, float], NoDecode] = (0.05, 0.95)
    solver_samples: int = Field(8, ge=1)

    @field_validator("pass_band", mode="before")
    @classmethod
    def _band(cls, value: Any) -> Any:
        low, high = (float(v) for v in value.split(",")) if isinstance(value, str) else value
        if not 0.0 <= low < high <= 1.0:
            raise ValueError("the pass band must be 'low,high' with 0 <= low < high <= 1")
        return low, high

    @property
    def store_url(self) -> str:
        """The store's URL: ``store``, or SQLite in the data directory."""
        return self.store or f"sqlite:///{self.data_dir / 'evo.sqlite'}"
