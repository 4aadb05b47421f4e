"""Server configuration from ``ENVSERVER_*`` environment variables (pydantic-settings)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from sandbox.backends import SandboxConfig, memory_share


class ConfigError(ValueError):
    """A setting that cannot be used (a secret too short, an unreadable key file): the server
    refuses to start, and ``envserver serve`` prints this message as one line."""

    @classmethod
    def of(cls, exc: ValidationError, prefix: str = "ENVSERVER_") -> ConfigError:
        """A settings model's refusal as one line naming each variable (``prefix`` is the
        model's ``env_prefix``)."""
        return cls(
            "; ".join(
                f"{prefix}{'_'.join(map(str, error['loc'])).upper()}: "
                + error["msg"].removeprefix("Value error, ")
                for error in exc.errors()
            )
        )


S = TypeVar("S", bound=BaseSettings)


def family_settings(model: type[S], data_dir: Path) -> S:
    """A family's settings (``environments.extension.FamilySettings``) built with the server's
    data directory and the family's own variables; one that cannot be used is a ``ConfigError``
    naming its variable."""
    try:
        return model(data_dir=data_dir)
    except ValidationError as exc:
        raise ConfigError.of(exc, str(model.model_config.get("env_prefix", ""))) from None



def _default_pool_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def _plain(value: Any) -> str:
    return value.get_secret_value() if isinstance(value, SecretStr) else str(value)


class Settings(BaseSettings):
    """Every knob of the server; each one is ``ENVSERVER_<NAME>`` in the environment."""

    model_config = SettingsConfigDict(env_prefix="ENVSERVER_", extra="ignore")

    host: str = Field("127.0.0.1", description="Bind address; loopback unless exposed on purpose.")
    port: int = Field(8000, ge=0, le=65535)
    data_dir: Path = Field(Path("data"), description="Holds the generated state-token key file.")
    secret: SecretStr | None = Field(
        None,
        description="State-token secret: tokens are sealed with keys derived from it. Unset: a "
        "key file in data_dir, generated once. Replicas that share it accept each other's tokens.",
    )
    previous_secrets: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list,
        description="Older secrets still accepted when opening tokens (key rotation).",
    )
    api_keys: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list,
        description="Bearer keys, each 'name:key' or 'key'. Empty with no api_keys_file: open.",
    )
    api_keys_file: Path | None = Field(None, description="One 'name:key' or 'key' per line.")
    server_processes: int = Field(
        1,
        ge=1,
        le=64,
        description="Server processes sharing the port (state lives in tokens, so any process "
        "serves any call). The pool and sandbox workers below are split between them.",
    )
    pool_workers: int = Field(
        default_factory=_default_pool_workers,
        ge=1,
        le=256,
        description="Worker processes, in all (each server process gets its share, at least 1).",
    )
    warm_up: bool = Field(
        True,
        description="Each of the pool's first workers runs every verifier's example (models, "
        "parsers, solvers loaded: about 1.3 CPU-s a worker) before it takes items, and the "
        "server is ready once one has. Off: ready sooner, and the first call of each verifier "
        "in each worker pays that instead.",
    )
    max_queue_items: int = Field(
        4096, ge=1, description="Items waiting or running in the pool before answering 429."
    )
    max_batch_items: int = Field(2048, ge=1, description="Items in one batch request.")
    max_body_bytes: int = Field(16 * 1024 * 1024, ge=1024, description="Request body limit.")
    max_state_bytes: int = Field(
        4 * 1024 * 1024, ge=1024, description="Size limit of one state's JSON, sealed in a token."
    )
    max_item_timeout_s: float = Field(
        120.0, gt=0, description="Upper bound for a client's per-item timeout."
    )
    request_timeout_s: float = Field(
        600.0, gt=0, description="Whole-request deadline, queueing included (then 504)."
    )
    retry_after_s: int = Field(1, ge=1, description="Retry-After sent with 429.")
    keep_alive_s: float = Field(
        75.0,
        gt=0,
        description="How long an idle HTTP connection stays open. A proxy or balancer in front "
        "must close its idle connections to the server sooner (nginx's upstream keepalive_timeout "
        "and common balancers' 60 s are), or a request it sends as the server closes is reset.",
    )
    plugins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Extra modules to load families from, each exporting its declaration "
        "FAMILY (environments.family), e.g. 'mypkg.myfamily'.",
    )
    sandbox_backend: Literal["auto", "local", "weak", "docker", "none"] = Field(
        "auto",
        description="Where untrusted code runs: auto picks docker (engine and image present), "
        "else local namespaces, else weak isolation; 'local', 'weak' and 'docker' refuse to "
        "fall back (the server is not ready while the one named cannot start); 'none' runs no "
        "program (such items score error).",
    )
    sandbox_workers: int = Field(
        0,
        ge=0,
        le=256,
        description="Warm sandbox workers, in all (split like pool_workers); 0 means twice the "
        "CPU count.",
    )
    sandbox_docker_image: str = Field(
        "envserver-sandbox:latest", description="Image of the docker backend's workers."
    )
    sandbox_docker_runtime: str = Field("", description="Docker runtime, e.g. 'runsc' (gVisor).")
    sandbox_cgroup: str = Field(
        "",
        description="Directory of a cgroup (v2 with the memory controller, or v1 memory) under "
        "which the sandbox makes a group per worker to cap a run's total memory; empty: the "
        "server's own cgroup. Without one, memory is capped per process only.",
    )
    sandbox_max_wall_s: float = Field(
        300.0, gt=0, le=300, description="Largest wall-clock (and CPU) limit a request may ask."
    )
    sandbox_max_memory_mb: int = Field(
        0,
        ge=0,
        le=16384,
        description="Largest memory limit of one run (all its processes); 0: 80% of the "
        "machine's memory split over the sandbox workers, at least 1024.",
    )
    sandbox_max_processes: int = Field(
        256, ge=1, le=1024, description="Largest process (and thread) count of one run."
    )
    sandbox_max_output_bytes: int = Field(
        16 << 20, ge=1024, le=16 << 20, description="Largest cap on a run's stdout (and stderr)."
    )
    sandbox_max_file_mb: int = Field(
        1024, ge=1, le=1024, description="Largest file a run may be allowed to write, MiB."
    )
    sandbox_max_open_files: int = Field(
        4096, ge=16, le=4096, description="Largest open-descriptor limit of a run."
    )
    log_level: str = "info"
    metrics_require_auth: bool = Field(
        True,
        description="With API keys configured, /metrics needs one too (its labels name the "
        "keys' owners). Set false for a scraper on a trusted network.",
    )

    def share(self) -> Settings:
        """The settings one of ``server_processes`` processes runs with: its share of the pool
        and sandbox workers (rounded up), and the memory cap of one sandbox run computed from
        all of them, so N processes use the machine as one would."""
        n = self.server_processes
        if n == 1:
            return self
        sandbox_total = SandboxConfig(workers=self.sandbox_workers).size()
        return self.model_copy(
            update={
                "pool_workers": -(-self.pool_workers // n),
                "sandbox_workers": -(-sandbox_total // n),
                "sandbox_max_memory_mb": self.sandbox_max_memory_mb or memory_share(sandbox_total),
            }
        )

    def environment(self) -> dict[str, str]:
        """These settings as ``ENVSERVER_*`` variables: how the server's processes, each
        started fresh, receive the settings the command line resolved."""
        values: dict[str, str] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, list):
                value = ",".join(_plain(item) for item in value)
            values[f"ENVSERVER_{name.upper()}"] = _plain(value)
        return values

    @field_validator("api_keys", "previous_secrets", "plugins", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        # Environment variables hold lists as "a,b,c", not JSON.
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value
    stats: bool = Field(
        False,
        description="Keep per-run task statistics: the outcome of each task-id verification and "
        "finished episode whose request names a run (nothing else about it), which the "
        "curriculum routes read. Off: a request's run is ignored and nothing is written.",
    )
    stats_store: str = Field(
        "",
        description="SQLAlchemy URL of the statistics store; empty: SQLite (stats.sqlite) in "
        "data_dir. Replicas that share statistics name one PostgreSQL database "
        "(postgresql+psycopg://...), which may be EvoEnv's (ENVSERVER_EVO_STORE).",
    )
    stats_flush_s: float = Field(
        0.5,
        gt=0,
        le=60,
        description="How often recorded outcomes are written to the statistics store (a full "
        "buffer is written at once).",
    )
    @field_validator("stats")
    @classmethod
    def _stats_kept(cls, value: bool) -> bool:
        if value and importlib.util.find_spec("sqlalchemy") is None:
            raise ValueError("keeping statistics needs SQLAlchemy: pip install 'envserver[stats]'")
        return value

    @property
    def stats_url(self) -> str:
        """The statistics store's URL: ``stats_store``, or SQLite in the data directory."""
        return self.stats_store or f"sqlite:///{self.data_dir / 'stats.sqlite'}"

