"""The family's settings: the server's data directory, and ``ENVSERVER_EVO_*`` variables (the
core builds them once per process, see ``environments.extension``)."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from environments.extension import FamilySettings

PROBE_KEY_FILE = "evo-probes.key"
"""The generated probe secret's file in the data directory (``probe_secret`` unset)."""
MIN_SECRET_CHARS = 16


class EvoSettings(FamilySettings):
    """``store``: SQLAlchemy URL of the store (empty: SQLite under the server's data directory;
    a ``postgresql+psycopg://`` URL when replicas share it). ``reviewer_url`` and
    ``solver_url``: OpenAI-compatible chat-completions endpoints for L3 and L4 (empty: rule
    review, and calibration from supplied rollouts only). ``pass_band``: the pass rates L4
    admits at every difficulty level (``low,high``). ``probe_secret``: what admission draws its
    probes from (the secret task seeds and answers of the search for shortcuts; unset: a key
    generated once in the data directory). It is never published: a submission that could know
    its probes could pay them alone. ``symbolic_cpu_s``: the CPU seconds CrossHair spends searching
    a submission's scorer, shared by its two searches (0 turns the symbolic search off).
    ``admission_cpu_s``: the sandbox CPU seconds one admission may spend, all its runs together
    (a submission that needs more is refused, with the stage it reached).

    The admission queue (``jobs``): ``admission_workers`` threads in each server process admit
    submissions one at a time each (0: this server admits none and only serves; another replica
    on the store admits them); at most ``max_queued`` submissions wait or are being admitted in
    the store, all replicas together (more are refused with 429); a worker holds its submission
    for ``lease_s`` seconds at a time, renewed while it works, so the submission of a server that
    stopped is taken again by any worker once that lapses."""

    model_config = SettingsConfigDict(env_prefix="ENVSERVER_EVO_")

    store: str = ""
    reviewer_url: str = ""
    solver_url: str = ""
    model: str = "default"
    pass_band: Annotated[tuple[float, float], NoDecode] = (0.05, 0.95)
    solver_samples: int = Field(8, ge=1)
    probe_secret: SecretStr | None = None
    symbolic_cpu_s: float = Field(1.0, ge=0.0, le=60.0)
    admission_cpu_s: float = Field(300.0, gt=0.0)
    admission_workers: int = Field(1, ge=0, le=64)
    max_queued: int = Field(64, ge=1)
    lease_s: float = Field(30.0, ge=1.0, le=3600.0)

    @field_validator("pass_band", mode="before")
    @classmethod
    def _band(cls, value: Any) -> Any:
        low, high = (float(v) for v in value.split(",")) if isinstance(value, str) else value
        if not 0.0 <= low < high <= 1.0:
            raise ValueError("the pass band must be 'low,high' with 0 <= low < high <= 1")
        return low, high

    @field_validator("probe_secret")
    @classmethod
    def _secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_SECRET_CHARS:
            raise ValueError(f"the probe secret must be at least {MIN_SECRET_CHARS} characters")
        return value

    @property
    def store_url(self) -> str:
        """The store's URL: ``store``, or SQLite in the data directory."""
        return self.store or f"sqlite:///{self.data_dir / 'evo.sqlite'}"

    def probe_key(self) -> bytes:
        """The probe secret: ``probe_secret``, else the key file in the data directory, made
        once (32 random bytes, mode 0600; concurrent first admissions agree on one key).
        Raises ``OSError`` when the file can be neither made nor read."""
        if self.probe_secret is not None:
            return self.probe_secret.get_secret_value().encode()
        return _key_file(self.data_dir / PROBE_KEY_FILE)


def _key_file(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(secrets.token_hex(32).encode())
    try:
        os.link(temporary, path)  # fails when another process made the key first: keep theirs
    except FileExistsError:
        pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
    key = path.read_bytes().strip()
    if len(key) < MIN_SECRET_CHARS:
        raise OSError(f"the probe key file {path} is too short; delete it to make a new one")
    return key
