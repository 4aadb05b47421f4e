"""EvoEnv: admission time per submission, and the serving throughput of an admitted environment
next to a built-in one of the same kind (single-turn knapsack, scored by task id), same run.

    python -m benchmarks.evo_admission [--tasks 48] [--rounds 3]

Admission runs in this process against its own sandbox (the ten seeds, each against the ones
before it). A server started on a fresh store is timed until it serves the ten seeds (listed,
one reset each), next to the same server restarted on that store. Serving starts one server,
submits a new environment, and times ``/v1/verify`` of expert responses by task id for the
seed ``evo/zero_one_knapsack`` and the built-in ``opt/knapsack``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.common import median, server
from environments.evo.admission import admit
from environments.evo.construct import expert_source
from environments.evo.novelty import PoolEntry
from environments.evo.program import run_calls, task_call
from environments.evo.seeds import seed_sources
from environments.evo.settings import EvoSettings
from envserver.registry import discover
from envserver.testing import LiveServer

EVO = "evo/zero_one_knapsack"
BUILT_IN = "opt/knapsack"


def admission_times() -> list[float]:
    """Seconds per seed admission, each against the seeds admitted before it."""
    settings = EvoSettings(data_dir=Path())  # admission opens no store
    pool: list[PoolEntry] = []
    seconds = []
    admit(seed_sources()["lis"], [], settings=settings)  # warm the sandbox's workers
    for name, source in seed_sources().items():
        started = time.perf_counter()
        admission = admit(source, pool, settings=settings)
        seconds.append(time.perf_counter() - started)
        assert admission.outcome == "admitted", (name, admission.reports)
        pool.append(PoolEntry(name, admission.normalised, admission.fingerprint))
    return seconds


def _submit(http: httpx.Client, source: str) -> None:
    submission = http.post("/v1/evo/submissions", json={"source": source}).json()["id"]
    while (status := http.get(f"/v1/evo/submissions/{submission}").json())["status"] == "pending":
        time.sleep(0.1)
    assert status["status"] == "admitted", status


def _items(http: httpx.Client, env_id: str, tasks: int) -> list[dict[str, Any]]:
    """Task ids from a batch reset and each task's expert response (computed here)."""
    items = [{"seed": seed} for seed in range(tasks)]
    resets = http.post(f"/v1/envs/{env_id}/reset/batch", json={"items": items}).json()["results"]
    ids = [reset["task_id"] for reset in resets]
    if env_id == EVO:
        source = seed_sources()["knapsack"]
        oracle = run_calls(source, [task_call(seed, 1) for seed in range(tasks)])
        responses = [str(task.value["reference"]) for task in oracle]
    else:
        env = discover().env(env_id)
        options = env.spec.options_model()
        responses = [env.expert_action(env.reset(s, options).state) for s in range(tasks)]
    return [{"task_id": i, "response": r} for i, r in zip(ids, responses, strict=True)]


def verify_rate(http: httpx.Client, items: list[dict[str, Any]], rounds: int) -> float:
    """Median items per second of ``/v1/verify`` over ``rounds`` batches (all rewards 1)."""
    rates = []
    for _ in range(rounds):
        started = time.perf_counter()
        results = http.post("/v1/verify", json={"items": items}).json()["results"]
        rates.append(len(items) / (time.perf_counter() - started))
        assert all(r["reward"] == 1.0 for r in results), results[:2]
    return median(rates)


def seeds_served(live: LiveServer) -> tuple[float, float]:
    """Seconds from starting ``live`` until ``/readyz``, and from then until it lists the ten
    seeds and has reset each once."""
    started = time.perf_counter()
    live.start()
    ready = time.perf_counter()
    with httpx.Client(base_url=live.base_url, timeout=300) as http:
        envs = http.get("/v1/evo/envs").json()
        assert len(envs) == 10, envs
        for env in envs:
            reset = http.post(f"/v1/envs/{env['id']}/reset", json={"seed": 1}).json()
            assert reset["status"] == "ok", reset
    return ready - started, time.perf_counter() - ready


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    seconds = admission_times()
    print(f"admission of the ten seeds: median {median(seconds) * 1000:.0f} ms, "
          f"max {max(seconds) * 1000:.0f} ms per submission")  # fmt: skip

    # A fresh store (the seeds planted on first open) next to a restart on it (the baseline).
    workdir = Path(tempfile.mkdtemp(prefix="envserver-bench-evo-"))
    timings = {}
    for run in ("fresh", "restart"):
        live = LiveServer(workdir, ENVSERVER_POOL_WORKERS=str(args.workers))
        try:
            timings[run] = seeds_served(live)
        finally:
            live.stop()
    for run, (ready, served) in timings.items():
        print(f"{run:8s} start to /readyz {ready:5.1f} s, then the ten seeds listed and reset "
              f"once each {served:5.2f} s")  # fmt: skip
    fresh, restart = (sum(timings[run]) for run in ("fresh", "restart"))
    print(f"start to the ten seeds served, fresh store / restart: {fresh / restart:.2f}")

    with server(args.workers) as live, httpx.Client(base_url=live.base_url, timeout=300) as http:
        started = time.perf_counter()
        _submit(http, expert_source(1))
        print(f"admission over HTTP (submit to admitted): {time.perf_counter() - started:.2f} s")
        rates = {}
        for env_id in (BUILT_IN, EVO):
            items = _items(http, env_id, args.tasks)
            verify_rate(http, items, 1)  # each worker's task cache filled
            rates[env_id] = verify_rate(http, items, args.rounds)
            print(f"{env_id:24s} {rates[env_id]:8.0f} scored items/s (task ids, expert answers)")
        print(f"ratio {EVO} / {BUILT_IN}: {rates[EVO] / rates[BUILT_IN]:.2f}")


if __name__ == "__main__":
    main()
