"""The requests a sandbox worker serves, typed: the frames the pool sends (built by
``sandbox.runner`` from validated models) become these once, at the door, so the worker reads
fields rather than keys.

Plain slotted dataclasses: a request is parsed on the hot path of every run, in the worker,
whose every touched page after a fork is a copy-on-write fault; these cost about as much as the
dictionaries they replace (``benchmarks/README.md``, the sandbox section).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


class JobError(ValueError):
    """A frame that is not a request the worker knows (the pool never sends one)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-run limits (the pool fills in every field)."""

    wall_s: float
    cpu_s: float
    memory_mb: int
    output_bytes: int
    file_mb: int
    processes: int
    open_files: int

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Limits:
        """From the request's JSON."""
        return cls(
            wall_s=float(raw["wall_s"]),
            cpu_s=float(raw["cpu_s"]),
            memory_mb=int(raw["memory_mb"]),
            output_bytes=int(raw["output_bytes"]),
            file_mb=int(raw["file_mb"]),
            processes=int(raw["processes"]),
            open_files=int(raw["open_files"]),
        )

    def with_wall(self, wall_s: float) -> Limits:
        """These limits with a shorter wall clock (and CPU time to match)."""
        return Limits(
            wall_s=wall_s,
            cpu_s=min(self.cpu_s, wall_s + 1),
            memory_mb=self.memory_mb,
            output_bytes=self.output_bytes,
            file_mb=self.file_mb,
            processes=self.processes,
            open_files=self.open_files,
        )


@dataclass(frozen=True, slots=True)
class StdinTests:
    """Whole-program tests: each test's standard input."""

    inputs: list[str]


@dataclass(frozen=True, slots=True)
class CallTests:
    """Function-call tests: ``entry_point(*args, **kwargs)`` per test."""

    entry_point: str
    calls: list[tuple[list[Any], dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class AssertTests:
    """Assert snippets, each run against the program's functions (``candidate`` is
    ``entry_point`` when given)."""

    entry_point: str | None
    snippets: list[str]


@dataclass(frozen=True, slots=True)
class TestPlan:
    """One program's tests and the time each answer may take."""

    cases: StdinTests | CallTests | AssertTests
    per_test_s: float

    @property
    def count(self) -> int:
        """How many tests."""
        cases = self.cases
        if isinstance(cases, StdinTests):
            return len(cases.inputs)
        if isinstance(cases, CallTests):
            return len(cases.calls)
        return len(cases.snippets)

    @classmethod
    def of(cls, raw: dict[str, Any]) -> TestPlan:
        """From the request's JSON (``sandbox.testcases.TestSuite.inputs`` and a budget)."""
        kind: Literal["stdin", "call", "assert"] = raw["kind"]
        items: list[dict[str, Any]] = raw["items"]
        cases: StdinTests | CallTests | AssertTests
        if kind == "stdin":
            cases = StdinTests([str(item["stdin"]) for item in items])
        elif kind == "call":
            calls = [(list(item["args"]), dict(item.get("kwargs") or {})) for item in items]
            cases = CallTests(str(raw["entry_point"]), calls)
        elif kind == "assert":
            entry = raw.get("entry_point")
            cases = AssertTests(str(entry) if entry else None, [str(i["code"]) for i in items])
        else:
            raise JobError(f"unknown test kind {kind!r}")
        return cls(cases, float(raw["per_test_s"]))


@dataclass(frozen=True, slots=True)
class RunJob:
    """Run (and for a compiled language first build) one program, once or on tests."""

    language: str
    source: str
    limits: Limits
    compile_limits: Limits
    stdin: str
    files: dict[str, str]  # name: base64 content (names checked by the pool)
    fetch_files: list[str]
    tests: TestPlan | None


@dataclass(frozen=True, slots=True)
class Ping:
    """Is the worker alive, and with which isolation."""


def parse(frame: Any) -> RunJob | Ping:
    """The request a frame carries; ``JobError`` when it carries none."""
    if not isinstance(frame, dict):
        raise JobError("a request is a JSON object")
    op = frame.get("op")
    if op == "ping":
        return Ping()
    if op != "run":
        raise JobError(f"unknown op {op!r}")
    try:
        tests = frame.get("tests")
        return RunJob(
            language=str(frame["language"]),
            source=str(frame["source"]),
            limits=Limits.of(frame["limits"]),
            compile_limits=Limits.of(frame["compile_limits"]),
            stdin=str(frame.get("stdin") or ""),
            files=dict(frame.get("files") or {}),
            fetch_files=list(frame.get("fetch_files") or []),
            tests=TestPlan.of(tests) if tests is not None else None,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise JobError(f"a malformed run request: {type(exc).__name__}: {exc}") from None
