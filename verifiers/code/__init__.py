"""Code answers run against hidden tests in the sandbox; the trusted side judges the outputs.

The reference of an item is ``{"tests": <TestSuite>, "language": "python", "time_limit_s": 2,
"memory_mb": 1024}`` (all but ``tests`` optional): stdin/stdout tests, function-call tests or
assert snippets (see ``sandbox.testcases``). The response is a program, usually in a fenced
block. Reward: the fraction of tests passed (component ``pass_fraction``), or 1/0 for
all-or-nothing; metrics: tests ``passed`` and ``total``, and ``first_failure`` (the index of the
first failed test, -1 when none failed).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandbox import default as default_sandbox
from sandbox import values
from sandbox.model import Limits
from sandbox.pool import Overloaded
from sandbox.runner import Runs, SandboxInputError, TestRun
from sandbox.testcases import JudgeOptions, TestSuite, stdout_matches, values_match
from verifiers.base import Verifier
from verifiers.code.extract import SeveralPrograms, extract_code
from verifiers.numbers import Options
from verifiers.score import Score

MAX_PROGRAM_S = 50.0  # all tests of one response; below the verifier's own kill limit


class CodeReference(BaseModel):
    """Hidden tests and the limits they run under."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tests: TestSuite
    language: str = "python"
    time_limit_s: float = Field(2.0, gt=0, le=30, description="Limit per test, seconds.")
    memory_mb: int = Field(1024, ge=64, le=8192)


class CodeOptions(Options):
    """How test results become a reward."""

    reward: Literal["fraction", "all"] = Field(
        "fraction", description="fraction: tests passed / tests; all: 1 only if every test passes."
    )
    whitespace: Literal["tokens", "lines", "exact"] = "tokens"
    float_tolerance: float | None = Field(None, ge=0, le=1)


def _program(response: str, reference: Any) -> tuple[CodeReference, str] | Score:
    """The reference and the program, or the Score that ends the check early."""
    try:
        ref = CodeReference.model_validate(reference)
    except ValidationError as exc:
        return Score.bad_reference(
            f"the reference is not a valid code reference: {exc.errors()[0]['msg']}"
        )
    try:
        source = extract_code(response, ref.language)
    except SeveralPrograms as exc:
        return Score.invalid(str(exc))
    if not source.strip():
        return Score.invalid("no program in the response")
    if ref.language == "python":
        try:  # parsing untrusted text is safe; running it is not
            compile(source, "main.py", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            return Score.invalid(f"the program does not parse: {type(exc).__name__}: {exc}"[:300])
    return ref, source


def _passed_by_nothing(tests: TestSuite, judge: JudgeOptions) -> list[bool]:
    """Per test, whether a program that does nothing passes it: a stdin test that expects no
    output (or checks none), a call test that expects ``None``. Assert tests cannot tell."""
    if tests.kind == "stdin":
        return [t.stdout is None or stdout_matches("", t.stdout, judge) for t in tests.items]
    if tests.kind == "call":
        return [
            values_match(None, values.decode(t.expected), judge.float_tolerance)
            for t in tests.items
        ]
    return [False] * len(tests.items)


def _score(run: TestRun, tests: TestSuite, judge: JudgeOptions, options: CodeOptions) -> Score:
    """The reward from judged tests; sandbox failures are errors, never 0.

    Tests that a program doing nothing passes count only beside a test it does not: a program
    that passes those alone (``...``, an early ``exit(0)``) has shown nothing, and earned 1/5 on
    a task whose empty input prints nothing (issue 38)."""
    statuses = [result.status for result in run.results]
    if run.record.status == "sandbox_error" or "sandbox_error" in statuses:
        return Score.error(f"the sandbox failed: {run.record.detail or 'a test could not run'}")
    if run.record.status == "compile_error":
        stderr = run.record.compile.stderr if run.record.compile else run.record.stderr
        return Score.invalid(f"the program does not compile: {stderr[-300:]}")
    total = len(run.results)
    passed = run.passed
    trivial = _passed_by_nothing(tests, judge)
    vacuous = (
        passed > 0
        and not all(trivial)
        and not any(
            result.passed and not easy for result, easy in zip(run.results, trivial, strict=True)
        )
    )
    if vacuous:
        passed = 0
    fraction = passed / total
    reward = fraction if options.reward == "fraction" else float(passed == total)
    first = next((i for i, result in enumerate(run.results) if not result.passed), None)
    detail = f"{passed}/{total} tests passed"
    if vacuous:
        detail += " (the tests it passed are passed by a program that does nothing)"
    if first is not None:
        failure = run.results[first]
        reason = "wrong answer" if failure.status == "ok" else failure.status.replace("_", " ")
        detail += f"; first failure: test {first} ({reason})"
    return Score.ok(
        reward,
        components={"pass_fraction": fraction},
        detail=detail,
        extra={"statuses": statuses, "isolation": run.record.isolation},
        metrics={
            "passed": float(passed),
            "total": float(total),
            "first_failure": float(-1 if first is None else first),
        },
    )


def check(
    response: str, reference: Any, options: CodeOptions, *, sandbox: Runs | None = None
) -> Score:
    """Run the response's program against the reference's tests (in this process's sandbox
    unless one is given)."""
    program = _program(response, reference)
    if isinstance(program, Score):
        return program
    ref, source = program
    budget = min(MAX_PROGRAM_S, ref.time_limit_s * len(ref.tests.items) + 1.0)
    judge = JudgeOptions(whitespace=options.whitespace, float_tolerance=options.float_tolerance)
    try:
        run = (sandbox or default_sandbox()).test(
            ref.language,
            source,
            ref.tests,
            per_test_s=ref.time_limit_s,
            limits=Limits(wall_s=budget, memory_mb=ref.memory_mb),
            options=judge,
        )
    except SandboxInputError as exc:
        return Score.error(f"the reference cannot run here: {exc}")
    except (OSError, Overloaded) as exc:
        return Score.error(f"the sandbox is unavailable: {exc}")
    return _score(run, ref.tests, judge, options)


VERIFIER = Verifier(
    name="code",
    # 2 (issue 38): two different programs in one response are several answers (invalid), and
    # tests a program doing nothing passes count only beside one it does not
    version="2",
    description="Runs the response's program (Python, C++, C or bash) in the sandbox against "
    "hidden stdin/stdout, function-call or assert tests; the trusted server compares outputs. "
    "Reward: pass fraction or all-or-nothing.",
    check=check,
    options_model=CodeOptions,
    timeout_s=60.0,
    components=("pass_fraction",),
    metrics=("passed", "total", "first_failure"),
    example=(
        "```python\ndef add(a, b):\n    return a + b\n```",
        {
            "tests": {
                "kind": "call",
                "entry_point": "add",
                "items": [{"args": [2, 3], "expected": 5}],
            }
        },
    ),
)
