"""Calls into a submitted environment, made in the sandbox's warm workers and read back as JSON.

Every call into generated code goes through here: the server never imports it. Runs made inside
``cpu_budget`` (an admission) are charged to it and limited by what it has left.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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
MIN_RUN_CPU_S = 0.25
"""The least CPU a run is started with under a budget (the interpreter and the module take a
tenth of it): with less left, the budget is spent."""
BACKSTOP_S = 1.0
"""CPU beyond its share at which the sandbox stops a run whose code keeps the driver from
stopping it (a scorer that catches the driver's timeout and goes on)."""
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


class OverBudget(Exception):
    """The admission's CPU budget (``cpu_budget``) is spent: its code costs too much to admit
    (a verdict on the code, like a rejection; never infrastructure)."""


class CpuBudget:
    """The sandbox CPU one admission may spend, all its runs together. Each run is charged the
    CPU it used, and started with at most its share of what is left (in proportion to its own
    limit, among the runs started with it), so the admission spends at most ``limit_s`` and
    ``MIN_RUN_CPU_S`` a run more, whatever its code does; a run stopped at its share raises
    ``OverBudget``."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.spent_s = 0.0
        self._costs: dict[str, list[float]] = {}  # the CPU of each call finished, by kind
        self._lock = threading.Lock()

    def shares(self, limits: list[float]) -> list[float]:
        """The CPU limits of runs started together whose own limits are ``limits``: what is
        left, in proportion to them (at least ``MIN_RUN_CPU_S`` each). Raises ``OverBudget``
        when less than that is left."""
        with self._lock:
            left = self.limit_s - self.spent_s
        if left < MIN_RUN_CPU_S:
            raise OverBudget(self.spent())
        return [max(MIN_RUN_CPU_S, left * limit / sum(limits)) for limit in limits]

    def charge(self, cpu_s: float) -> None:
        """Count a run's CPU."""
        with self._lock:
            self.spent_s += cpu_s

    def finished(self, calls: list[Call], results: list[CallResult]) -> None:
        """Note what the calls a run finished cost (for the refusal's reason)."""
        with self._lock:
            for (kind, _), result in zip(calls, results, strict=False):
                self._costs.setdefault(kind, []).append(result.cpu_s)

    def spent(self) -> str:
        """Why the budget is spent, for the refusal."""
        with self._lock:
            spent, costs = self.spent_s, {k: sorted(v) for k, v in self._costs.items()}
        kinds = ", ".join(
            f"{kind} {cpu[len(cpu) // 2]:.2f} s (the median of {len(cpu)}, at most {cpu[-1]:.2f})"
            for kind, cpu in sorted(costs.items())
        )
        return (
            f"over the admission's CPU budget: its runs in the sandbox used {spent:.1f} s of "
            f"CPU of the {self.limit_s:g} s an admission may spend (ENVSERVER_EVO_ADMISSION_"
            f"CPU_S); its calls took, of CPU each: {kinds or 'none finished'}; an environment "
            "this costly to run is refused"
        )


_BUDGET: ContextVar[CpuBudget | None] = ContextVar("evo_cpu_budget", default=None)


@contextmanager
def cpu_budget(limit_s: float) -> Iterator[CpuBudget]:
    """Charge every run made in the block (in this context) to one budget of ``limit_s``."""
    budget = CpuBudget(limit_s)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


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


@dataclass(frozen=True)
class _Run:
    """One sandbox run's calls and limits; ``share``: its part of the admission's CPU budget
    (None outside one), which the driver stops at (the run's CPU limit backs it up: ``capped``
    where the share, not the run's own limit, set it)."""

    calls: list[Call]
    call_cpu_s: float
    limits: Limits
    share: float | None = None
    capped: bool = False

    def request(self, source: str) -> RunRequest:
        job = {"calls": self.calls, "cpu_s": self.call_cpu_s, "run_cpu_s": self.share}
        return RunRequest(
            source=DRIVER,
            stdin=json.dumps(job),
            files={"environment.py": base64.b64encode(source.encode()).decode()},
            limits=self.limits,
        )


def _planned(batches: list[list[Call]], call_cpu_s: float) -> list[_Run]:
    runs = [_Run(calls, call_cpu_s, run_limits(len(calls), call_cpu_s)) for calls in batches]
    budget = _BUDGET.get()
    if budget is None:
        return runs
    own = [run.limits.cpu_s or run.limits.wall_s for run in runs]
    shares = budget.shares(own)
    return [
        _Run(
            run.calls,
            call_cpu_s,
            run.limits.model_copy(update={"cpu_s": min(limit, share + BACKSTOP_S)}),
            share,
            capped=share + BACKSTOP_S < limit,
        )
        for run, limit, share in zip(runs, own, shares, strict=True)
    ]


def _results(record: RunRecord, run: _Run) -> list[CallResult]:
    calls = run.calls
    if record.status == "sandbox_error":
        raise SandboxFailure(record.detail or "the sandbox failed")
    cpu_limit = run.limits.cpu_s or 0.0
    if record.status == "timeout" and record.cpu_s < cpu_limit - 0.5:
        raise SandboxFailure(
            f"the machine is too busy: the run reached its wall-clock limit of "
            f"{record.wall_s:.0f} s having used {record.cpu_s:.1f} s of its {cpu_limit:g} s of CPU"
        )
    budget = _BUDGET.get()
    if budget is not None and record.status == "timeout" and run.capped:
        raise OverBudget(budget.spent())  # a run that went on past its share (the backstop)
    if record.status != "ok":
        tail = record.stderr.strip().splitlines()[-1:] or [f"exit code {record.exit_code}"]
        raise ProgramFailure(record.status, tail[0][:300])
    try:
        reply = json.loads(record.stdout)
        load, results, over = reply["load"], reply["results"], reply.get("over", False)
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ProgramFailure("runtime_error", "the run's reply is not the driver's") from None
    if load is not None:
        raise ProgramFailure("load_error", str(load.get("error", load))[:300])
    if not isinstance(results, list):
        raise ProgramFailure("runtime_error", "the run's reply is not the driver's")
    finished = [
        CallResult(
            value=item.get("value"),
            error=None if item.get("error") is None else str(item["error"]),
            seconds=float(item.get("seconds", 0.0)),
            cpu_s=float(item.get("cpu_s", 0.0)),
        )
        for item in results
    ]
    if budget is not None:
        budget.finished(calls, finished)
        if over:  # the driver stopped at the run's share
            raise OverBudget(budget.spent())
    if len(finished) != len(calls):
        raise ProgramFailure("runtime_error", "the run answered a different number of calls")
    return finished


def _executed(source: str, runs: list[_Run]) -> list[RunRecord]:
    requests = [run.request(source) for run in runs]
    try:
        if len(requests) == 1:
            records = [sandbox.default().run(requests[0])]
        else:
            records = sandbox.default().run_many(requests)
    except Exception as exc:  # the sandbox's own failure (socket, overload, start-up)
        raise SandboxFailure(f"{type(exc).__name__}: {exc}") from None
    budget = _BUDGET.get()
    if budget is not None:
        for record in records:
            budget.charge(record.cpu_s)
    return records


def run_calls(source: str, calls: list[Call], call_cpu_s: float = CALL_CPU_S) -> list[CallResult]:
    """Make ``calls`` in sandbox runs of ``source`` (``CALLS_PER_RUN`` to a run, the runs
    concurrent), each call within ``call_cpu_s``; raises ``ProgramFailure`` when a run as a
    whole fails, ``SandboxFailure`` when the sandbox does (or the machine is too busy)."""
    chunks = [calls[i : i + CALLS_PER_RUN] for i in range(0, len(calls), CALLS_PER_RUN)]
    runs = _planned(chunks, call_cpu_s)
    results: list[CallResult] = []
    for record, run in zip(_executed(source, runs), runs, strict=True):
        results += _results(record, run)
    return results


def run_calls_apart(
    source: str, batches: list[list[Call]], call_cpu_s: float = CALL_CPU_S
) -> list[list[CallResult] | ProgramFailure]:
    """Each batch in one run of its own, concurrently (separate processes, typically separate
    workers with their own hash seeds), each call within ``call_cpu_s``; a failed run is its
    ``ProgramFailure``."""
    runs = _planned(batches, call_cpu_s)
    outcomes: list[list[CallResult] | ProgramFailure] = []
    for record, run in zip(_executed(source, runs), runs, strict=True):
        try:
            outcomes.append(_results(record, run))
        except ProgramFailure as failure:
            outcomes.append(failure)
    return outcomes
