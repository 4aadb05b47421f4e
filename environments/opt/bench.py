"""The 1,000-instance benchmark set: its cached references and the scripted baselines.

    envserver opt references build [--workers 2]   # prove every optimum, write the cache
    envserver opt references baseline OUT.jsonl     # greedy answers for the set
    envserver opt references verify                 # check the cache against the code

``build`` is reproducible: the instances come from their seeds and CP-SAT runs with one worker
and deterministic time, so the same code writes the same file.
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from environments.opt.catalog import bench_task_ids, families
from environments.opt.family import OptTaskFamily, OptTaskOptions
from environments.opt.references import BUILD_BUDGET, digest
from environments.opt.tasks import TASKS
from environments.task_id import TaskId


def bench_instance(task_id: str) -> tuple[str, dict[str, Any]]:
    """The task key and the instance of a benchmark task id (generated, not solved)."""
    parsed = TaskId.parse(task_id)
    family = families()[parsed.env]
    if not isinstance(family, OptTaskFamily):
        raise KeyError(f"{task_id}: benchmark task ids name single tasks")
    level = OptTaskOptions.model_validate(parsed.options).level
    return family.task.name, family.instance(parsed.seed, level)


def solve_entry(task_id: str) -> tuple[str, dict[str, Any], float]:
    """Solve one benchmark instance from scratch: its cache entry and the seconds it took."""
    name, instance = bench_instance(task_id)
    started = time.perf_counter()
    solution = TASKS[name].solve(instance, BUILD_BUDGET)
    seconds = time.perf_counter() - started
    value = TASKS[name].check.evaluate(instance, solution.answer)
    if value != solution.value:
        raise RuntimeError(f"{task_id}: the solver's answer is worth {value}, not {solution.value}")
    entry = {
        "instance": digest(instance),
        "value": solution.value,
        "optimal": solution.optimal,
        "answer": solution.answer,
    }
    return task_id, entry, seconds


def build(path: Path, workers: int) -> None:
    """Solve the whole set on ``workers`` processes and write the cache."""
    ids = bench_task_ids()
    started = time.perf_counter()
    entries: dict[str, Any] = {}
    times: dict[str, list[float]] = {name: [] for name in TASKS}
    with ProcessPoolExecutor(workers) as pool:
        for task_id, entry, seconds in pool.map(solve_entry, ids, chunksize=4):
            entries[task_id] = entry
            times[TaskId.parse(task_id).env.removeprefix("opt/")].append(seconds)
    wall = time.perf_counter() - started
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries, indent=0, sort_keys=True) + "\n")
    proven = sum(entry["optimal"] for entry in entries.values())
    print(
        f"{len(entries)} instances, {proven} proven optimal, {wall:.1f} s wall on {workers} workers"
    )
    for name, spent in times.items():
        print(f"  {name:<22} mean {sum(spent) / len(spent):6.2f} s  max {max(spent):6.2f} s")


def baseline(out: Path) -> None:
    """Write the greedy baseline's answer for every benchmark instance (one try each)."""
    with out.open("w") as handle:
        for task_id in bench_task_ids():
            name, instance = bench_instance(task_id)
            answer = TASKS[name].greedy(instance)
            handle.write(json.dumps({"task_id": task_id, "response": f"Answer: {answer}"}) + "\n")


def verify(path: Path) -> int:
    """Check that every cached entry matches the instance the code generates now."""
    entries = json.loads(path.read_text())
    stale = [
        tid
        for tid in bench_task_ids()
        if entries.get(tid, {}).get("instance") != digest(bench_instance(tid)[1])
    ]
    for task_id in stale:
        print(f"stale or missing: {task_id}", file=sys.stderr)
    print(f"{len(entries)} cached, {len(stale)} stale or missing")
    return 1 if stale else 0
