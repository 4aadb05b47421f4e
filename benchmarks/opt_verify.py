"""OPT-BENCH verification cost per task at the bench level: in-process and over HTTP.

Side by side in one run, on the same answers (the reference answer, the greedy baseline's and
an infeasible one per instance): the median and p99 time of one check in this process (what a
worker does per answer) and the throughput of batched ``POST /v1/verify`` by task id on a
2-worker server. Target (issue 4): median under 1 ms per answer server-side.

    .venv/bin/python -m benchmarks.opt_verify [--instances 20]
"""

from __future__ import annotations

import argparse
import time

import httpx

from benchmarks.common import percentile, server
from environments.opt.catalog import reference_for
from environments.opt.tasks import TASKS
from environments.task_id import TaskId
from verifiers.opt import VERIFIER


def answers(task: str, instances: int) -> list[tuple[str, str]]:
    """``(task_id, response)`` pairs: reference, greedy and an infeasible answer per instance."""
    pairs = []
    for seed in range(instances):
        task_id = TaskId.format(f"opt/{task}", "1", seed, {"level": "bench"})
        reference = reference_for(task_id)
        pairs.append((task_id, f"Answer: {reference['answer']}"))
        pairs.append((task_id, f"Answer: {TASKS[task].greedy(reference['instance'])}"))
        pairs.append((task_id, "Answer: [0, 0]"))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=20)
    args = parser.parse_args()

    print(f"opt verification at level bench, {args.instances} instances x 3 answers per task")
    print(f"{'task':<22}{'p50 us':>8}{'p99 us':>8}{'http items/s':>14}")
    worst = 0.0
    with server(2) as live, httpx.Client(base_url=live.base_url, timeout=300) as client:
        for task in TASKS:
            pairs = answers(task, args.instances)
            references = {tid: reference_for(tid) for tid, _ in pairs}
            times = []
            for _ in range(5):
                for task_id, response in pairs:
                    started = time.perf_counter()
                    VERIFIER(response, references[task_id])
                    times.append((time.perf_counter() - started) * 1e6)
            body = {"items": [{"task_id": t, "response": r} for t, r in pairs]}
            client.post("/v1/verify", json=body).raise_for_status()  # workers cache the tasks
            started = time.perf_counter()
            rounds = 5
            for _ in range(rounds):
                client.post("/v1/verify", json=body).raise_for_status()
            rate = rounds * len(pairs) / (time.perf_counter() - started)
            p50 = percentile(times, 50)
            worst = max(worst, p50)
            print(f"{task:<22}{p50:>8.0f}{percentile(times, 99):>8.0f}{rate:>14.0f}")
    verdict = "ok" if worst < 1000 else "MISS"
    print(f"target: median under 1 ms per answer -> {verdict} (worst {worst:.0f} us)")


if __name__ == "__main__":
    main()
