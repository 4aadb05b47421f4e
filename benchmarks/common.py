"""Shared pieces of the benchmark scripts: workloads, servers, statistics."""

from __future__ import annotations

import statistics
import tempfile
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
