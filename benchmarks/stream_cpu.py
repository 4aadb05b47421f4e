"""Server CPU per math step over ``/v1/stream`` against the same step over HTTP, side by side.

One server (``--pool-workers`` pool processes), two kinds of math step (the expert's right
answer, a quick match; a wrong one, a full sympy comparison on the pool), each driven for
``--seconds`` over HTTP by ``wrk`` (C, ``--connections`` keep-alive connections) and over the
stream by this process (``--sockets`` WebSockets, ``--depth`` calls in flight on each). Columns:
steps/s, the server's CPU per step (its process and every pool worker, from ``/proc``), the
stream's share of HTTP's, and the load generator's own CPU per step (wrk's or this process's),
reported apart: it is not the server's.

    .venv/bin/python -m benchmarks.stream_cpu [--seconds 5] [--pool-workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

from benchmarks.common import cpu_seconds, server
from benchmarks.load import Route, drive
from envserver.registry import discover
from envserver.testing import LiveServer

OPTIONS = {"difficulty": "easy"}
SEED = 7


@dataclass(frozen=True)
class Run:
    steps: int
    steps_s: float
    server_cpu_us: float
    generator_cpu_us: float
    failed: int


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def over_http(live: LiveServer, body: dict[str, str], args: argparse.Namespace) -> Run:
    assert live.process is not None
    route = Route("step", "POST", "/v1/envs/math/step", body, None)
    work = Path(tempfile.mkdtemp(prefix="envserver-stream-cpu-"))
    server_before, wrk_before = cpu_seconds(live.process.pid), _children_cpu()
    driven = drive(live.base_url, route, args.seconds, args.connections, work)
    server_cpu = cpu_seconds(live.process.pid) - server_before
    wrk_cpu = _children_cpu() - wrk_before
    return Run(
        driven.calls,
        driven.calls_s,
        server_cpu / driven.calls * 1e6,
        wrk_cpu / driven.calls * 1e6,
        driven.failed,
    )


async def _stream(url: str, frame: str, seconds: float, sockets: int, depth: int) -> list[int]:
    """Steps answered 200 and refused, over ``sockets`` sockets with ``depth`` in flight each."""
    deadline = time.monotonic() + seconds
    counts = [0, 0]

    async def one() -> None:
        async with connect(url, compression=None, max_size=None) as ws:
            for _ in range(depth):
                await ws.send(frame)
            in_flight = depth
            while in_flight:
                reply = json.loads(await ws.recv())
                counts[reply["status"] != 200] += 1
                in_flight -= 1
                if time.monotonic() < deadline:
                    await ws.send(frame)
                    in_flight += 1

    await asyncio.gather(*(one() for _ in range(sockets)))
    return counts


def over_stream(live: LiveServer, body: dict[str, str], args: argparse.Namespace) -> Run:
    assert live.process is not None
    url = live.base_url.replace("http://", "ws://") + "/v1/stream"
    frame = json.dumps({"id": 1, "path": "/v1/envs/math/step", "body": body})
    server_before, own_before = cpu_seconds(live.process.pid), time.process_time()
    started = time.perf_counter()
    ok, failed = asyncio.run(_stream(url, frame, args.seconds, args.sockets, args.depth))
    elapsed = time.perf_counter() - started
    server_cpu = cpu_seconds(live.process.pid) - server_before
    own_cpu = time.process_time() - own_before
    steps = ok + failed
    return Run(steps, steps / elapsed, server_cpu / steps * 1e6, own_cpu / steps * 1e6, failed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--pool-workers", type=int, default=2)
    parser.add_argument("--connections", type=int, default=32, help="wrk's connections")
    parser.add_argument("--sockets", type=int, default=2, help="WebSockets of the stream")
    parser.add_argument("--depth", type=int, default=16, help="calls in flight per socket")
    args = parser.parse_args()
    env = discover().env("math")
    first = env.reset(SEED, env.spec.options_model.model_validate(OPTIONS))
    actions = {"right answer": env.expert_action(first.state), "wrong answer": "\\boxed{-1}"}
    rows: list[tuple[str, Run, Run]] = []
    with server(args.pool_workers) as live:
        state = httpx.post(
            f"{live.base_url}/v1/envs/math/reset", json={"seed": SEED, "options": OPTIONS}
        ).json()["state"]
        for name, action in actions.items():
            body = {"state": state, "action": action}
            for drive_once in (over_http, over_stream):  # warm the process and its workers
                drive_once(live, body, argparse.Namespace(**{**vars(args), "seconds": 1.0}))
            rows.append((name, over_http(live, body, args), over_stream(live, body, args)))
    print(
        f"math step, {args.seconds:g} s per row, {args.pool_workers} pool workers, "
        f"{os.cpu_count()} cores; HTTP: wrk -c{args.connections}; stream: {args.sockets} "
        f"sockets x {args.depth} in flight"
    )
    print(
        f"{'step':<14}{'transport':<11}{'steps/s':>9}{'server CPU µs/step':>20}"
        f"{'vs HTTP':>9}{'generator CPU µs/step':>23}{'refused':>9}"
    )
    for name, http, stream in rows:
        for label, run in (("HTTP", http), ("stream", stream)):
            ratio = run.server_cpu_us / http.server_cpu_us
            print(
                f"{name:<14}{label:<11}{run.steps_s:>9,.0f}{run.server_cpu_us:>20,.0f}"
                f"{ratio:>9.2f}{run.generator_cpu_us:>23,.0f}{run.failed:>9}"
            )
    if any(run.failed for _, *runs in rows for run in runs):
        raise SystemExit("some steps were refused: the figures above are not of steps")


if __name__ == "__main__":
    main()
