"""Load on a live server: capacity per route kind with a native load generator, then mixed traffic.

Part 1, capacity: ``wrk`` (C, so the client does not compete with the server for the GIL)
drives each route kind for ``--seconds`` with ``--connections`` keep-alive connections, against
one server process and against ``--processes`` processes sharing the port, in the same run.
Rows: ``GET /healthz`` (the framework's floor: routing, middleware, a small reply), a ``math``
reset, a ``math`` step with a wrong answer (a full sympy comparison on the pool), and a
one-item ``/v1/verify``. Columns: calls/s, p50/p99 latency, the server's CPU per call (its
processes and pool workers, from ``/proc``), and the same call made in this process (calls/s of
one core), the work without the service.

Part 2, mixed traffic: ``--clients`` concurrent clients for ``--mixed-seconds`` against the
multi-process server, each looping over a batched verify, a multi-turn episode (reset, then
wrong answers until the episode ends) and a sandbox run. Reported: replies by status code,
items by status, lost episodes (one that did not reach its end: a failed call or no
``terminated``) and the server's memory (all its processes) over time. The issue's run is
``--clients 64 --mixed-seconds 60``; the defaults are shorter.

    .venv/bin/python -m benchmarks.load [--processes 2] [--seconds 5] [--connections 32]
        [--clients 16] [--mixed-seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil

from benchmarks.common import cpu_seconds, server
from clients.http import KEEPALIVE_EXPIRY_S
from envserver.registry import discover
from envserver.testing import LiveServer

OPTIONS = {"difficulty": "easy"}
WRONG = "\\boxed{-1}"


@dataclass(frozen=True)
class Route:
    """One route kind as wrk drives it, and the same work done in this process."""

    name: str
    method: str
    path: str
    body: dict[str, Any] | None
    local: Callable[[], object] | None


@dataclass(frozen=True)
class Capacity:
    calls_s: float
    p50_ms: float
    p99_ms: float
    cpu_us: float


def _routes(live: LiveServer) -> list[Route]:
    registry = discover()
    env = registry.env("math")
    verifier = registry.verifier("math")
    options = env.spec.options_model.model_validate(OPTIONS)
    first = env.reset(7, options)
    reply = httpx.post(
        f"{live.base_url}/v1/envs/math/reset", json={"seed": 7, "options": OPTIONS}
    ).json()
    reference = "27"
    return [
        Route("GET /healthz (floor)", "GET", "/healthz", None, None),
        Route(
            "math reset",
            "POST",
            "/v1/envs/math/reset",
            {"seed": 7, "options": OPTIONS},
            lambda: env.reset(7, options),
        ),
        Route(
            "math step, wrong answer",
            "POST",
            "/v1/envs/math/step",
            {"state": reply["state"], "action": WRONG},
            lambda: env.step(first.state, WRONG),
        ),
        Route(
            "verify, 1 math item",
            "POST",
            "/v1/verify",
            {"verifier": "math", "items": [{"response": WRONG, "reference": reference}]},
            lambda: verifier(WRONG, reference, verifier.options_model()),
        ),
    ]


def _rss_mb(pid: int) -> float:
    root = psutil.Process(pid)
    total = 0
    for process in [root, *root.children(recursive=True)]:
        try:
            total += process.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total / 2**20


_LATENCY = re.compile(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", re.MULTILINE)
_UNIT_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


@dataclass(frozen=True)
class Driven:
    """What wrk measured: replies per second, latency quantiles, and replies other than 2xx."""

    calls: int
    calls_s: float
    p50_ms: float
    p99_ms: float
    failed: int


def drive(url: str, route: Route, seconds: float, connections: int, work: Path) -> Driven:
    """``route`` of the server at ``url`` driven by wrk for ``seconds``."""
    script = work / "route.lua"
    lines = [f'wrk.method = "{route.method}"']
    if route.body is not None:
        lines += [
            f"wrk.body = {json.dumps(json.dumps(route.body))}",
            'wrk.headers["Content-Type"] = "application/json"',
        ]
    script.write_text("\n".join(lines) + "\n")
    result = subprocess.run(
        [
            "wrk",
            f"-t{min(2, connections)}",
            f"-c{connections}",
            f"-d{seconds:g}s",
            "--latency",
            "-s",
            str(script),
            f"{url}{route.path}",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    out = result.stdout
    calls = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    duration = float(re.search(r"requests in ([\d.]+)s", out).group(1))  # type: ignore[union-attr]
    failed = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    latency = {q: float(v) * _UNIT_MS[u] for q, v, u in _LATENCY.findall(out)}
    return Driven(
        calls,
        calls / duration,
        latency["50"],
        latency["99"],
        int(failed.group(1)) if failed else 0,
    )


def wrk(live: LiveServer, route: Route, seconds: float, connections: int, work: Path) -> Capacity:
    """``route`` driven by wrk for ``seconds``, with the server's CPU per call."""
    assert live.process is not None
    cpu_before = cpu_seconds(live.process.pid)
    driven = drive(live.base_url, route, seconds, connections, work)
    cpu = cpu_seconds(live.process.pid) - cpu_before
    # Any reply other than 200 is counted; a benchmark of refusals is not a benchmark.
    if driven.failed:
        raise RuntimeError(f"{route.name}: the server refused {driven.failed} calls")
    return Capacity(driven.calls_s, driven.p50_ms, driven.p99_ms, cpu / driven.calls * 1e6)


def in_process(route: Route, seconds: float = 1.0) -> float | None:
    """Calls/s of ``route``'s work made directly in this process (one core)."""
    if route.local is None:
        return None
    route.local()
    calls, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        route.local()
        calls += 1
    return calls / (time.perf_counter() - started)


def capacity(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="envserver-load-"))
    table: dict[str, dict[int, Capacity]] = collections.defaultdict(dict)
    local: dict[str, float | None] = {}
    for processes in (1, args.processes):
        with server(args.pool_workers, "--workers", str(processes)) as live:
            _wait_for_processes(live, processes)
            for route in _routes(live):
                wrk(live, route, 1, args.connections, work)  # warm every process and worker
                table[route.name][processes] = wrk(
                    live, route, args.seconds, args.connections, work
                )
                if route.name not in local:
                    local[route.name] = in_process(route)
    shutil.rmtree(work, ignore_errors=True)
    n = args.processes
    print(
        f"capacity: wrk -c{args.connections}, {args.seconds:g} s per row, "
        f"{args.pool_workers} pool workers in all, {os.cpu_count()} cores"
    )
    print(
        f"{'route':<26}{'1 process':>11}{f'{n} processes':>13}{'p50 ms':>8}{'p99 ms':>8}"
        f"{'CPU µs/call':>13}{'in-process/s':>14}"
    )
    for name, rows in table.items():
        one, many = rows[1], rows[n]
        inside = local[name]
        print(
            f"{name:<26}{one.calls_s:>11,.0f}{many.calls_s:>13,.0f}{many.p50_ms:>8.2f}"
            f"{many.p99_ms:>8.2f}{many.cpu_us:>13,.0f}"
            f"{f'{inside:,.0f}' if inside else '-':>14}"
        )
    floor = table["GET /healthz (floor)"][n].calls_s
    for name, rows in table.items():
        print(f"  {name}: {rows[n].calls_s / floor:.0%} of the floor with {n} processes")


def _wait_for_processes(live: LiveServer, processes: int, timeout_s: float = 120) -> None:
    """Until every process answers /healthz (the first ready one answers /readyz alone)."""
    seen: set[int] = set()
    deadline = time.monotonic() + timeout_s
    while len(seen) < processes:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {len(seen)} of {processes} server processes answered")
        with httpx.Client(base_url=live.base_url) as client:
            reply = client.get("/healthz")
            if reply.status_code == 200:
                seen.add(reply.json()["process"])


# --- mixed traffic -------------------------------------------------------------------------------


@dataclass
class Tally:
    replies: collections.Counter[str]
    items: collections.Counter[str]
    episodes: int = 0
    lost: int = 0


async def _client(http: httpx.AsyncClient, tally: Tally, until: float, index: int) -> None:
    seed = index * 1_000_000
    while time.monotonic() < until:
        seed += 1
        kind = seed % 3
        try:
            if kind == 0:
                items = [{"response": WRONG, "reference": str(n)} for n in range(4)]
                reply = await http.post("/v1/verify", json={"verifier": "math", "items": items})
                tally.replies[str(reply.status_code)] += 1
                if reply.status_code == 200:
                    tally.items.update(r["status"] for r in reply.json()["results"])
            elif kind == 1:
                await _episode(http, tally, seed)
            else:
                body = {"source": "print(sum(range(10)))", "limits": {"wall_s": 5}}
                reply = await http.post("/v1/sandbox/run", json=body)
                tally.replies[str(reply.status_code)] += 1
                if reply.status_code == 200:
                    tally.items["run " + reply.json()["status"]] += 1
        except httpx.HTTPError as exc:
            tally.replies[type(exc).__name__] += 1


async def _episode(http: httpx.AsyncClient, tally: Tally, seed: int) -> None:
    tally.episodes += 1
    options = {"difficulty": ("easy", "medium", "hard")[seed % 3], "max_attempts": 3}
    reply = await http.post("/v1/envs/math/reset", json={"seed": seed, "options": options})
    tally.replies[str(reply.status_code)] += 1
    if reply.status_code != 200:
        tally.lost += 1
        return
    state = reply.json()["state"]
    for _ in range(3):
        reply = await http.post("/v1/envs/math/step", json={"state": state, "action": WRONG})
        tally.replies[str(reply.status_code)] += 1
        if reply.status_code != 200 or reply.json()["status"] in ("error", "timeout"):
            tally.lost += 1
            return
        tally.items[reply.json()["status"]] += 1
        state = reply.json()["state"]
        if reply.json()["terminated"]:
            return
    tally.lost += 1  # three wrong answers of three attempts must end it


async def _mixed(live: LiveServer, clients: int, seconds: float) -> tuple[Tally, list[float]]:
    tally = Tally(collections.Counter(), collections.Counter())
    memory: list[float] = []
    assert live.process is not None
    pid = live.process.pid
    until = time.monotonic() + seconds
    limits = httpx.Limits(
        max_connections=clients,
        max_keepalive_connections=clients,
        keepalive_expiry=KEEPALIVE_EXPIRY_S,  # before the server's, as the clients do
    )

    async def sample() -> None:
        while time.monotonic() < until:
            memory.append(_rss_mb(pid))
            await asyncio.sleep(max(1.0, seconds / 20))

    async with httpx.AsyncClient(base_url=live.base_url, timeout=120, limits=limits) as http:
        await asyncio.gather(
            sample(), *(_client(http, tally, until, index) for index in range(clients))
        )
    memory.append(_rss_mb(pid))
    return tally, memory


def mixed(args: argparse.Namespace) -> None:
    with server(args.pool_workers, "--workers", str(args.processes)) as live:
        _wait_for_processes(live, args.processes)
        started = time.monotonic()
        tally, memory = asyncio.run(_mixed(live, args.clients, args.mixed_seconds))
        elapsed = time.monotonic() - started
    calls = sum(tally.replies.values())
    print(
        f"\nmixed traffic: {args.clients} clients x {args.mixed_seconds:g} s, "
        f"{args.processes} server processes: {calls:,} calls ({calls / elapsed:,.0f}/s)"
    )
    print(f"  replies by status: {dict(sorted(tally.replies.items()))}")
    print(f"  items by status:   {dict(sorted(tally.items.items()))}")
    print(f"  episodes: {tally.episodes:,}, lost: {tally.lost}")
    print(f"  server memory, MiB (every process): {' '.join(f'{m:.0f}' for m in memory)}")
    errors = sum(n for code, n in tally.replies.items() if not code.startswith("2"))
    growth = memory[-1] - memory[len(memory) // 4]
    print(
        f"  verdict: {errors} non-2xx or failed calls, {tally.lost} lost episodes, "
        f"memory {growth:+.0f} MiB after the first quarter"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2, help="server processes")
    parser.add_argument("--pool-workers", type=int, default=2, help="pool workers, in all")
    parser.add_argument("--seconds", type=float, default=5, help="per capacity row")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--clients", type=int, default=16, help="mixed-traffic clients")
    parser.add_argument("--mixed-seconds", type=float, default=20)
    parser.add_argument("--skip", choices=("capacity", "mixed"), help="run one part only")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        parser.error("wrk is not installed: `make setup` installs it (apt-get install wrk)")
    if args.skip != "capacity":
        capacity(args)
    if args.skip != "mixed":
        mixed(args)


if __name__ == "__main__":
    main()
