"""The worker's typed requests (``sandbox.jobs``, issue 26 item 5): the frames the pool sends
become typed requests once, at the door; a frame that is not one is the sandbox's error (a
``sandbox_error`` reply), and the worker goes on serving."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.jobs import (
    AssertTests,
    CallTests,
    JobError,
    Limits,
    Ping,
    RunJob,
    StdinTests,
    parse,
)
from sandbox.model import Limits as ModelLimits
from sandbox.pool import LocalFactory
from sandbox.testcases import TestCase, TestSuite

LIMITS = ModelLimits(wall_s=5).as_job()


def _run_frame(**extra: Any) -> dict[str, Any]:
    frame = {"op": "run", "language": "python", "source": "print(1)"}
    return {**frame, "limits": LIMITS, "compile_limits": LIMITS, **extra}


def test_a_plain_run_becomes_a_typed_job() -> None:
    job = parse(_run_frame(stdin="2 3\n", fetch_files=["out.txt"]))
    assert isinstance(job, RunJob)
    assert (job.language, job.source, job.stdin, job.fetch_files) == (
        "python",
        "print(1)",
        "2 3\n",
        ["out.txt"],
    )
    assert job.limits == Limits.of(LIMITS) and job.limits.wall_s == 5.0
    assert job.tests is None and job.files == {}
    assert parse({"op": "ping"}) == Ping()


def test_each_test_format_becomes_its_own_type() -> None:
    """The three formats as ``TestSuite.inputs`` gives them to the worker."""
    suites = {
        "stdin": TestSuite(kind="stdin", items=[TestCase(stdin="1 2\n", expected="3")]),
        "call": TestSuite(
            kind="call", entry_point="add", items=[TestCase(args=[1, 2], expected=3)]
        ),
        "assert": TestSuite(kind="assert", items=[TestCase(code="assert add(1, 2) == 3")]),
    }
    plans = {}
    for kind, suite in suites.items():
        job = parse(_run_frame(tests={**suite.inputs(), "per_test_s": 0.5}))
        assert isinstance(job, RunJob) and job.tests is not None
        assert (job.tests.count, job.tests.per_test_s) == (1, 0.5)
        plans[kind] = job.tests.cases
    assert plans["stdin"] == StdinTests(["1 2\n"])
    assert plans["call"] == CallTests("add", [([1, 2], {})])
    assert plans["assert"] == AssertTests(None, ["assert add(1, 2) == 3"])


@pytest.mark.parametrize(
    "frame",
    [
        ["op", "run"],
        {"op": "exec"},
        {"op": "run", "language": "python", "source": "print(1)"},  # no limits
        _run_frame(limits={"wall_s": 1}),
        _run_frame(tests={"kind": "fuzz", "items": [], "per_test_s": 1}),
        _run_frame(tests={"kind": "call", "items": [{"args": []}], "per_test_s": 1}),
    ],
    ids=["not-an-object", "unknown-op", "no-limits", "partial-limits", "unknown-kind", "no-entry"],
)
def test_a_frame_that_is_no_request_is_refused(frame: Any) -> None:
    with pytest.raises(JobError):
        parse(frame)


def test_the_worker_answers_a_malformed_request_and_serves_on() -> None:
    factory = LocalFactory("full", "")
    worker = factory(0)
    try:
        bad = worker.call({"op": "run", "language": "python"}, timeout_s=30)
        assert bad["status"] == "sandbox_error", bad
        assert "malformed run request" in bad["detail"], bad
        good = worker.call(_run_frame(), timeout_s=30)
        assert (good["status"], good["stdout"]) == ("ok", "1\n"), good
    finally:
        worker.close()
        factory.close()
