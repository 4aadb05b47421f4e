"""A run's memory as a whole: the slot cgroups, the fallback without them, the server's maxima.

The containment itself (16 children x 400 MiB, on both isolation levels) is in the attack
suite; here are the mechanisms: groups made and removed with the pool, limits and peaks per run,
what happens where no cgroup can be made, and requests above the maxima.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import cgroups
from sandbox.backends import SandboxConfig, memory_share, open_sandbox
from sandbox.model import MODEL_MAXIMA, Limits, RunRequest
from sandbox.runner import MatrixRequest, Sandbox, SandboxInputError, fit
from sandbox.testcases import JudgeOptions, TestSuite

HIERARCHY, WHY_NOT = cgroups.find()
needs_cgroup = pytest.mark.skipif(HIERARCHY is None, reason=f"no memory cgroup here: {WHY_NOT}")
HOGS = """
import os, time
kids = []
for _ in range(8):
    try:
        pid = os.fork()
    except OSError as exc:
        print("fork refused:", exc.strerror, flush=True)
        break
    if pid == 0:
        try:
            block = bytearray(100 << 20)
            block[::4096] = b"x" * len(block[::4096])
        except MemoryError:
            os._exit(3)
        time.sleep(1)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print("forked", len(kids))
"""


def _pool_groups() -> list[Path]:
    """This process's pools' groups (named for its pid: tests in other processes make theirs)."""
    assert HIERARCHY is not None
    mine = f"{cgroups.PREFIX}{os.getpid()}-"
    return [p for p in HIERARCHY.parent.iterdir() if p.name.startswith(mine)]


# -- the groups ----------------------------------------------------------------------------------


@needs_cgroup
def test_a_pool_makes_a_group_per_slot_and_removes_them_when_it_closes() -> None:
    before = set(_pool_groups())
    sandbox = open_sandbox(SandboxConfig(backend="local", workers=2))
    try:
        assert sandbox.pool.memory_cap == "cgroup"
        (mine,) = set(_pool_groups()) - before
        assert sorted(p.name for p in mine.iterdir() if p.is_dir()) == ["slot0", "slot1"]
        record = sandbox.run(RunRequest(source="print(1)"))
        assert record.status == "ok"
    finally:
        sandbox.close()
    assert not mine.exists()


@needs_cgroup
def test_a_run_group_sets_its_limit_and_reports_peak_and_oom_kills(tmp_path: Path) -> None:
    groups = cgroups.Groups(HIERARCHY)  # type: ignore[arg-type]
    try:
        group = cgroups.RunGroup.open(groups.slot(0))
        group.start(128)
        assert group.limit_mb == 128
        pid = os.fork()
        if pid == 0:  # a run: joins, then goes over its limit
            group.join()
            block = bytearray(32 << 20)
            block[::4096] = b"y" * len(block[::4096])
            huge = bytearray(512 << 20)
            huge[::4096] = b"z" * len(huge[::4096])
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9  # the kernel's OOM kill
        assert group.oom_kills() == 1
        assert 32 <= group.peak_mb() <= 128
        group.start(256)  # the next run: a fresh count and peak
        assert group.oom_kills() == 0 and group.peak_mb() < 16
        assert group.limit_mb == 256
    finally:
        groups.close()
    assert not groups.root.exists()


@needs_cgroup
def test_groups_of_a_dead_server_are_removed_by_the_next_pool() -> None:
    assert HIERARCHY is not None
    stale = HIERARCHY.parent / f"{cgroups.PREFIX}999999999-0"
    (stale / "slot0").mkdir(parents=True)
    groups = cgroups.Groups(HIERARCHY)
    try:
        assert not stale.exists()
    finally:
        groups.close()


def test_without_a_usable_hierarchy_there_is_no_group_and_a_reason(tmp_path: Path) -> None:
    groups, reason = cgroups.Groups.open(str(tmp_path / "not-a-cgroup"))
    assert groups is None and reason


# -- without a cgroup: processes x memory within the maximum -------------------------------------


@pytest.fixture(scope="module", params=["local", "weak"])
def uncapped(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Sandbox]:
    """A sandbox that could make no cgroup (its parent is not a cgroup directory)."""
    parent = tmp_path_factory.mktemp("no-cgroup")
    maxima = MODEL_MAXIMA.model_copy(update={"memory_mb": 800})
    config = SandboxConfig(
        backend=request.param, workers=1, cgroup_parent=str(parent), max_limits=maxima
    )
    sandbox = open_sandbox(config)
    yield sandbox
    sandbox.close()


def test_without_a_cgroup_processes_are_limited_to_fit_the_memory_maximum(
    uncapped: Sandbox,
) -> None:
    """800 MiB at most, 200 MiB per process: 4 processes, so 8 children cannot all start; what
    does start stays within 4 x 200 MiB of address space."""
    assert uncapped.pool.memory_cap == "address-space"
    assert uncapped.fit(Limits(memory_mb=200)).processes == 4
    record = uncapped.run(RunRequest(source=HOGS, limits=Limits(wall_s=20, memory_mb=200)))
    assert record.status == "ok", record
    assert "fork refused" in record.stdout
    forked = int(record.stdout.split("forked")[1])
    assert forked <= 3, record.stdout  # with the parent, 4 processes of 200 MiB at most


# -- the maxima ----------------------------------------------------------------------------------


SMALL = MODEL_MAXIMA.model_copy(update={"memory_mb": 512, "processes": 32, "wall_s": 20})


def test_fit_refuses_what_a_request_set_above_a_maximum_naming_it() -> None:
    with pytest.raises(SandboxInputError, match=r"limits.memory_mb = 1024 .* maximum of 512"):
        fit(Limits(memory_mb=1024), SMALL)
    with pytest.raises(SandboxInputError, match=r"limits.processes = 64 .* maximum of 32"):
        fit(Limits(processes=64), SMALL)
    with pytest.raises(SandboxInputError, match=r"limits.wall_s = 30.0 .* maximum of 20"):
        fit(Limits(wall_s=30), SMALL)


def test_fit_lowers_defaults_above_a_maximum_and_keeps_the_rest() -> None:
    fitted = fit(Limits(wall_s=5), SMALL)
    assert (fitted.memory_mb, fitted.processes, fitted.wall_s) == (512, 32, 5)
    assert fit(Limits(memory_mb=256, processes=8), SMALL) == Limits(memory_mb=256, processes=8)


def test_fit_without_a_memory_cap_limits_processes_to_the_memory_maximum() -> None:
    assert fit(Limits(memory_mb=128), SMALL, memory_capped=False).processes == 4
    assert fit(Limits(memory_mb=512), SMALL, memory_capped=False).processes == 1
    assert fit(Limits(memory_mb=64, processes=2), SMALL, memory_capped=False).processes == 2


def test_the_default_memory_maximum_is_a_share_of_the_machine() -> None:
    total_mb = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") >> 20
    assert memory_share(1) == min(16384, int(total_mb * 0.8))
    assert memory_share(4) <= max(1024, total_mb * 0.8 / 4)
    assert memory_share(10**6) == 1024  # never below the default limit


def test_a_sandbox_holds_runs_tests_and_matrices_to_its_maxima() -> None:
    sandbox = open_sandbox(SandboxConfig(backend="local", workers=1, max_limits=SMALL))
    try:
        high = Limits(memory_mb=2048)
        with pytest.raises(SandboxInputError, match="maximum of 512"):
            sandbox.run(RunRequest(source="print(1)", limits=high))
        with pytest.raises(SandboxInputError, match="maximum of 512"):
            sandbox.run_many([RunRequest(source="print(1)"), RunRequest(source="", limits=high)])
        suite = TestSuite.model_validate({"kind": "stdin", "items": [{"stdin": "", "stdout": ""}]})
        with pytest.raises(SandboxInputError, match="per_test_s"):
            sandbox.matrix(MatrixRequest(programs=["pass"], tests=suite, per_test_s=30))
        record = sandbox.run(RunRequest(source="print(1)"))  # defaults fit by themselves
        assert (record.status, record.stdout) == ("ok", "1\n")
    finally:
        sandbox.close()


HOLDS_THEN_GROWS = """
import os, time
def f(step):
    if step == 1:  # a child of the program holds 400 MiB...
        if os.fork() == 0:
            block = bytearray(400 << 20)
            block[::4096] = b"x" * len(block[::4096])
            time.sleep(60)
            os._exit(0)
        time.sleep(1.5)
        return 1
    block = bytearray(700 << 20)  # ...then the program itself takes 700 MiB more
    block[::4096] = b"y" * len(block[::4096])
    return 2
"""


@needs_cgroup
@pytest.mark.parametrize("backend", ["local", "weak"])
def test_a_test_whose_process_the_memory_cap_killed_says_so(backend: str) -> None:
    suite = TestSuite.model_validate(
        {
            "kind": "call",
            "entry_point": "f",
            "items": [{"args": [1], "expected": 1}, {"args": [2], "expected": 2}],
        }
    )
    box = open_sandbox(SandboxConfig(backend=backend, workers=1))  # type: ignore[arg-type]
    try:
        run = box.test(
            "python",
            HOLDS_THEN_GROWS,
            suite,
            per_test_s=20,
            limits=Limits(wall_s=40, memory_mb=1024),
            options=JudgeOptions(),
        )
    finally:
        box.close()
    assert run.results[0].passed, run
    assert run.results[1].status == "memory_limit" and not run.results[1].passed, run
    assert run.record.status == "ok" and run.record.memory_mb >= 900, run.record
