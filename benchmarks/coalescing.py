"""The pool's coalescing under saturation, off and on, side by side: server CPU per step over
HTTP and over ``/v1/stream``, and what cheap items wait when slow ones share the pool.

Two servers run at once, alike (one server process, ``--pool-workers`` workers, the
``benchmarks.plugins.spin`` verifier loaded) but for ``ENVSERVER_COALESCE_ITEM_MS``: 0 (one
item at a time, the pool before coalescing, and the default) and 2. Each round measures both, in
turn, so the machine's load moves them alike; medians over ``--rounds`` are reported.

1. Cheap steps alone: a ``math`` step with a wrong answer (a sympy comparison in a worker)
   driven for ``--seconds`` over HTTP by ``wrk`` (``--connections``) and over the stream by
   this process (``--sockets`` x ``--depth`` in flight). Columns: steps/s, the server's CPU per
   step (its process and pool workers, from ``/proc``), the stream's share of HTTP's.
2. Cheap mixed with slow: the same steps over the stream, timed one by one, while
   ``--slow-in-flight`` verify items of ``bench.spin`` (``--slow-ms`` of CPU each) are kept in
   flight over HTTP. Columns: the cheap steps' p50 and p99, and steps/s.

    .venv/bin/python -m benchmarks.coalescing [--rounds 3] [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

from benchmarks.common import cpu_seconds, percentile, server
from benchmarks.load import Route, drive
from envserver.testing import LiveServer

OPTIONS = {"difficulty": "easy"}
WRONG = "\\boxed{-1}"
SIDES = {"off": {"ENVSERVER_COALESCE_ITEM_MS": "0"}, "on": {"ENVSERVER_COALESCE_ITEM_MS": "2"}}


@dataclass(frozen=True)
class Cheap:
    steps_s: float
    cpu_us: float


@dataclass(frozen=True)
class Mixed:
    p50_ms: float
    p99_ms: float
    steps_s: float
    slow: int


def _state(live: LiveServer) -> str:
    reset = {"seed": 7, "options": OPTIONS}
    reply = httpx.post(f"{live.base_url}/v1/envs/math/reset", json=reset, timeout=60)
    state: str = reply.json()["state"]
    return state


def over_http(live: LiveServer, state: str, args: argparse.Namespace) -> Cheap:
    assert live.process is not None
    route = Route("step", "POST", "/v1/envs/math/step", {"state": state, "action": WRONG}, None)
    work = Path(tempfile.mkdtemp(prefix="envserver-coalescing-"))
    before = cpu_seconds(live.process.pid)
    driven = drive(live.base_url, route, args.seconds, args.connections, work)
    cpu = cpu_seconds(live.process.pid) - before
    if driven.failed:
        raise RuntimeError(f"HTTP: {driven.failed} steps refused")
    return Cheap(driven.calls_s, cpu / driven.calls * 1e6)


async def _steps(
    live: LiveServer, state: str, seconds: float, sockets: int, depth: int
) -> list[float]:
    """Latencies (ms) of the stream's steps, ``sockets`` x ``depth`` in flight."""
    url = live.base_url.replace("http://", "ws://") + "/v1/stream"
    body = {"state": state, "action": WRONG}
    deadline = time.monotonic() + seconds
    latencies: list[float] = []

    async def one(socket_index: int) -> None:
        sent: dict[int, float] = {}
        next_id = socket_index * 10_000_000

        async with connect(url, compression=None, max_size=None) as ws:

            async def send() -> None:
                nonlocal next_id
                next_id += 1
                sent[next_id] = time.perf_counter()
                frame = {"id": next_id, "path": "/v1/envs/math/step", "body": body}
                await ws.send(json.dumps(frame))

            for _ in range(depth):
                await send()
            while sent:
                reply = json.loads(await ws.recv())
                if reply["status"] != 200:
                    raise RuntimeError(f"stream: {reply}")
                latencies.append((time.perf_counter() - sent.pop(reply["id"])) * 1000)
                if time.monotonic() < deadline:
                    await send()

    await asyncio.gather(*(one(index) for index in range(sockets)))
    return latencies


def over_stream(live: LiveServer, state: str, args: argparse.Namespace) -> Cheap:
    assert live.process is not None
    before, started = cpu_seconds(live.process.pid), time.perf_counter()
    steps = len(asyncio.run(_steps(live, state, args.seconds, args.sockets, args.depth)))
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds(live.process.pid) - before
    return Cheap(steps / elapsed, cpu / steps * 1e6)


async def _mixed(live: LiveServer, state: str, args: argparse.Namespace) -> Mixed:
    deadline = time.monotonic() + args.seconds
    slow_done = 0
    body = {"verifier": "bench.spin", "items": [{"response": "", "reference": str(args.slow_ms)}]}

    async def slow(http: httpx.AsyncClient) -> None:
        nonlocal slow_done
        while time.monotonic() < deadline:
            reply = await http.post("/v1/verify", json=body)
            if reply.status_code != 200 or reply.json()["results"][0]["status"] != "ok":
                raise RuntimeError(f"slow item: {reply.text[:300]}")
            slow_done += 1

    async with httpx.AsyncClient(base_url=live.base_url, timeout=120) as http:
        started = time.perf_counter()
        slow_calls = [slow(http) for _ in range(args.slow_in_flight)]
        cheap = asyncio.ensure_future(_steps(live, state, args.seconds, args.sockets, args.depth))
        await asyncio.gather(cheap, *slow_calls)
        latencies = cheap.result()
        elapsed = time.perf_counter() - started
    return Mixed(
        percentile(latencies, 50), percentile(latencies, 99), len(latencies) / elapsed, slow_done
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--pool-workers", type=int, default=2)
    parser.add_argument("--connections", type=int, default=32, help="wrk's connections")
    parser.add_argument("--sockets", type=int, default=2, help="WebSockets of the stream")
    parser.add_argument("--depth", type=int, default=16, help="calls in flight per socket")
    parser.add_argument("--slow-ms", type=int, default=200, help="CPU of one slow item")
    parser.add_argument("--slow-in-flight", type=int, default=1, help="slow items kept going")
    args = parser.parse_args()
    plugin = {"ENVSERVER_PLUGINS": "benchmarks.plugins.spin"}
    servers = {side: server(args.pool_workers, **plugin, **env) for side, env in SIDES.items()}
    http: dict[str, list[Cheap]] = {side: [] for side in SIDES}
    stream: dict[str, list[Cheap]] = {side: [] for side in SIDES}
    mixed: dict[str, list[Mixed]] = {side: [] for side in SIDES}
    try:
        for live in servers.values():
            live.start()
        states = {side: _state(live) for side, live in servers.items()}
        warm = argparse.Namespace(**{**vars(args), "seconds": 1.0})
        for side, live in servers.items():  # every worker warm, every estimate made
            over_http(live, states[side], warm)
            over_stream(live, states[side], warm)
            asyncio.run(_mixed(live, states[side], warm))
        for round_ in range(args.rounds):
            order = list(SIDES) if round_ % 2 == 0 else list(reversed(SIDES))
            for side in order:
                live, state = servers[side], states[side]
                http[side].append(over_http(live, state, args))
                stream[side].append(over_stream(live, state, args))
                mixed[side].append(asyncio.run(_mixed(live, state, args)))
        coalesced = {
            side: httpx.get(f"{live.base_url}/healthz", timeout=30).json()["coalesced"]
            for side, live in servers.items()
        }
    finally:
        for live in servers.values():
            live.stop()

    def med(values: list[float]) -> float:
        return statistics.median(values)

    print(
        f"math step (wrong answer), {args.rounds} rounds x {args.seconds:g} s (medians), "
        f"{args.pool_workers} pool workers, 1 server process, {os.cpu_count()} cores, load "
        f"average {os.getloadavg()[0]:.1f}; HTTP: wrk -c{args.connections}; stream: "
        f"{args.sockets} sockets x {args.depth} in flight"
    )
    print(
        f"\n1. cheap steps alone{'':<8}{'steps/s':>9}{'server CPU µs/step':>20}{'vs HTTP':>9}"
        "  per round (steps/s / µs)"
    )
    for side in SIDES:
        for label, runs in (("HTTP", http[side]), ("stream", stream[side])):
            ratio = med([s.cpu_us / h.cpu_us for s, h in zip(runs, http[side], strict=True)])
            print(
                f"coalescing {side:<4}{label:<13}{med([r.steps_s for r in runs]):>9,.0f}"
                f"{med([r.cpu_us for r in runs]):>20,.0f}{ratio:>9.2f}  "
                + " ".join(f"{r.steps_s:.0f}/{r.cpu_us:.0f}" for r in runs)
            )
    print(f"items sent behind another in one write: {coalesced}")
    print(
        f"\n2. cheap steps over the stream with {args.slow_in_flight} slow item(s) "
        f"({args.slow_ms} ms of CPU) in flight"
    )
    print(f"{'':<16}{'p50 ms':>8}{'p99 ms':>8}{'steps/s':>9}{'slow items':>12}  p99 per round")
    for side in SIDES:
        seen = mixed[side]
        print(
            f"coalescing {side:<5}{med([m.p50_ms for m in seen]):>8.2f}"
            f"{med([m.p99_ms for m in seen]):>8.2f}{med([m.steps_s for m in seen]):>9,.0f}"
            f"{sum(m.slow for m in seen):>12}  " + " ".join(f"{m.p99_ms:.1f}" for m in seen)
        )


if __name__ == "__main__":
    main()
