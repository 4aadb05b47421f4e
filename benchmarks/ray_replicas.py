"""Stateless step capacity of the Ray Serve deployment with 1, 2 and 4 replicas, next to the plain
server's, in one run.

The call is the issue's capacity measure: a ``math`` step with a wrong answer (a full sympy
comparison in the pool), on state tokens made once and replayed, so every target does the same
work. Load: ``--clients`` concurrent keep-alive connections from one asyncio process for
``--seconds`` after a warm-up; calls/s, p50 and p99, and failed calls. All targets share the
token secret, so one set of tokens serves them all.

Each replica has one pool worker and asks Ray for one CPU; the plain server runs once with one
pool worker (a replica's share) and once with the machine's CPU count. On a machine with few
cores the load generator, Serve's proxy and the replicas share the same cores: the figures then
show what the proxy hop costs rather than what more machines add.

    .venv/bin/python -m benchmarks.ray_replicas [--seconds 8] [--clients 32]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks.common import percentile
from tests.ray_cluster import RayCluster
from tests.server import LiveServer

ENV = "math"
OPTIONS = {"difficulty": "easy"}
SECRET = "ray-replicas-benchmark-secret-0123456789"
WRONG = "\\boxed{-12345}"
REPLICAS = (1, 2, 4)


async def _load(url: str, states: list[str], clients: int, seconds: float) -> dict[str, float]:
    """Steps from ``clients`` concurrent connections for ``seconds`` (after 2 s of warm-up)."""
    latencies: list[float] = []
    failures = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:

        async def client(index: int, until: float, record: bool) -> None:
            nonlocal failures
            n = index
            while time.perf_counter() < until:
                body = {"state": states[n % len(states)], "action": WRONG}
                n += clients
                started = time.perf_counter()
                response = await http.post(f"/v1/envs/{ENV}/step", json=body)
                if not record:
                    continue
                if response.status_code == 200:
                    latencies.append(time.perf_counter() - started)
                else:
                    failures += 1

        for seconds_, record in ((2.0, False), (seconds, True)):
            until = time.perf_counter() + seconds_
            await asyncio.gather(*(client(i, until, record) for i in range(clients)))
    return {
        "calls_s": len(latencies) / seconds,
        "p50_ms": percentile(latencies, 50) * 1000,
        "p99_ms": percentile(latencies, 99) * 1000,
        "failed": failures,
    }


def _states(url: str, count: int) -> list[str]:
    with httpx.Client(base_url=url, timeout=60) as http:
        states = []
        for seed in range(count):
            reply = http.post(f"/v1/envs/{ENV}/reset", json={"seed": seed, "options": OPTIONS})
            reply.raise_for_status()
            states.append(reply.json()["state"])
    return states


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--clients", type=int, default=32)
    args = parser.parse_args()

    rows: list[tuple[str, dict[str, float]]] = []
    states: list[str] = []

    def measure(name: str, url: str) -> None:
        rows.append((name, asyncio.run(_load(url, states, args.clients, args.seconds))))
        print(f"{name}: {rows[-1][1]['calls_s']:.0f} calls/s", flush=True)

    cpus = len(os.sched_getaffinity(0))
    for workers in sorted({1, cpus}):
        workdir = Path(tempfile.mkdtemp(prefix="envserver-bench-plain-"))
        env = {"ENVSERVER_SECRET": SECRET, "ENVSERVER_POOL_WORKERS": str(workers)}
        with LiveServer(workdir, **env) as plain:
            states = states or _states(plain.base_url, 256)
            measure(f"plain server, {workers} pool worker{'s' * (workers > 1)}", plain.base_url)

    workdir = Path(tempfile.mkdtemp(prefix="envserver-bench-ray-"))
    with RayCluster(workdir, cpus=max(REPLICAS)) as cluster:
        for replicas in REPLICAS:
            url = cluster.deploy(SECRET, replicas=replicas)
            measure(f"Ray Serve, {replicas} replica{'s' * (replicas > 1)}", url)

    baseline = rows[0][1]["calls_s"]
    print(f"\n{cpus} CPUs; {args.clients} clients x {args.seconds:.0f} s; math step, wrong answer")
    print(
        f"{'target':32} {'calls/s':>8} {'x plain-1':>9} {'p50 ms':>7} {'p99 ms':>7} {'failed':>6}"
    )
    for name, row in rows:
        print(
            f"{name:32} {row['calls_s']:9.0f} {row['calls_s'] / baseline:9.2f} "
            f"{row['p50_ms']:9.1f} {row['p99_ms']:9.1f} {row['failed']:9.0f}"
        )


if __name__ == "__main__":
    main()
