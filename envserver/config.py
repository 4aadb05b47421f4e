"""Server configuration from ``ENVSERVER_*`` environment variables (pydantic-settings)."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from sandbox.backends import SandboxConfig, memory_share

PROCESS_MIB = 300
"""Memory of one server process with its pool's fork server, every family loaded (unique set
size measured on the development machine: 190 and 90 MiB), for the default sizing."""
WORKER_MIB = 200
"""Memory of one warm pool worker (175 MiB measured the same way)."""
MEMORY_SHARE = 0.5
"""The share of the machine's memory the default sizing fills with server processes and pool
workers (the rest: sandbox runs, the families' tools, the page cache)."""
WORKERS_PER_PROCESS = 2
"""Pool workers each server process gets at least by default: with one, a slow item stops every
pooled call that process receives until it ends."""


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


def _cgroup_memory_mib() -> int | None:
    """The memory limit of this process's cgroup (v2), if it has one."""
    try:
        line = Path("/proc/self/cgroup").read_text().splitlines()[0]
        limit = Path("/sys/fs/cgroup", line.split("::", 1)[1].lstrip("/"), "memory.max")
        text = limit.read_text().strip()
    except (OSError, IndexError):
        return None
    return int(text) >> 20 if text.isdigit() else None


@dataclass(frozen=True)
class Machine:
    """What the default sizing reads: the cores this process may run on (its CPU affinity, so
    ``taskset`` and container CPU sets count) and the memory it may use (the machine's, or its
    cgroup's limit when lower).

    The rule (``benchmarks/README.md``, "Default sizing", has the table it came from): one server
    process per core, since parsing, routing, tokens and replies are two thirds of a cheap call's
    CPU and run in the server process; pool workers one per core and at least
    ``WORKERS_PER_PROCESS`` per server process; both within ``MEMORY_SHARE`` of the memory,
    processes giving way first."""

    cores: int
    memory_mib: int

    @classmethod
    def here(cls) -> Machine:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") >> 20
        limit = _cgroup_memory_mib()
        return cls(max(1, len(os.sched_getaffinity(0))), min(total, limit or total))

    @property
    def _budget_mib(self) -> int:
        return int(self.memory_mib * MEMORY_SHARE)

    def processes(self) -> int:
        """Server processes: one per core, as many as the memory holds with their workers."""
        fits = self._budget_mib // (PROCESS_MIB + WORKERS_PER_PROCESS * WORKER_MIB)
        return max(1, min(self.cores, fits))

    def pool_workers(self, processes: int) -> int:
        """Pool workers in all for ``processes`` server processes: one per core and at least
        ``WORKERS_PER_PROCESS`` per process, as many as the memory left holds (at least one per
        process)."""
        fits = (self._budget_mib - processes * PROCESS_MIB) // WORKER_MIB
        wanted = max(self.cores, WORKERS_PER_PROCESS * processes)
        return max(processes, min(wanted, fits))

    def describe(self) -> str:
        return f"{self.cores} core{'s' if self.cores > 1 else ''}, {self.memory_mib / 1024:.1f} GiB"


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
        0,
        ge=0,
        le=64,
        description="Server processes sharing the port (state lives in tokens, so any process "
        "serves any call). The pool and sandbox workers below are split between them. 0: one "
        "per core, as many as half the memory holds (envserver.config.Machine).",
    )
    pool_workers: int = Field(
        0,
        ge=0,
        le=256,
        description="Worker processes, in all (each server process gets its share, at least 1). "
        "0: one per core and at least two per server process, within half the memory.",
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
    coalesce_item_ms: float = Field(
        2.0,
        ge=0,
        le=100,
        description="Under saturation (no pool worker idle), a worker that comes free takes up "
        "to 4 queued items at once whose running cost estimate (per environment or verifier) is "
        "at most this, 4 times this in all, never a cheap item behind a slow one. 0: one item "
        "at a time. Measured on 2 idle cores, 2 against 0: server CPU per cheap step 0.85-0.89, "
        "cheap steps' p50 and p99 beside a slow item 0.79 and 0.90 (benchmarks/README.md).",
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

    def sized(self, machine: Machine | None = None, *, alone: bool = False) -> Settings:
        """These settings with the server processes and pool workers left at 0 chosen for
        ``machine`` (this one by default); ``alone``: for an app that is one process by itself
        (a test's, a Ray replica's), whose process count is then 1."""
        if self.server_processes and self.pool_workers:
            return self
        machine = machine or Machine.here()
        processes = self.server_processes or (1 if alone else machine.processes())
        pool = self.pool_workers or machine.pool_workers(processes)
        return self.model_copy(update={"server_processes": processes, "pool_workers": pool})

    def sizing(self, machine: Machine | None = None) -> str:
        """How these settings, sized, use ``machine`` (this one by default), and whether the
        numbers were chosen from it or set: ``envserver serve``'s start-up line."""
        machine = machine or Machine.here()
        chosen = [name for name in ("server_processes", "pool_workers") if not getattr(self, name)]
        sized = self.sized(machine)
        origin = (
            "chosen from the machine (set "
            + " and ".join(f"ENVSERVER_{name.upper()}" for name in chosen)
            + " to choose)"
            if chosen
            else "as set"
        )
        return f"{sized.capacity(machine)}, {origin}"

    def capacity(self, machine: Machine | None = None) -> str:
        """The machine and what these settings (sized) run on it."""
        machine = machine or Machine.here()
        processes = self.server_processes
        return (
            f"{machine.describe()}: {processes} server process{'es' if processes > 1 else ''}, "
            f"{self.pool_workers} pool workers in all"
        )

    def share(self) -> Settings:
        """The settings one of ``server_processes`` processes runs with (sized first): its
        share of the pool and sandbox workers (rounded up), and the memory cap of one sandbox
        run computed from all of them, so N processes use the machine as one would."""
        sized = self.sized(alone=True)
        n = sized.server_processes
        if n == 1:
            return sized
        sandbox_total = SandboxConfig(workers=sized.sandbox_workers).size()
        return sized.model_copy(
            update={
                "pool_workers": -(-sized.pool_workers // n),
                "sandbox_workers": -(-sandbox_total // n),
                "sandbox_max_memory_mb": sized.sandbox_max_memory_mb or memory_share(sandbox_total),
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
        "(postgresql+psycopg://...), which may be the one a family's store uses.",
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
