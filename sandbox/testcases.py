"""Test cases in the three formats RL code datasets use, and the trusted judgement of outputs.

``stdin``   CodeContests/APPS style: the program reads stdin; its stdout is compared.
``call``    LeetCode/LiveCodeBench "functional" style: ``entry_point(*args, **kwargs)``'s
            return value is compared (values as in ``sandbox.values``).
``assert``  HumanEval/MBPP style: snippets of test code (``assert f(1) == 2``, or a
            ``check(candidate)`` function and its call) that must run without raising.

Expected outputs never enter the sandbox: ``inputs`` strips them, and ``judge`` compares in
the trusted process. A test passes only if it ran to completion (status ``ok``) and its output
matches, so exit codes, ``sys.exit(0)`` and patched asserts earn nothing.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sandbox import values
from sandbox.model import Status

MAX_TESTS = 1000
Kind = Literal["stdin", "call", "assert"]
TestStatus = Literal[
    "ok", "runtime_error", "timeout", "memory_limit", "output_limit", "compile_error",
    "sandbox_error",
]  # fmt: skip


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    __test__ = False  # named Test*, but not pytest tests


class TestCase(_Model):
    """One test. Which fields apply depends on the suite's kind: ``stdin``/``stdout`` for stdin
    tests, ``args``/``kwargs``/``expected`` for call tests, ``code`` for assert tests."""

    stdin: str | None = Field(None, max_length=16_000_000)
    stdout: str | None = Field(None, max_length=16_000_000, description="Expected stdout.")
    args: list[Any] | None = Field(None, description="Positional arguments (sandbox.values JSON).")
    kwargs: dict[str, Any] | None = None
    expected: Any = Field(None, description="Expected return value (sandbox.values JSON).")
    code: str | None = Field(None, max_length=1_000_000, description="A test snippet.")


class TestSuite(_Model):
    """A list of tests of one kind."""

    kind: Kind = "stdin"
    entry_point: str | None = Field(
        None,
        max_length=200,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$",
        description="The function called by call tests (``name`` or ``Class.method``); for "
        "assert tests, the function bound to ``candidate``.",
    )
    items: list[TestCase] = Field(..., min_length=1, max_length=MAX_TESTS)

    @model_validator(mode="after")
    def _consistent(self) -> TestSuite:
        for index, item in enumerate(self.items):
            where = f"tests.items.{index}"
            if self.kind == "stdin" and item.stdin is None:
                raise ValueError(f"{where}: a stdin test needs 'stdin'")
            if self.kind == "call":
                if item.args is None and item.kwargs is None:
                    raise ValueError(f"{where}: a call test needs 'args' or 'kwargs'")
                try:
                    values.decode(item.args or [])
                    values.decode(item.kwargs or {})
                    values.decode(item.expected)
                except values.NotPlainData as exc:
                    raise ValueError(f"{where}: {exc}") from None
            if self.kind == "assert" and not item.code:
                raise ValueError(f"{where}: an assert test needs 'code'")
        if self.kind == "call" and not self.entry_point:
            raise ValueError("call tests need 'entry_point'")
        return self

    def inputs(self) -> dict[str, Any]:
        """What the sandbox gets: inputs only."""
        if self.kind == "stdin":
            items: list[dict[str, Any]] = [{"stdin": t.stdin} for t in self.items]
        elif self.kind == "call":
            items = [{"args": t.args or [], "kwargs": t.kwargs or {}} for t in self.items]
        else:
            items = [{"code": t.code} for t in self.items]
        return {"kind": self.kind, "entry_point": self.entry_point, "items": items}


class JudgeOptions(_Model):
    """How outputs are compared."""

    whitespace: Literal["tokens", "lines", "exact"] = Field(
        "tokens",
        description="tokens: compare whitespace-separated tokens (most judges); lines: compare "
        "lines with trailing spaces and trailing blank lines ignored; exact: byte for byte "
        "(no float tolerance).",
    )
    float_tolerance: float | None = Field(
        None,
        ge=0,
        le=1,
        description="When set, numbers match within this absolute or relative tolerance.",
    )


class TestResult(_Model):
    """One cell: how the test ran and whether it passed. ``error`` never quotes the expected
    output (hidden tests stay hidden)."""

    status: TestStatus
    passed: bool
    time_s: float = 0.0
    error: str = ""


def _numbers_close(a: str, b: str, tolerance: float) -> bool:
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return math.isclose(x, y, rel_tol=tolerance, abs_tol=tolerance)


def _tokens_match(got: list[str], want: list[str], tolerance: float | None) -> bool:
    if len(got) != len(want):
        return False
    return all(
        g == w or (tolerance is not None and _numbers_close(g, w, tolerance))
        for g, w in zip(got, want, strict=True)
    )


def stdout_matches(got: str, want: str, options: JudgeOptions) -> bool:
    """Whether ``got`` is an accepted output for ``want``."""
    if options.whitespace == "exact":
        return got == want
    if options.whitespace == "lines":
        got_lines = [line.rstrip() for line in got.rstrip().splitlines()]
        want_lines = [line.rstrip() for line in want.rstrip().splitlines()]
        return len(got_lines) == len(want_lines) and all(
            g == w or _tokens_match(g.split(), w.split(), options.float_tolerance)
            for g, w in zip(got_lines, want_lines, strict=True)
        )
    return _tokens_match(got.split(), want.split(), options.float_tolerance)


def _numbers_equal(got: float, want: float, tolerance: float | None) -> bool:
    if tolerance is None or (isinstance(got, int) and isinstance(want, int)):
        return got == want
    if math.isnan(got) or math.isnan(want):
        return math.isnan(got) and math.isnan(want)
    return math.isclose(got, want, rel_tol=tolerance, abs_tol=tolerance)


def values_match(got: Any, want: Any, tolerance: float | None) -> bool:
    """Structural equality; lists and tuples are interchangeable (JSON has only lists), numbers
    may differ within ``tolerance``; ``True`` never equals ``1``."""
    if isinstance(got, bool) or isinstance(want, bool):
        return type(got) is type(want) and got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return _numbers_equal(got, want, tolerance)
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)):
        return len(got) == len(want) and all(
            values_match(g, w, tolerance) for g, w in zip(got, want, strict=True)
        )
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(
            values_match(got[k], want[k], tolerance) for k in got
        )
    return type(got) is type(want) and bool(got == want)


def judge(
    suite: TestSuite, outputs: list[dict[str, Any]], options: JudgeOptions
) -> list[TestResult]:
    """Per-test verdicts from the sandbox's raw per-test outputs (untrusted content)."""
    results = []
    for case, out in zip(suite.items, outputs, strict=True):
        status: Status = out.get("status", "sandbox_error")
        time_s = float(out.get("time_s") or 0.0)
        if status != "ok":
            error = str(out.get("error") or status)[-500:]
            results.append(TestResult(status=status, passed=False, time_s=time_s, error=error))
            continue
        passed, error = _PASSES[suite.kind](case, out, options)
        results.append(TestResult(status="ok", passed=passed, time_s=time_s, error=error))
    return results


def _assert_passes(case: TestCase, out: dict[str, Any], options: JudgeOptions) -> tuple[bool, str]:
    passed = out.get("passed") is True
    return passed, "" if passed else str(out.get("error") or "the test failed")[-500:]


def _stdin_passes(case: TestCase, out: dict[str, Any], options: JudgeOptions) -> tuple[bool, str]:
    if case.stdout is None:
        return True, ""  # no expected output: the test checks only that the program runs
    got = out.get("stdout")
    matched = isinstance(got, str) and stdout_matches(got, case.stdout, options)
    return matched, "" if matched else "wrong answer"


def _call_passes(case: TestCase, out: dict[str, Any], options: JudgeOptions) -> tuple[bool, str]:
    try:
        got = values.decode(out.get("value"))
        want = values.decode(case.expected)
    except values.NotPlainData as exc:
        return False, f"the return value is not plain data: {exc}"
    matched = values_match(got, want, options.float_tolerance)
    return matched, "" if matched else "wrong answer"


_PASSES = {"assert": _assert_passes, "stdin": _stdin_passes, "call": _call_passes}
