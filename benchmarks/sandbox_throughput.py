"""Sandbox throughput: trivial executions per second and N x M pass matrices, against baselines.

Measured side by side in one run, interleaved over rounds (medians reported; ratios are taken
within a round, as the machine's load drifts between rounds):

1. ``print(1)`` through the ``local`` backend (full isolation) and the ``weak`` backend, with
   twice as many caller threads as workers, vs a fresh ``subprocess.run([python, "-c", ...])``
   per run (2 threads, and the best of 1/2/4 threads). Target: at least 5x the 2-thread baseline.
   Next to them the **namespace floor** (``benchmarks/sandbox_side.py``): as many bare processes
   as workers doing per run only what full isolation needs of the kernel (a fork into fresh PID,
   mount and IPC namespaces, a fresh ``/proc`` and ``/dev/shm``), with none of the sandbox's
   code; ``/ floor`` is each row's rate over the floor's in the same round. Beside it the
   **warm floor**: the same workers carrying the sandbox worker's warm modules
   (``sandbox.zygote.WARM_MODULES``), the price of forking an interpreter that holds what a
   Python run needs, which no design running Python in such a fork can pass; ``/ warm`` is
   each row's rate over it. The goal (issue 42) is stated against the warm floor: recover what
   is not the price of a guarantee. ``benchmarks/sandbox_ab.py`` compares two checkouts.
2. A pass matrix of programs x stdin tests (a quarter of the programs hang) through
   ``Sandbox.matrix`` (one exec per program, tests in-process, the rest of a program's tests
   count as timeouts after its first timeout) vs one ``Sandbox.run`` per cell with the same
   per-test limit, judged here. Both must give the same matrix. Target: at least 10x.

    .venv/bin/python -m benchmarks.sandbox_throughput [--runs 1000] [--workers 4] [--rounds 3]
    .venv/bin/python -m benchmarks.sandbox_throughput --quick
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial

from benchmarks.common import median, percentile
from benchmarks.sandbox_ab import ROOT, Side
from sandbox.backends import Backend, SandboxConfig, open_sandbox
from sandbox.model import Limits, RunRequest
from sandbox.runner import MatrixRequest, Sandbox
from sandbox.testcases import JudgeOptions, TestCase, TestSuite, stdout_matches

TRIVIAL = "print(1)"
HANG = "while True: pass"
PER_TEST_S = 0.5  # as in the reference measurements (sandbox.md 3.5)
READ = "a, b = map(int, input().split())\n"
PROGRAMS = [  # correct, wrong-answer and crashing submissions to "print a + b"
    READ + "print(a + b)",
    "print(sum(map(int, input().split())))",
    "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))",
    READ + "print(a - b)",
    READ + "print(a * b)",
    READ + "print(abs(a) + abs(b))",
    READ + "print(a + b if a < 500 else a + b + 1)",
    READ + "print(max(a, b) * 2)",
    "a, b = input().split()\nprint(a + b)",
    READ + "print((a + b) % 1000)",
    READ + "print(a + b)\nraise SystemExit(1)",
    "print(int(input()) + 1)",
]


@contextmanager
def sandbox(backend: Backend, workers: int) -> Iterator[Sandbox]:
    """An open sandbox, closed afterwards (it removes its own scratch space)."""
    sb = open_sandbox(SandboxConfig(backend=backend, workers=workers))
    try:
        yield sb
    finally:
        sb.close()


def concurrently(call: Callable[[int], object], count: int, threads: int) -> float:
    """Seconds to make ``count`` calls from ``threads`` threads."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(call, range(count)))
    return time.perf_counter() - started


def subprocess_rate(runs: int, threads: int) -> float:
    """Runs per second of a fresh interpreter per run."""

    def one(_: int) -> None:
        done = subprocess.run([sys.executable, "-c", TRIVIAL], capture_output=True, check=True)
        assert done.stdout == b"1\n"

    return runs / concurrently(one, runs, threads)


def sandbox_rate(
    sb: Sandbox, runs: int, threads: int, latencies: list[float], statuses: Counter[str]
) -> float:
    """Runs per second of ``print(1)`` through ``sb``; per-call latencies (ms) are appended."""
    request = RunRequest(source=TRIVIAL)

    def one(_: int) -> None:
        started = time.perf_counter()
        record = sb.run(request)
        latencies.append((time.perf_counter() - started) * 1000)
        statuses[record.status if record.stdout == "1\n" else f"{record.status}, bad output"] += 1

    return runs / concurrently(one, runs, threads)


def workload(programs: int, tests: int) -> tuple[list[str], TestSuite]:
    """``programs`` submissions (a quarter hang) and ``tests`` a + b stdin tests."""
    rng = random.Random(0)
    pairs = [(1, 2), (2, 2), (0, 0), (5, 5), (7, 0), (600, 23), (-3, 4)]
    pairs += [(rng.randint(-100, 2000), rng.randint(-100, 2000)) for _ in range(tests)]
    items = [TestCase(stdin=f"{a} {b}\n", stdout=str(a + b)) for a, b in pairs[:tests]]
    sources = [
        HANG if i % 4 == 3 else PROGRAMS[(i - i // 4) % len(PROGRAMS)] for i in range(programs)
    ]
    return sources, TestSuite(kind="stdin", items=items)


def by_matrix(sb: Sandbox, programs: list[str], suite: TestSuite) -> list[list[bool]]:
    """The pass matrix from one ``Sandbox.matrix`` call."""
    result = sb.matrix(MatrixRequest(programs=programs, tests=suite, per_test_s=PER_TEST_S))
    errors = [c.error for row in result.cells for c in row if c.status == "sandbox_error"]
    assert not errors, f"sandbox_error in the matrix: {errors[:3]}"
    return result.matrix


def by_cell(sb: Sandbox, programs: list[str], suite: TestSuite, threads: int) -> list[list[bool]]:
    """The pass matrix from one ``Sandbox.run`` per cell, judged here."""
    cells = [(p, t) for p in programs for t in suite.items]
    limits = Limits(wall_s=PER_TEST_S)

    def one(index: int) -> bool:
        program, test = cells[index]
        record = sb.run(RunRequest(source=program, stdin=test.stdin or "", limits=limits))
        assert record.status != "sandbox_error", record.detail
        return record.status == "ok" and stdout_matches(
            record.stdout, test.stdout or "", JudgeOptions()
        )

    with ThreadPoolExecutor(max_workers=threads) as pool:
        passed = list(pool.map(one, range(len(cells))))
    width = len(suite.items)
    return [passed[i : i + width] for i in range(0, len(passed), width)]


def timed(run: Callable[[], list[list[bool]]]) -> tuple[float, list[list[bool]]]:
    """Wall seconds and result of ``run``."""
    started = time.perf_counter()
    result = run()
    return time.perf_counter() - started, result


def main() -> None:  # noqa: PLR0915 - one linear script
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="print(1) runs per sandbox round")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--programs", type=int, default=16)
    parser.add_argument("--tests", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="small sizes (about 20 s)")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.rounds, args.programs, args.tests = 200, 1, 8, 8
    threads = 2 * args.workers
    base_runs = max(40, args.runs // 5)  # a fresh interpreter per run is ~10x slower

    print(
        f"machine: {os.cpu_count()} cores, Linux {platform.release()}, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f}"
    )
    floor = Side("floor", "floor", ROOT, args.workers)  # its own small process, started first
    warm = Side("warm floor", "warmfloor", ROOT, args.workers)
    with sandbox("local", args.workers) as full, sandbox("weak", args.workers) as weak:
        print(
            f"sandbox: {args.workers} workers; local backend isolation={full.isolation}, "
            f"weak backend isolation={weak.isolation}; {threads} caller threads"
        )
        names = ["subprocess 1 thread", "subprocess 2 threads", "subprocess 4 threads"]
        names += ["sandbox local", "sandbox weak", "namespace floor", "warm floor"]
        rates: dict[str, list[float]] = {name: [] for name in names}
        latencies: list[float] = []
        statuses: dict[str, Counter[str]] = {"local": Counter(), "weak": Counter()}
        for sb in (full, weak):  # warm-up
            sandbox_rate(sb, 8 * args.workers, threads, [], Counter())
        floor.measure(8 * args.workers, threads)
        warm.measure(8 * args.workers, threads)
        for _ in range(args.rounds):
            rates["subprocess 2 threads"].append(subprocess_rate(base_runs, 2))
            rates["namespace floor"].append(
                args.runs / float(floor.measure(args.runs, threads)["seconds"])
            )
            rates["warm floor"].append(
                args.runs / float(warm.measure(args.runs, threads)["seconds"])
            )
            rates["sandbox local"].append(
                sandbox_rate(full, args.runs, threads, latencies, statuses["local"])
            )
            rates["sandbox weak"].append(
                sandbox_rate(weak, args.runs, threads, [], statuses["weak"])
            )
            rates["subprocess 1 thread"].append(subprocess_rate(base_runs, 1))
            rates["subprocess 4 threads"].append(subprocess_rate(base_runs, 4))
        serial: list[float] = []
        sandbox_rate(full, min(args.runs, 300), 1, serial, statuses["local"])
        floor.close()
        warm.close()

        programs, suite = workload(args.programs, args.tests)
        calm = [p for p in programs if p != HANG]
        shapes = {"with hangs": programs, "no hangs": calm}
        walls: dict[tuple[str, str], list[float]] = {
            (shape, how): [] for shape in shapes for how in ("cell", "matrix")
        }
        same = True
        for _ in range(args.rounds):
            for shape, sources in shapes.items():
                cell_s, cell_m = timed(partial(by_cell, full, sources, suite, threads))
                matrix_s, matrix_m = timed(partial(by_matrix, full, sources, suite))
                walls[shape, "cell"].append(cell_s)
                walls[shape, "matrix"].append(matrix_s)
                if cell_m != matrix_m:
                    same = False
                    print(f"MATRICES DIFFER ({shape}):\n per cell {cell_m}\n matrix   {matrix_m}")

    print(
        f"\n1. print(1) runs per second: {args.runs} per sandbox round, {base_runs} per "
        f"subprocess round, {args.rounds} rounds (medians)"
    )
    best = max(names[:3], key=lambda name: median(rates[name]))
    print(
        f"{'method':<22}{'runs/s':>8}{'x 2 thr':>9}{'x best':>8}{'target':>10}"
        f"{'/ floor':>9}{'/ warm':>8}  per round"
    )
    for name in names:
        ratio = median(
            [v / b for v, b in zip(rates[name], rates["subprocess 2 threads"], strict=True)]
        )
        vs_best = median([v / b for v, b in zip(rates[name], rates[best], strict=True)])
        vs_floor, vs_warm = (
            median([v / f for v, f in zip(rates[name], rates[base], strict=True)])
            for base in ("namespace floor", "warm floor")
        )
        target = f">=5 {'ok' if ratio >= 5 else 'MISS'}" if name == "sandbox local" else ""
        per_round = " ".join(f"{v:.0f}" for v in rates[name])
        rate = median(rates[name])
        print(
            f"{name:<22}{rate:>8.0f}{ratio:>9.2f}{vs_best:>8.2f}{target:>10}"
            f"{vs_floor:>9.2f}{vs_warm:>8.2f}  {per_round}"
        )
    print(f"best subprocess baseline: {best}")
    for label, values in ((f"{threads} callers", latencies), ("1 caller", serial)):
        print(
            f"sandbox local latency per run, {label}: p50 {percentile(values, 50):.1f} ms, "
            f"p99 {percentile(values, 99):.1f} ms, max {max(values):.0f} ms"
        )
    for backend, counts in statuses.items():
        print(f"{backend} run statuses: {dict(counts)}")

    hung = programs.count(HANG)
    print(
        f"\n2. pass matrix, {len(programs)} programs ({hung} hang) x {len(suite.items)} stdin "
        f"tests, {PER_TEST_S} s per test, {args.rounds} rounds (medians)"
    )
    print(f"{'method':<32}{'wall s':>8}{'cells/s':>9}{'ratio':>8}{'target':>10}")
    for shape, sources in shapes.items():
        cells = len(sources) * len(suite.items)
        base = walls[shape, "cell"]
        for how, label in (("cell", "one run per cell"), ("matrix", "Sandbox.matrix")):
            wall = walls[shape, how]
            ratio = median([b / w for b, w in zip(base, wall, strict=True)])
            target = ""
            if how == "matrix" and shape == "with hangs":
                target = f">=10 {'ok' if ratio >= 10 else 'MISS'}"
            name = f"{label} ({len(sources)}x{len(suite.items)})"
            seconds = median(wall)
            print(f"{name:<32}{seconds:>8.3f}{cells / seconds:>9.0f}{ratio:>8.1f}{target:>10}")
    print(f"same matrix: {'yes' if same else 'NO'}")
    assert same, "Sandbox.matrix and one run per cell disagree"


if __name__ == "__main__":
    main()
