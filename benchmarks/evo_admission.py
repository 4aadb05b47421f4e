"""EvoEnv: admission time per submission, and the serving throughput of an admitted environment
next to a built-in one of the same kind (single-turn knapsack, scored by task id), same run.

    python -m benchmarks.evo_admission [--tasks 48] [--rounds 3] [--admission-only]
                                       [--baseline REVISION] [--queue-only]

Admission runs in this process against its own sandbox (the ten seeds, each against the ones
before it), side by side with the pipeline of ``--baseline`` (by default the commit before
issue 38's search: its ``admission.py``, read from git and run on today's modules) and with
today's without the symbolic search: seed by seed, the three in turn, so load hits each alike.
Wall clock, and CPU time where the sandbox's workers are this process's children (the local
backends): this process's and theirs, with the runs they reaped.

The admission queue's reads on a SQLite store holding a full queue (``--queue-only`` runs
only these): the state ``/readyz`` and ``/metrics`` read, and an idle worker's claim (once a
second), next to the generation read every lookup makes, timed alternately in one process.

A server started on a fresh store is timed until it serves the ten seeds (listed, one reset
each), next to the same server restarted on that store. Serving starts one server, submits a
new environment, and times ``/v1/verify`` of expert responses by task id for the seed
``evo/zero_one_knapsack`` and the built-in ``opt/knapsack``.
"""

from __future__ import annotations

import argparse
import functools
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psutil
from pydantic import SecretStr

from benchmarks.common import median, server
from environments.evo.admission import admit
from environments.evo.construct import expert_source
from environments.evo.contract import code_digest
from environments.evo.novelty import PoolEntry
from environments.evo.program import run_calls, task_call
from environments.evo.seeds import seed_sources
from environments.evo.settings import EvoSettings
from environments.evo.store import Store
from envserver.registry import discover
from envserver.testing import LiveServer

EVO = "evo/zero_one_knapsack"
BUILT_IN = "opt/knapsack"
BASELINE = "17b0ec1"
"""The last commit whose admission did not search (issue 38): L1-L5 with the published probes."""
SETTINGS = EvoSettings(
    data_dir=Path(),  # admission opens no store
    probe_secret=SecretStr("the admission benchmark's probe secret"),  # no key file made here
)
Admit = Callable[..., Any]


def baseline_admit(revision: str) -> Admit:
    """``admit`` of ``environments/evo/admission.py`` at ``revision``, run on today's modules."""
    root = Path(__file__).resolve().parents[1]
    code = subprocess.run(
        ["git", "show", f"{revision}:environments/evo/admission.py"],
        cwd=root, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    module = types.ModuleType("evo_admission_baseline")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(code, f"{revision}:admission.py", "exec"), module.__dict__)
    return module.admit  # type: ignore[no-any-return]


def cpu_seconds() -> float:
    """CPU time of this process and its descendants (the sandbox's local workers), with the
    runs they have reaped."""
    own = psutil.Process().cpu_times()
    total = float(own.user + own.system)
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def admission_times(revision: str) -> dict[str, list[tuple[float, float]]]:
    """Wall and CPU seconds per seed admission, each against the seeds admitted before it, by
    pipeline: the baseline's, today's, today's without the symbolic search."""
    unsymbolic = SETTINGS.model_copy(update={"symbolic_cpu_s": 0.0})
    pipelines: dict[str, tuple[Admit, EvoSettings]] = {
        f"baseline ({revision})": (baseline_admit(revision), SETTINGS),
        "today": (admit, SETTINGS),
        "today, no symbolic search": (admit, unsymbolic),
    }
    pools: dict[str, list[PoolEntry]] = {name: [] for name in pipelines}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in pipelines}
    for run, settings in pipelines.values():  # warm the sandbox's workers (and CrossHair's files)
        run(expert_source(0), [], settings=settings)
    for stem, source in seed_sources().items():
        for name, (run, settings) in pipelines.items():
            cpu, started = cpu_seconds(), time.perf_counter()
            admission = run(source, pools[name], settings=settings)
            times[name].append((time.perf_counter() - started, cpu_seconds() - cpu))
            assert admission.outcome == "admitted", (name, stem, admission.reports)
            pools[name].append(PoolEntry(stem, admission.normalised, admission.fingerprint))
    return times


def report_admission(times: dict[str, list[tuple[float, float]]]) -> None:
    """The medians and maxima per pipeline, and today's against the baseline's."""
    print("admission of the ten seeds, per submission (median / max):")
    for name, pairs in times.items():
        wall, cpu = [w for w, _ in pairs], [c for _, c in pairs]
        print(f"  {name:28s} wall {median(wall) * 1000:6.0f} / {max(wall) * 1000:6.0f} ms   "
              f"CPU {median(cpu):5.2f} / {max(cpu):5.2f} s")  # fmt: skip
    baseline, today = (times[name] for name in list(times)[:2])
    walls = median([t[0] / b[0] for b, t in zip(baseline, today, strict=True)])
    cpus = median([t[1] / b[1] for b, t in zip(baseline, today, strict=True)])
    print(f"  today / baseline, median of the seeds' ratios: wall {walls:.1f}x, CPU {cpus:.1f}x")


def queue_reads(rounds: int = 2000) -> None:
    """Median microseconds of ``Store.counts`` and of a claim that finds every job held, next to
    ``Store.generation``, on a store with a full queue (64 jobs, all held)."""
    with tempfile.TemporaryDirectory(prefix="envserver-bench-queue-") as folder:
        store = Store(f"sqlite:///{Path(folder) / 'evo.sqlite'}")
        for seed in range(64):
            source = expert_source(seed)
            store.submit(source, code_digest(source), "bench", max_queued=64)
            store.claim("bench", lease_s=3600)
        reads: dict[str, Callable[[], object]] = {
            "generation (every lookup)": store.generation,
            "counts (/readyz, /metrics)": store.counts,
            "claim, all held (idle poll)": functools.partial(store.claim, "idle", lease_s=30),
        }
        times: dict[str, list[float]] = {name: [] for name in reads}
        for _ in range(rounds):
            for name, read in reads.items():
                started = time.perf_counter()
                read()
                times[name].append(time.perf_counter() - started)
        store.close()
    base = median(times["generation (every lookup)"])
    print("the admission queue's reads, SQLite, 64 jobs held (median):")
    for name, spent in times.items():
        print(f"  {name:30s} {median(spent) * 1e6:7.0f} µs   {median(spent) / base:5.2f}x")


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
    parser.add_argument("--baseline", default=BASELINE, help="the revision to compare with")
    parser.add_argument("--admission-only", action="store_true", help="skip the servers")
    parser.add_argument("--queue-only", action="store_true", help="the queue's reads alone")
    args = parser.parse_args()

    queue_reads()
    if args.queue_only:
        return
    report_admission(admission_times(args.baseline))
    if args.admission_only:
        return

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
