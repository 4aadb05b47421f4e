"""Shared pieces of the benchmark scripts: workloads, servers, statistics."""

from __future__ import annotations

import re
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import psutil

from environments.math.family import MathTaskOptions, MathTasks
from envserver.testing import LiveServer

DIFFICULTIES = ("easy", "medium", "hard")


def math_items(count: int, first_seed: int) -> list[tuple[str, str]]:
    """``(response, reference)`` pairs from the math generator, about half of them wrong.

    Right answers come as the expert's boxed answer in a sentence; wrong ones box a different
    expression, so both paths through math-verify (match, full comparison) are exercised.
    """
    family = MathTasks()
    items = []
    for seed in range(first_seed, first_seed + count):
        task = family.generate(seed, MathTaskOptions(difficulty=DIFFICULTIES[seed % 3]))
        reference = str(task.reference)
        if seed % 2 == 0:
            response = family.expert_response(task)
        else:
            response = f"After some work, the result is $\\boxed{{{reference} + 1}}$."
        items.append((response, reference))
    return items


def unboxed(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The same items with each answer written without its box and dollars."""
    return [(re.sub(r"\$\\boxed\{(.*)\}\$", r"\1", r), ref) for r, ref in items]


def math_rates(
    paths: Mapping[str, Callable[[str, str], object]],
    form: Callable[[list[tuple[str, str]]], list[tuple[str, str]]],
    items: int,
    rounds: int,
) -> dict[str, list[float]]:
    """Items per CPU second of each path, per round, on fresh math items each (written by
    ``form``), the paths taking turns to go first (the machine's load drifts between rounds:
    take ratios within a round). The paths are warmed first, as a server warms its workers."""

    def rate(check: Callable[[str, str], object], batch: list[tuple[str, str]]) -> float:
        started = time.process_time()
        for response, reference in batch:
            check(response, reference)
        return len(batch) / (time.process_time() - started)

    for check in paths.values():
        rate(check, form(math_items(60, 10**9)))
    rates: dict[str, list[float]] = {name: [] for name in paths}
    for round_index in range(rounds):
        names = list(paths) if round_index % 2 == 0 else list(paths)[::-1]
        for offset, name in enumerate(names):
            first_seed = (2 * round_index + offset) * items
            rates[name].append(rate(paths[name], form(math_items(items, first_seed))))
    return rates


def print_rates(title: str, rates: dict[str, list[float]], baseline: str) -> None:
    """The rates' table: each path's median, and its median ratio to ``baseline`` per round."""
    width = max(len(name) for name in rates) + 2
    print(title)
    print(f"{'path':<{width}}{'items/s':>10}{'ratio':>8}  per-round items per CPU second")
    for name, values in rates.items():
        ratio = median([v / b for v, b in zip(values, rates[baseline], strict=True)])
        shown = " ".join(f"{v:.0f}" for v in values)
        print(f"{name:<{width}}{median(values):>10.0f}{ratio:>8.2f}  {shown}")


def server(workers: int, *args: str, **env: str) -> LiveServer:
    """A server with ``workers`` pool processes in a temporary directory, started with
    ``serve *args`` (not started): one server process unless ``--workers`` says otherwise."""
    workdir = Path(tempfile.mkdtemp(prefix=f"envserver-bench-{workers}w-"))
    env = {"ENVSERVER_SERVER_PROCESSES": "1", **env}
    return LiveServer(workdir, *args, ENVSERVER_POOL_WORKERS=str(workers), **env)


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def median(values: list[float]) -> float:
    """The median of ``values``."""
    return statistics.median(values)


def cpu_seconds(pid: int) -> float:
    """CPU time of ``pid`` and every process under it (pool and sandbox workers included)."""
    root = psutil.Process(pid)
    total = 0.0
    for process in [root, *root.children(recursive=True)]:
        try:
            times = process.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return total


def loop_cpu_seconds(pid: int) -> float:
    """CPU time of ``pid``'s main thread: a server process's event loop, which bounds the calls
    a process answers per second once its pool workers have cores of their own."""
    main = next(t for t in psutil.Process(pid).threads() if t.id == pid)
    return float(main.user_time + main.system_time)
