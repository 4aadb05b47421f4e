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

CALL_CPU_S = 2.0
"""The CPU time one call (a task's generation with its reference, or one score) may use. CPU
time, not the wall clock: a call costs the same on an idle machine and on a busy one, so the
same submission gets the same verdict on both."""
START_CPU_S = 2.0
"""CPU time for what a run does before its calls: the interpreter, the driver, the module."""
CALLS_PER_RUN = 64
"""The most calls one sandbox run makes; more are split over several runs, made concurrently."""
WALL_PER_CPU_S = 4.0
"""Wall-clock seconds a run may take per CPU second of its budget: room for a loaded machine.
A run stopped by the wall clock before it used its CPU budget was slowed, not slow: that is
infrastructure (``SandboxFailure``), never a verdict on the code."""
MAX_WALL_S = 300.0
BASE_LIMITS = Limits(wall_s=30.0, memory_mb=512, processes=4, output_bytes=8 << 20, file_mb=1)


def run_limits(calls: int, call_cpu_s: float = CALL_CPU_S) -> Limits:
    """The limits of one run of ``calls`` calls: each call's CPU budget, and a wall clock
    several times that."""
    cpu = START_CPU_S + call_cpu_s * calls
    wall = min(MAX_WALL_S, 10.0 + WALL_PER_CPU_S * cpu)
    return BASE_LIMITS.model_copy(update={"cpu_s": min(cpu, wall), "wall_s": wall})


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
    """One call's value, or ``error`` (the exception it raised, a value of the wrong type, or
    its CPU budget spent); ``seconds`` (wall clock) and ``cpu_s`` as measured inside the run."""

    value: Any = None
    error: str | None = None
    seconds: float = 0.0
    cpu_s: float = 0.0


Call = tuple[str, list[Any]]


def task_call(seed: int, difficulty: int) -> Call:
    """Generate the instance, twice (the repeat must be equal), its prompt and reference."""
    return ("task", [seed, difficulty])


def score_call(instance: Any, response: str) -> Call:
    """Score ``response`` for ``instance``."""
    return ("score", [instance, response])


def symbolic_call(
    instance: Any, reference: str, *, shape: str, seconds: float, longest: int, wanted: int
) -> Call:
    """CrossHair's search for up to ``wanted`` responses other than ``reference`` that
    ``score`` pays: ``shape`` ``raw`` (the whole response symbolic) or ``tagged`` (the text in
    one ``<answer>`` tag), strings of at most ``longest`` characters, ``seconds`` of CPU. Its
    value is ``{"found": [...]}``, or ``{"unavailable": why}`` where CrossHair is not installed."""
    return ("symbolic", [instance, reference, shape, seconds, longest, wanted])


def _request(source: str, calls: list[Call], call_cpu_s: float) -> RunRequest:
    return RunRequest(
        source=DRIVER,
        stdin=json.dumps({"calls": calls, "cpu_s": call_cpu_s}),
        files={"environment.py": base64.b64encode(source.encode()).decode()},
        limits=run_limits(len(calls), call_cpu_s),
    )


def _results(record: RunRecord, calls: list[Call], call_cpu_s: float) -> list[CallResult]:
    if record.status == "sandbox_error":
        raise SandboxFailure(record.detail or "the sandbox failed")
    budget = run_limits(len(calls), call_cpu_s).cpu_s or 0.0
    if record.status == "timeout" and record.cpu_s < budget - 0.5:
        raise SandboxFailure(
            f"the machine is too busy: the run reached its wall-clock limit of "
            f"{record.wall_s:.0f} s having used {record.cpu_s:.1f} s of its {budget:g} s of CPU"
        )
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
            cpu_s=float(item.get("cpu_s", 0.0)),
        )
        for item in results
    ]


def _runs(requests: list[RunRequest]) -> list[RunRecord]:
    try:
        if len(requests) == 1:
            return [sandbox.default().run(requests[0])]
        return sandbox.default().run_many(requests)
    except Exception as exc:  # the sandbox's own failure (socket, overload, start-up)
        raise SandboxFailure(f"{type(exc).__name__}: {exc}") from None


def run_calls(source: str, calls: list[Call], call_cpu_s: float = CALL_CPU_S) -> list[CallResult]:
    """Make ``calls`` in sandbox runs of ``source`` (``CALLS_PER_RUN`` to a run, the runs
    concurrent), each call within ``call_cpu_s``; raises ``ProgramFailure`` when a run as a
    whole fails, ``SandboxFailure`` when the sandbox does (or the machine is too busy)."""
    chunks = [calls[i : i + CALLS_PER_RUN] for i in range(0, len(calls), CALLS_PER_RUN)]
    records = _runs([_request(source, chunk, call_cpu_s) for chunk in chunks])
    results: list[CallResult] = []
    for record, chunk in zip(records, chunks, strict=True):
        results += _results(record, chunk, call_cpu_s)
    return results


def run_calls_apart(
    source: str, batches: list[list[Call]], call_cpu_s: float = CALL_CPU_S
) -> list[list[CallResult] | ProgramFailure]:
    """Each batch in one run of its own, concurrently (separate processes, typically separate
    workers with their own hash seeds), each call within ``call_cpu_s``; a failed run is its
    ``ProgramFailure``."""
    records = _runs([_request(source, batch, call_cpu_s) for batch in batches])
    outcomes: list[list[CallResult] | ProgramFailure] = []
    for record, batch in zip(records, batches, strict=True):
        try:
            outcomes.append(_results(record, batch, call_cpu_s))
        except ProgramFailure as failure:
            outcomes.append(failure)
    return outcomes
