"""Result shaping: what a finished child becomes in the worker's reply (an execution record, a
test's result), from what the worker saw of it. Nothing here runs or waits, and nothing here
judges: the trusted side compares outputs itself.
"""

from __future__ import annotations

import os
import signal
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandbox.children import Child
    from sandbox.jobs import Limits

TAIL = 4096  # bytes of stderr kept when a frame carries an error
OOM_NOTE = "killed: the run's processes together went over its memory limit"

_MEMORY_MARKERS = ("MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory")


def _status(proc: Child, limits: Limits) -> str:
    if proc.killed_for in ("timeout", "output_limit"):
        return proc.killed_for
    status = proc.status or 0
    cpu = _cpu(proc)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGXCPU, signal.SIGKILL) and cpu >= limits.cpu_s - 0.05:
            return "timeout"
        if sig == signal.SIGXFSZ:
            return "output_limit"
    code = os.waitstatus_to_exitcode(status)
    if code == 0 and not proc.killed_for:
        return "ok"
    tail = proc.err.text()[-TAIL:]
    if any(marker in tail for marker in _MEMORY_MARKERS):
        return "memory_limit"
    return "runtime_error"


def _cpu(proc: Child) -> float:
    usage = proc.rusage
    return float(usage.ru_utime + usage.ru_stime) if usage is not None else 0.0


def record(proc: Child, limits: Limits, isolation_level: str) -> dict[str, Any]:
    """The execution record of a child that ended (its status judged from how it ended)."""
    status = proc.status or 0
    return {
        "status": _status(proc, limits),
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "stdout": proc.out.text(),
        "stderr": proc.err.text(),
        "stdout_truncated": proc.out.over,
        "stderr_truncated": proc.err.over,
        "wall_s": round((proc.ended or time.monotonic()) - proc.started, 6),
        "cpu_s": round(_cpu(proc), 6),
        "memory_mb": round(proc.rusage.ru_maxrss / 1024, 3) if proc.rusage is not None else 0.0,
        "isolation": isolation_level,
    }


def summary(procs: list[Child]) -> dict[str, Any]:
    """The whole program's figures for a test run (all its processes)."""
    return {
        "exit_code": None,
        "signal": None,
        "stdout": "".join(p.out.text() for p in procs)[-TAIL:],
        "stderr": "".join(p.err.text() for p in procs)[-TAIL:],
        "stdout_truncated": any(p.out.over for p in procs),
        "stderr_truncated": any(p.err.over for p in procs),
        "wall_s": round(sum((p.ended or p.started) - p.started for p in procs), 6),
        "cpu_s": round(sum(_cpu(p) for p in procs), 6),
        "memory_mb": max((p.rusage.ru_maxrss / 1024 for p in procs if p.rusage), default=0.0),
    }


def from_record(run: dict[str, Any]) -> dict[str, Any]:
    """A per-test result from a whole-process record (one exec per test)."""
    result: dict[str, Any] = {
        "status": run["status"],
        "stdout": run["stdout"],
        "time_s": run["wall_s"],
    }
    if run["status"] != "ok":
        result["error"] = run["stderr"][-TAIL:] or f"exit code {run['exit_code']}"
    return result


def harness_result(reply: dict[str, Any]) -> dict[str, Any]:
    """A per-test result from a harness frame (content untrusted: typed loosely, judged later)."""
    if "passed" in reply:
        return {
            "status": "ok",
            "passed": reply["passed"] is True,
            "error": str(reply.get("error") or "")[:TAIL],
        }
    if "value" in reply:
        return {"status": "ok", "value": reply["value"]}
    if "stdout" in reply:
        error = reply.get("error")
        result: dict[str, Any] = {"status": "ok", "stdout": str(reply["stdout"])}
        if reply.get("dropped"):
            result["status"] = "output_limit"
        elif error or reply.get("exit_code") not in (0, None):
            kind = (
                "memory_limit"
                if error and str(error).startswith("MemoryError")
                else "runtime_error"
            )
            result.update(
                status=kind, error=str(error or f"exit code {reply.get('exit_code')}")[:TAIL]
            )
        return result
    return {
        "status": "runtime_error",
        "error": str(reply.get("error") or "malformed result")[:TAIL],
    }


def failure(proc: Child, reply: dict[str, Any] | None) -> dict[str, Any]:
    """The result of a test whose process gave no answer."""
    if reply is not None and reply.get("error"):
        return {"status": "runtime_error", "error": str(reply["error"])[:TAIL], "time_s": 0.0}
    if proc.killed_for in ("timeout", "output_limit"):
        return {"status": proc.killed_for, "error": "", "time_s": 0.0}
    stderr = proc.err.text()[-TAIL:]
    kind = "memory_limit" if any(m in stderr for m in _MEMORY_MARKERS) else "runtime_error"
    detail = proc.channel_error or "the program ended before answering"
    return {"status": kind, "error": (stderr or detail)[:TAIL], "time_s": 0.0}


def timeout_result() -> dict[str, Any]:
    """The result of a test not run because an earlier one timed out."""
    return {"status": "timeout", "error": "not run: an earlier test timed out", "time_s": 0.0}
