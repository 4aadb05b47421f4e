"""Stateless step capacity of the Ray Serve deployment with 1, 2 and 4 replicas, next to the plain
server's, in one run.

The call is the issue's capacity measure: a ``math`` step with a wrong answer (a full sympy
comparison in the pool), on a state token made once and replayed, so every target does the same
work. Load: wrk (``benchmarks/load.py``'s driver, native, so the client is not what limits) with
``--clients`` keep-alive connections for ``--seconds`` after a warm-up; calls/s, p50 and p99,
and replies other than 2xx. All targets share the token secret, so one token serves them all.

Each replica has one pool worker and asks Ray for one CPU; the plain server runs once with one
pool worker (a replica's share) and once with the machine's CPU count. Serve's default ingress
is its Python proxy actor. ``--high-throughput`` adds the same rows in Serve's high-throughput
mode (``envserver/ray_cluster.py``'s ``HIGH_THROUGHPUT``: HAProxy and direct gRPC), which binds
ports on every interface (Ray does not let them be kept on loopback): use it only on a machine
where that is acceptable. On a machine with few cores the load generator, the ingress and the
replicas share the same cores: the figures then show what the ingress costs rather than what
more machines add.

    .venv/bin/python -m benchmarks.ray_replicas [--seconds 8] [--clients 32] [--high-throughput]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import httpx

from benchmarks.load import Driven, Route, drive
from envserver.ray_cluster import RayCluster
from envserver.testing import LiveServer

ENV = "math"
OPTIONS = {"difficulty": "easy"}
SECRET = "ray-replicas-benchmark-secret-0123456789"
WRONG = "\\boxed{-12345}"
REPLICAS = (1, 2, 4)


def _state(url: str) -> str:
    reply = httpx.post(f"{url}/v1/envs/{ENV}/reset", json={"seed": 7, "options": OPTIONS})
    reply.raise_for_status()
    state: str = reply.json()["state"]
    return state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument(
        "--high-throughput",
        action="store_true",
        help="also Serve's high-throughput mode (binds ports on every interface)",
    )
    args = parser.parse_args()

    rows: list[tuple[str, Driven]] = []
    work = Path(tempfile.mkdtemp(prefix="envserver-bench-wrk-"))
    step: Route | None = None

    def measure(name: str, url: str) -> None:
        assert step is not None
        drive(url, step, 2, args.clients, work)  # warm every replica and worker
        rows.append((name, drive(url, step, args.seconds, args.clients, work)))
        print(f"{name}: {rows[-1][1].calls_s:.0f} calls/s", flush=True)

    cpus = len(os.sched_getaffinity(0))
    for workers in sorted({1, cpus}):
        workdir = Path(tempfile.mkdtemp(prefix="envserver-bench-plain-"))
        env = {"ENVSERVER_SECRET": SECRET, "ENVSERVER_POOL_WORKERS": str(workers)}
        with LiveServer(workdir, **env) as plain:
            if step is None:
                body = {"state": _state(plain.base_url), "action": WRONG}
                step = Route("math step", "POST", f"/v1/envs/{ENV}/step", body, None)
            measure(f"plain server, {workers} pool worker{'s' * (workers > 1)}", plain.base_url)

    modes = [("proxy", False), ("HAProxy", True)][: 1 + args.high_throughput]
    for mode, high_throughput in modes:
        workdir = Path(tempfile.mkdtemp(prefix="envserver-bench-ray-"))
        with RayCluster(workdir, cpus=max(REPLICAS), high_throughput=high_throughput) as cluster:
            for replicas in REPLICAS:
                url = cluster.deploy(SECRET, replicas=replicas)
                measure(f"Ray Serve ({mode}), {replicas} replica{'s' * (replicas > 1)}", url)

    baseline = rows[0][1].calls_s
    print(f"\n{cpus} CPUs; wrk -c{args.clients} x {args.seconds:g} s; math step, wrong answer")
    print(
        f"{'target':36} {'calls/s':>8} {'x plain-1':>9} {'p50 ms':>7} {'p99 ms':>7} {'failed':>6}"
    )
    for name, row in rows:
        print(
            f"{name:36} {row.calls_s:8.0f} {row.calls_s / baseline:9.2f} "
            f"{row.p50_ms:7.1f} {row.p99_ms:7.1f} {row.failed:6d}"
        )


if __name__ == "__main__":
    main()
