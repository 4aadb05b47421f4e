"""One program's test run in a sandbox worker: the processes it takes (one warm harness process
for Python, one exec per test otherwise), the tests sent to them, and the budgets: each answer
``per_test_s``, all of them the program's ``wall_s``. After a test times out the rest are not run
and count as timeouts.

The worker (``sandbox.zygote``) builds a ``TestSession`` and calls ``run``; the session uses the
worker's ``Children`` and ``RunMemory`` and calls nothing back.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox import frames, harness, records
from sandbox.children import Child, Children, Exec, harness_target
from sandbox.jobs import AssertTests, CallTests, JobError, Limits, StdinTests, TestPlan
from sandbox.memory import RunMemory

Result = dict[str, Any]


class TestSession:
    """The processes of one program's test run, and its budgets."""

    def __init__(
        self,
        children: Children,
        memory: RunMemory,
        scratch: Path,
        limits: Limits,
        plan: TestPlan,
    ) -> None:
        self.children, self.memory, self.scratch = children, memory, scratch
        self.limits, self.plan = limits, plan
        self.deadline = time.monotonic() + limits.wall_s
        self.procs: list[Child] = []

    def run(self, source: str, exec_target: Exec | None) -> dict[str, Any]:
        """Every test's result and the whole program's figures. ``exec_target`` runs the
        program in a fresh process per test; None runs Python's tests in warm harness ones."""
        cases = self.plan.cases
        if exec_target is not None:
            if not isinstance(cases, StdinTests):  # the pool sends the others for Python only
                raise JobError("only stdin tests run one process per test")
            results = self._exec_each(exec_target, cases)
        elif isinstance(cases, StdinTests):
            results = self._script(source, cases)
        elif isinstance(cases, CallTests):
            results = self._calls(source, cases)
        else:
            results = self._asserts(source, cases)
        results += [records.timeout_result()] * (self.plan.count - len(results))
        for proc in self.procs:
            if proc.status is None or proc.out.open:
                self.children.finish(proc, self.limits, closing=True)
        return {"status": "ok", "tests": results, **records.summary(self.procs)}

    def _due(self) -> float:
        return min(self.deadline, time.monotonic() + self.plan.per_test_s)

    def _start(
        self, target: Callable[[], Any], peer: socket.socket | None = None
    ) -> tuple[Child, dict[str, Any] | None]:
        """A harness process and its first frame (``ready``, or why not)."""
        proc = self.children.spawn(target, b"", self.scratch, self.limits, channel=True, peer=peer)
        self.procs.append(proc)
        return proc, self.children.await_frame(proc, self._due())

    def _ask(self, proc: Child, message: dict[str, Any]) -> Result:
        """Send one test to a harness process; its result as the trusted side will see it."""
        started = time.monotonic()
        try:
            assert proc.channel is not None
            frames.write(proc.channel.fileno(), message)
        except OSError:
            return self.memory.failure(proc, None)
        reply = self.children.await_frame(proc, self._due())
        elapsed = time.monotonic() - started
        if reply is None:
            return {**self.memory.failure(proc, None), "time_s": elapsed}
        return {**records.harness_result(reply), "time_s": elapsed}

    def _ask_all(self, proc: Child, messages: list[dict[str, Any]]) -> list[Result]:
        """One answer per message, stopping after a timeout."""
        results = []
        for message in messages:
            result = self._ask(proc, message)
            results.append(result)
            if result["status"] == "timeout":
                break
        return results

    def _exec_each(self, target: Exec, cases: StdinTests) -> list[Result]:
        """stdin tests of a non-warm language: one exec per test."""
        results: list[Result] = []
        for stdin in cases.inputs:
            budget = self._due() - time.monotonic()
            if budget <= 0:
                break
            limits = self.limits.with_wall(budget)
            proc = self.children.spawn(target, stdin.encode(), self.scratch, limits)
            self.procs.append(proc)
            record = self.children.finish(proc, limits)
            results.append(records.from_record(record))
            if record["status"] == "timeout":
                break
        return results

    def _script(self, source: str, cases: StdinTests) -> list[Result]:
        """stdin tests of Python: all in one warm process, restarted after a crash."""
        cap = self.limits.output_bytes
        results: list[Result] = []
        proc: Child | None = None
        for stdin in cases.inputs:
            if proc is None or proc.status is not None or proc.channel_error:
                proc, ready = self._start(harness_target(harness.run_script, source, cap))
                if not ready or not ready.get("ready"):
                    failed = self.memory.failure(proc, ready)
                    return results + [failed] * (len(cases.inputs) - len(results))
            result = self._ask(proc, {"stdin": stdin})
            results.append(result)
            if result["status"] == "timeout":
                break
        return results

    def _server(self, source: str) -> tuple[Child, dict[str, Any] | None]:
        return self._start(harness_target(harness.serve, source))

    def _calls(self, source: str, cases: CallTests) -> list[Result]:
        """Function-call tests: the program defined once, then called per test."""
        server, ready = self._server(source)
        if not ready or not ready.get("ready"):
            return [self.memory.failure(server, ready)] * len(cases.calls)
        messages = [
            {"call": cases.entry_point, "args": args, "kwargs": kwargs}
            for args, kwargs in cases.calls
        ]
        return self._ask_all(server, messages)

    def _asserts(self, source: str, cases: AssertTests) -> list[Result]:
        """Assert snippets, run in a judge process that never runs the program: its calls of the
        program's functions travel to a serving process on a socket between the two."""
        server, ready = self._server(source)
        if not ready or not ready.get("ready") or server.channel is None:
            return [self.memory.failure(server, ready)] * len(cases.snippets)
        names = [str(name) for name in ready.get("names", [])]
        peer, server.channel = server.channel, None
        judge, _ = self._start(harness_target(harness.judge, names), peer=peer)
        peer.close()
        messages = [{"code": code, "entry_point": cases.entry_point} for code in cases.snippets]
        return self._ask_all(judge, messages)
