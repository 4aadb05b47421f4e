"""Calls into a submitted environment, made in the sandbox's warm workers and read back as JSON.

Every call into generated code goes through here: the server never imports it.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import sandbox
from environments.evo.driver import DRIVER
from sandbox.model import Limits, RunRecord, RunRequest

CALL_LIMIT_S = 2.0
"""The most one call (a task's generation with its reference, or one score) may take."""
RUN_LIMITS = Limits(wall_s=20.0, memory_mb=512, processes=4, output_bytes=8 << 20, file_mb=1)


class SandboxFailure(RuntimeError):
    """The sandbox itself failed (no worker, a lost worker): infrastructure, not the code's
    fault. The caller reports status ``error``, never a rejection or a reward of 0."""


class ProgramFailure(Exception):
    """The environment's run as a whole failed: it timed out, ran out of memory, crashed the
    interpreter, or could not be loaded; ``status`` is the sandbox's word for it."""

    def __init__(self, status: str, detail: str) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail


@dataclass(frozen=True)
class CallResult:
    """One call's value, or ``error`` (the exception it raised, or a value of the wrong type);
    ``seconds`` as measured inside the run."""

    value: Any = None
    error: str | None = None
    seconds: float = 0.0


Call = tuple[str, list[Any]]


def task_call(seed: int, difficulty: int) -> Call:
    """Generate the instance, twice (the repeat must be equal), its prompt and reference."""
    return ("task", [seed, difficulty])


def score_call(instance: Any, response: str) -> Call:
    """Score ``response`` for ``instance``."""
    return ("score", [instance, response])


def _request(source: str, calls: list[Call], limits: Limits) -> RunRequest:
    return RunRequest(
        source=DRIVER,
        stdin=json.dumps({"calls": calls}),
        files={"environment.py": base64.b64encode(source.encode()).decode()},
        limits=limits,
    )


def _results(record: RunRecord, calls: list[Call]) -> list[CallResult]:
    if record.status == "sandbox_error":
        raise SandboxFailure(record.detail or "the sandbox failed")
    if record.status != "ok":
        tail = record.stderr.strip().splitlines()[-1:] or [f"exit code {record.exit_code}"]
        raise ProgramFailure(record.status, tail[0][:300])
    try:
        reply = json.loads(record.stdout)
        load, results = reply["load"], reply["results"]
    except (ValueError, KeyError, TypeError):
        raise ProgramFailure("runtime_error", "the run's reply is not the driver's") from None
    if load is not None:
        raise ProgramFailure("load_error", str(load.get("error", load))[:300])
    if not isinstance(results, list) or len(results) != len(calls):
        raise ProgramFailure("runtime_error", "the run answered a different number of calls")
    return [
        CallResult(
            value=item.get("value"),
            error=None if item.get("error") is None else str(item["error"]),
            seconds=float(item.get("seconds", 0.0)),
        )
        for item in results
    ]


def run_calls(source: str, calls: list[Call], limits: Limits = RUN_LIMITS) -> list[CallResult]:
    """Make ``calls`` in one sandbox run of ``source``; raises ``ProgramFailure`` when the run
    as a whole fails, ``SandboxFailure`` when the sandbox does."""
    try:
        record = sandbox.default().run(_request(source, calls, limits))
    except Exception as exc:  # the sandbox's own failure (socket, overload, start-up)
        raise SandboxFailure(f"{type(exc).__name__}: {exc}") from None
    return _results(record, calls)


def run_calls_apart(
    source: str, batches: list[list[Call]], limits: Limits = RUN_LIMITS
) -> list[list[CallResult] | ProgramFailure]:
    """Each batch in its own run, concurrently (separate processes, typically separate workers
    with their own hash seeds); a failed run is its ``ProgramFailure``."""
    try:
        records = sandbox.default().run_many([_request(source, b, limits) for b in batches])
    except Exception as exc:  # the sandbox's own failure (socket, overload, start-up)
        raise SandboxFailure(f"{type(exc).__name__}: {exc}") from None
    outcomes: list[list[CallResult] | ProgramFailure] = []
    for record, batch in zip(records, batches, strict=True):
        try:
            outcomes.append(_results(record, batch))
        except ProgramFailure as failure:
            outcomes.append(failure)
    return outcomes
