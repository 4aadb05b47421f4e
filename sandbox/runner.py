"""``Sandbox``: runs, test runs and pass matrices over a pool of workers; the one interface the
server, the ``code`` verifier and remote callers use."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from sandbox import languages
from sandbox.model import (
    COMPILE_LIMITS,
    MODEL_MAXIMA,
    Isolation,
    Limits,
    RunRecord,
    RunRequest,
)
from sandbox.pool import SandboxPool
from sandbox.testcases import JudgeOptions, TestResult, TestSuite, judge

MAX_PROGRAMS = 64
REPLY_SLACK_S = 10.0  # on top of a job's own limits before the worker counts as hung


class SandboxInputError(ValueError):
    """The request cannot run as asked (unknown language, a test kind the language lacks,
    limits above the sandbox's maxima)."""


def fit(limits: Limits, maxima: Limits, *, memory_capped: bool = True) -> Limits:
    """``limits`` within ``maxima``: a value the request set above its maximum is refused, a
    default above it is lowered to it. Without a cap on a run's memory as a whole
    (``memory_capped`` false), the run's processes are limited so that processes x memory per
    process stays within the memory maximum."""
    lowered: dict[str, Any] = {}
    for name in Limits.model_fields:
        value, cap = getattr(limits, name), getattr(maxima, name)
        if value is None or cap is None or value <= cap:
            continue
        if name in limits.model_fields_set:
            raise SandboxInputError(
                f"limits.{name} = {value} is above this sandbox's maximum of {cap}"
            )
        lowered[name] = cap
    if not memory_capped:
        memory = lowered.get("memory_mb", limits.memory_mb)
        budget = max(1, maxima.memory_mb // memory)
        if limits.processes > budget:
            lowered["processes"] = budget
    return limits.model_copy(update=lowered) if lowered else limits


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    __test__ = False  # named Test*, but not pytest tests


class TestRun(_Model):
    """One program against a suite: the program's record and a verdict per test."""

    record: RunRecord
    results: list[TestResult]

    @property
    def passed(self) -> int:
        """How many tests passed."""
        return sum(result.passed for result in self.results)


class MatrixRequest(_Model):
    """N programs x M tests."""

    language: str = "python"
    programs: list[str] = Field(..., min_length=1, max_length=MAX_PROGRAMS)
    tests: TestSuite
    per_test_s: float = Field(2.0, gt=0, le=60, description="Limit per test, seconds.")
    limits: Limits = Field(
        Limits(wall_s=30.0),
        description="Limits per program; wall_s is the budget for all of its tests.",
    )
    judge: JudgeOptions = JudgeOptions()


class ProgramSummary(_Model):
    """One row of a matrix: the program's own record (compile errors, crashes, resources)."""

    status: str
    passed: int
    wall_s: float
    cpu_s: float
    memory_mb: float
    stderr: str = ""
    compile: RunRecord | None = None


class MatrixResult(_Model):
    """``matrix[i][j]``: whether program i passed test j; ``cells`` says how each ran."""

    matrix: list[list[bool]]
    cells: list[list[TestResult]]
    programs: list[ProgramSummary]
    isolation: Isolation | None


class Runs(Protocol):
    """What a sandbox offers, locally or through the server's socket."""

    @property
    def isolation(self) -> str:
        """The isolation level in force."""
        ...

    def run(self, request: RunRequest) -> RunRecord:
        """Run one program."""
        ...

    def run_many(self, requests: list[RunRequest]) -> list[RunRecord]:
        """Run programs concurrently; records in request order."""
        ...

    def test(
        self,
        language: str,
        source: str,
        suite: TestSuite,
        *,
        per_test_s: float,
        limits: Limits,
        options: JudgeOptions,
    ) -> TestRun:
        """Run one program against ``suite`` and judge each test."""
        ...

    def matrix(self, request: MatrixRequest) -> MatrixResult:
        """Run every program against every test."""
        ...


def check_language(name: str, kind: str | None = None) -> languages.Language:
    """The language, if it can run here (and run tests of ``kind``)."""
    try:
        language = languages.get(name)
    except languages.UnknownLanguage as exc:
        raise SandboxInputError(str(exc)) from None
    if not language.available():
        raise SandboxInputError(f"{language.name} is not installed here ({language.missing})")
    if kind in ("call", "assert") and not language.warm:
        raise SandboxInputError(f"{kind} tests need Python; {language.name} takes stdin tests")
    return language


class Sandbox:
    """The local implementation of ``Runs`` over a ``SandboxPool``; requests are held to
    ``maxima`` (``fit``)."""

    def __init__(
        self, pool: SandboxPool, *, owned_dir: str = "", maxima: Limits = MODEL_MAXIMA
    ) -> None:
        self.pool = pool
        self.owned_dir = owned_dir  # removed on close
        self.maxima = maxima

    def fit(self, limits: Limits) -> Limits:
        """``limits`` as this sandbox runs them (``SandboxInputError`` above a maximum)."""
        return fit(limits, self.maxima, memory_capped=self.pool.memory_cap != "address-space")

    @property
    def isolation(self) -> str:
        return self.pool.isolation

    def close(self) -> None:
        """Stop the workers."""
        self.pool.close()
        if self.owned_dir:
            shutil.rmtree(self.owned_dir, ignore_errors=True)

    def _job(
        self,
        language: languages.Language,
        source: str,
        limits: Limits,
        compile_limits: Limits = COMPILE_LIMITS,
        **extra: Any,
    ) -> tuple[dict[str, Any], float]:
        limits = self.fit(limits)
        compile_limits = compile_limits.model_copy(
            update={"memory_mb": min(compile_limits.memory_mb, self.maxima.memory_mb)}
        )
        job = {
            "op": "run",
            "language": language.name,
            "source": source,
            "limits": limits.as_job(),
            "compile_limits": compile_limits.as_job(),
            **extra,
        }
        timeout = limits.wall_s + (compile_limits.wall_s if language.compiled else 0.0)
        return job, timeout + REPLY_SLACK_S

    def run(self, request: RunRequest) -> RunRecord:
        language = check_language(request.language)
        job, timeout = self._job(
            language,
            request.source,
            request.limits,
            COMPILE_LIMITS.model_copy(update={"wall_s": request.compile_wall_s}),
            stdin=request.stdin,
            files=request.files,
            fetch_files=request.fetch_files,
        )
        return RunRecord.model_validate(self.pool.call(job, timeout))

    def run_many(self, requests: list[RunRequest]) -> list[RunRecord]:
        for request in requests:  # refuse the whole batch before running any of it
            check_language(request.language)
            self.fit(request.limits)
        with ThreadPoolExecutor(max_workers=min(2 * self.pool.size, len(requests) or 1)) as threads:
            return list(threads.map(self.run, requests))

    def test(
        self,
        language: str,
        source: str,
        suite: TestSuite,
        *,
        per_test_s: float,
        limits: Limits,
        options: JudgeOptions,
    ) -> TestRun:
        lang = check_language(language, suite.kind)
        tests = {**suite.inputs(), "per_test_s": per_test_s}
        job, timeout = self._job(lang, source, limits, tests=tests)
        reply = self.pool.call(job, timeout)
        record = RunRecord.model_validate(reply)
        outputs = reply.get("tests")
        if (
            record.status != "ok"
            or not isinstance(outputs, list)
            or len(outputs) != len(suite.items)
        ):
            status = record.status if record.status != "ok" else "sandbox_error"
            failed = TestResult(status=status, passed=False, error=record.detail or status)
            return TestRun(record=record, results=[failed] * len(suite.items))
        return TestRun(record=record, results=judge(suite, outputs, options))

    def matrix(self, request: MatrixRequest) -> MatrixResult:
        check_language(request.language, request.tests.kind)
        limits = request.limits
        if "limits" not in request.model_fields_set:  # the default: lowered to fit, never refused
            limits = Limits.model_construct(set(), **limits.model_dump())
        self.fit(limits)  # refused before any program runs
        if request.per_test_s > self.maxima.wall_s:
            raise SandboxInputError(
                f"per_test_s = {request.per_test_s} is above this sandbox's maximum of "
                f"{self.maxima.wall_s}"
            )

        def row(program: str) -> TestRun:
            return self.test(
                request.language,
                program,
                request.tests,
                per_test_s=request.per_test_s,
                limits=limits,
                options=request.judge,
            )

        with ThreadPoolExecutor(max_workers=min(self.pool.size, len(request.programs))) as threads:
            rows = list(threads.map(row, request.programs))
        return MatrixResult(
            matrix=[[cell.passed for cell in run.results] for run in rows],
            cells=[run.results for run in rows],
            programs=[
                ProgramSummary(
                    status=run.record.status,
                    passed=run.passed,
                    wall_s=run.record.wall_s,
                    cpu_s=run.record.cpu_s,
                    memory_mb=run.record.memory_mb,
                    stderr=run.record.stderr[-2000:],
                    compile=run.record.compile,
                )
                for run in rows
            ],
            isolation=self.isolation,
        )
