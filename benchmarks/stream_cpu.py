"""Server CPU per math step over ``/v1/stream`` against the same step over HTTP, side by side.

One server (``--pool-workers`` pool processes), two kinds of math step (the expert's right
answer, a quick match; a wrong one, a full sympy comparison on the pool), each driven for
``--seconds`` over HTTP by ``wrk`` (C, ``--connections`` keep-alive connections) and over the
stream by this process (``--sockets`` WebSockets, ``--depth`` calls in flight on each), and
``GET /healthz`` over HTTP (the framework's floor). Columns: calls/s, the server's CPU per call
(its process and every pool worker, from ``/proc``), the event loop's alone (the server
process's main thread: what bounds a process's rate once its pool workers have cores of their
own, as on a many-core machine), each as a share of HTTP's, the floor over a step's loop CPU
(a step's rate against ``/healthz``'s where the loop is what is saturated), and the load
generator's own CPU per call (wrk's or this process's), reported apart: it is not the server's.

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

from benchmarks.common import cpu_seconds, loop_cpu_seconds, server
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
    loop_cpu_us: float
    generator_cpu_us: float
    failed: int


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def over_http(live: LiveServer, body: dict[str, str] | None, args: argparse.Namespace) -> Run:
    """A step with ``body`` over HTTP, or ``GET /healthz`` when it is None."""
    assert live.process is not None
    pid = live.process.pid
    if body is None:
        route = Route("healthz", "GET", "/healthz", None, None)
    else:
        route = Route("step", "POST", "/v1/envs/math/step", body, None)
    work = Path(tempfile.mkdtemp(prefix="envserver-stream-cpu-"))
    server_before, loop_before = cpu_seconds(pid), loop_cpu_seconds(pid)
    wrk_before = _children_cpu()
    driven = drive(live.base_url, route, args.seconds, args.connections, work)
    server_cpu = cpu_seconds(pid) - server_before
    loop_cpu = loop_cpu_seconds(pid) - loop_before
    wrk_cpu = _children_cpu() - wrk_before
    return Run(
        driven.calls,
        driven.calls_s,
        server_cpu / driven.calls * 1e6,
        loop_cpu / driven.calls * 1e6,
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
    pid = live.process.pid
    server_before, loop_before = cpu_seconds(pid), loop_cpu_seconds(pid)
    own_before = time.process_time()
    started = time.perf_counter()
    ok, failed = asyncio.run(_stream(url, frame, args.seconds, args.sockets, args.depth))
    elapsed = time.perf_counter() - started
    server_cpu = cpu_seconds(pid) - server_before
    loop_cpu = loop_cpu_seconds(pid) - loop_before
    own_cpu = time.process_time() - own_before
    steps = ok + failed
    return Run(
        steps,
        steps / elapsed,
        server_cpu / steps * 1e6,
        loop_cpu / steps * 1e6,
        own_cpu / steps * 1e6,
        failed,
    )


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
        floor = over_http(live, None, args)
    print(
        f"math step, {args.seconds:g} s per row, {args.pool_workers} pool workers, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; HTTP: wrk "
        f"-c{args.connections}; stream: {args.sockets} sockets x {args.depth} in flight"
    )
    print(
        f"{'call':<14}{'transport':<11}{'calls/s':>9}{'server µs':>11}{'vs HTTP':>9}"
        f"{'loop µs':>9}{'vs HTTP':>9}{'floor/loop':>12}{'generator µs':>14}{'refused':>9}"
    )
    table = [("GET /healthz", floor, floor)] + [
        (name, run, http) for name, http, stream in rows for run in (http, stream)
    ]
    for index, (name, run, http) in enumerate(table):
        label = "HTTP" if run is http else "stream"
        print(
            f"{name if run is http else '':<14}{label:<11}{run.steps_s:>9,.0f}"
            f"{run.server_cpu_us:>11,.0f}{run.server_cpu_us / http.server_cpu_us:>9.2f}"
            f"{run.loop_cpu_us:>9,.0f}{run.loop_cpu_us / http.loop_cpu_us:>9.2f}"
            f"{floor.loop_cpu_us / run.loop_cpu_us if index else 1.0:>12.2f}"
            f"{run.generator_cpu_us:>14,.0f}{run.failed:>9}"
        )
    if any(run.failed for _, run, _ in table):
        raise SystemExit("some steps were refused: the figures above are not of steps")


if __name__ == "__main__":
    main()
