"""SandboxFusion's ``POST /run_code``, field for field, so a client configured for SandboxFusion
(verl's ``sandbox_fusion`` reward, the ``sandbox-fusion`` package) works with only the URL
changed. Languages beyond ours are refused with a 422 problem, not run some other way."""

from __future__ import annotations

import base64
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from sandbox.model import Limits, RunRecord, RunRequest
from verifiers.numbers import StrictNumbers

# SandboxFusion's default is "no limit": here the sandbox's maximum (at most the model's).
UNLIMITED_MEMORY_MB = 16384
_MAX_TIMEOUT_S = 300.0


class RunCodeRequest(StrictNumbers):
    """SandboxFusion's ``RunCodeRequest`` (unknown fields ignored, as its server does; numbers
    are numbers, as in every request body)."""

    model_config = ConfigDict(extra="ignore")

    compile_timeout: float = Field(10, gt=0, le=_MAX_TIMEOUT_S)
    run_timeout: float = Field(10, gt=0, le=_MAX_TIMEOUT_S)
    memory_limit_MB: int = Field(-1, description="-1: no limit (the sandbox's maximum here).")
    code: str
    stdin: str | None = None
    language: str
    files: dict[str, str | None] = Field(default_factory=dict)
    fetch_files: list[str] = Field(default_factory=list)

    def to_run(self, max_memory_mb: int = UNLIMITED_MEMORY_MB) -> RunRequest:
        """Our request for the same run ("no limit" is ``max_memory_mb``)."""
        memory = self.memory_limit_MB if self.memory_limit_MB > 0 else max_memory_mb
        files = {
            name: content if content is not None else base64.b64encode(b"").decode()
            for name, content in self.files.items()
        }
        return RunRequest(
            language=self.language,
            source=self.code,
            stdin=self.stdin or "",
            files=files,
            fetch_files=self.fetch_files,
            limits=Limits(
                wall_s=self.run_timeout, memory_mb=max(64, min(memory, UNLIMITED_MEMORY_MB))
            ),
            compile_wall_s=self.compile_timeout,
        )


class CommandRunStatus(StrEnum):
    """How one command ended (SandboxFusion's names)."""

    FINISHED = "Finished"
    ERROR = "Error"
    TIME_LIMIT_EXCEEDED = "TimeLimitExceeded"


class RunStatus(StrEnum):
    """The whole run: ``Failed`` is the program's doing, ``SandboxError`` the sandbox's."""

    SUCCESS = "Success"
    FAILED = "Failed"
    SANDBOX_ERROR = "SandboxError"


class CommandRunResult(BaseModel):
    """One command (the build or the run)."""

    status: CommandRunStatus
    execution_time: float | None = None
    cpu_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class RunCodeResponse(BaseModel):
    """SandboxFusion's ``RunCodeResponse``."""

    status: RunStatus
    message: str
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = Field(default_factory=dict)


def _command(record: RunRecord) -> CommandRunResult:
    status = (
        CommandRunStatus.TIME_LIMIT_EXCEEDED
        if record.status == "timeout"
        else CommandRunStatus.FINISHED
    )
    # A signal becomes a negative return code, as asyncio's subprocess reports it there.
    code = record.exit_code if record.signal is None else -record.signal
    return CommandRunResult(
        status=status,
        execution_time=record.wall_s,
        cpu_time=record.cpu_s,
        return_code=code,
        stdout=record.stdout,
        stderr=record.stderr,
    )


def to_response(record: RunRecord) -> RunCodeResponse:
    """SandboxFusion's view of ``record``."""
    if record.status == "sandbox_error":
        return RunCodeResponse(status=RunStatus.SANDBOX_ERROR, message=record.detail)
    compiled = _command(record.compile) if record.compile is not None else None
    if record.status == "compile_error":
        return RunCodeResponse(status=RunStatus.FAILED, message="", compile_result=compiled)
    run = _command(record)
    ok = record.status == "ok" and record.exit_code == 0
    message = "" if record.status in ("ok", "runtime_error", "timeout") else record.status
    return RunCodeResponse(
        status=RunStatus.SUCCESS if ok else RunStatus.FAILED,
        message=message,
        compile_result=compiled,
        run_result=run,
        files=record.files,
    )
