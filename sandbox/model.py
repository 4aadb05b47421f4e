"""The sandbox's public vocabulary: what a run asks for and what it reports."""

from __future__ import annotations

import base64
import binascii
import posixpath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Status = Literal[
    "ok", "runtime_error", "timeout", "memory_limit", "output_limit", "compile_error",
    "sandbox_error",
]  # fmt: skip
"""How a program run ended.

``ok``             exited with status 0 (says nothing about correctness: that is judged outside)
``runtime_error``  non-zero exit, uncaught exception or fatal signal
``timeout``        wall-clock or CPU limit
``memory_limit``   address-space limit (MemoryError, bad_alloc)
``output_limit``   stdout or stderr beyond its cap, or the file-size limit
``compile_error``  the build step failed (compiled languages)
``sandbox_error``  the sandbox itself failed: infrastructure, never the program's fault
"""

Isolation = Literal["full", "weak", "container"]
"""``full``: user, mount, network, IPC, UTS namespaces per worker, a PID namespace per run, own
uid, rlimits, seccomp. ``container``: the same worker inside a locked-down Docker container.
``weak``: rlimits, seccomp, own session and uid, but the host filesystem is visible (read-only
where permissions say so) and the network namespace is shared."""

MAX_SOURCE_CHARS = 1_000_000
MAX_STDIN_CHARS = 16_000_000
MAX_FILES = 64
MAX_FILE_BYTES = 8 << 20


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Limits(_Model):
    """Resource limits of one program run (for test runs: of the whole program, all tests)."""

    wall_s: float = Field(10.0, gt=0, le=300, description="Wall-clock limit, seconds.")
    cpu_s: float | None = Field(
        None, gt=0, le=300, description="CPU-time limit, seconds (default: wall_s)."
    )
    memory_mb: int = Field(1024, ge=64, le=16384, description="Address-space limit, MiB.")
    output_bytes: int = Field(
        1 << 20, ge=1024, le=16 << 20, description="Cap on stdout and on stderr, bytes each."
    )
    file_mb: int = Field(64, ge=1, le=1024, description="Largest file the program may write.")
    processes: int = Field(64, ge=1, le=1024, description="Processes and threads of the run.")
    open_files: int = Field(256, ge=16, le=4096, description="Open file descriptors.")

    def as_job(self) -> dict[str, Any]:
        """The worker's form (every field set)."""
        return {**self.model_dump(), "cpu_s": self.cpu_s or self.wall_s}


COMPILE_LIMITS = Limits(wall_s=60, memory_mb=4096, processes=64, output_bytes=256 << 10)
MODEL_MAXIMA = Limits(
    wall_s=300, cpu_s=300, memory_mb=16384, output_bytes=16 << 20, file_mb=1024, processes=1024,
    open_files=4096,
)  # fmt: skip
"""The most any request may ask for; a server sets lower maxima of its own (``Sandbox.maxima``)."""


def _check_name(name: str) -> str:
    normal = posixpath.normpath(name)
    if (
        not name
        or name.startswith("/")
        or normal.startswith("..")
        or normal == "."
        or "\x00" in name
        or len(name) > 255
    ):
        raise ValueError(f"file name {name!r} must be a relative path inside the scratch directory")
    return normal


class RunRequest(_Model):
    """One program: source, input, extra files and limits."""

    language: str = Field("python", description="python, cpp, c or bash (see /v1/sandbox).")
    source: str = Field(..., max_length=MAX_SOURCE_CHARS)
    stdin: str = Field("", max_length=MAX_STDIN_CHARS)
    files: dict[str, str] = Field(
        default_factory=dict, description="Extra files: relative path -> base64 content."
    )
    fetch_files: list[str] = Field(
        default_factory=list, max_length=MAX_FILES, description="Files to return after the run."
    )
    limits: Limits = Limits()
    compile_wall_s: float = Field(
        60.0, gt=0, le=300, description="Wall-clock limit of the build step (compiled languages)."
    )

    @field_validator("files")
    @classmethod
    def _files(cls, files: dict[str, str]) -> dict[str, str]:
        if len(files) > MAX_FILES:
            raise ValueError(f"at most {MAX_FILES} files")
        checked = {}
        for name, content in files.items():
            try:
                size = len(base64.b64decode(content, validate=True))
            except (binascii.Error, ValueError):
                raise ValueError(f"file {name!r} is not valid base64") from None
            if size > MAX_FILE_BYTES:
                raise ValueError(f"file {name!r} is larger than {MAX_FILE_BYTES} bytes")
            checked[_check_name(name)] = content
        return checked

    @field_validator("fetch_files")
    @classmethod
    def _fetch(cls, names: list[str]) -> list[str]:
        return [_check_name(name) for name in names]


class RunRecord(_Model):
    """How one program run went. Outputs are capped at the run's ``output_bytes``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    status: Status
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    memory_mb: float = Field(0.0, description="Peak resident memory, MiB.")
    isolation: Isolation | None = None
    detail: str = Field("", description="Why the sandbox failed (sandbox_error only).")
    compile: RunRecord | None = None
    files: dict[str, str] = Field(default_factory=dict, description="Fetched files, base64.")
