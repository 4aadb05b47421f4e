"""What crossing to a worker process costs: the service's ``Executor`` next to the standard
library's ``ProcessPoolExecutor`` driven from asyncio, in the same run.

Both pools have the same number of forkserver workers and run the same trivial function, so
what is measured is the hop alone: the round trip of one call at a time (an agent's step), and
the rate and CPU per call (this process and the workers together, from ``/proc``) with many
calls in flight (a server under load). The standard library's pool is the floor of a general
pool (a queue thread, result thread and pipes, with no per-item deadline and no way to stop one
item); the ``Executor`` also keeps a hard deadline for every item and kills the worker of an
item that overruns. Both run on uvloop, the event loop the server runs on.

    .venv/bin/python -m benchmarks.pool_hop [--calls 4000] [--workers 2] [--in-flight 64]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import uvloop

from benchmarks.common import cpu_seconds, percentile
from envserver.executor import Call, Executor

TIMEOUT_S = 10.0


def echo(value: int) -> int:
    """The work: none."""
    return value


@dataclass(frozen=True)
class Hop:
    p50_us: float
    p99_us: float
    calls_s: float
    cpu_us: float


async def _measure(one: Callable[[int], Awaitable[int]], calls: int, in_flight: int) -> Hop:
    for value in range(200):  # every worker started and warm
        await one(value)
    latencies = []
    for value in range(calls // 4):
        started = time.perf_counter()
        assert await one(value) == value
        latencies.append((time.perf_counter() - started) * 1e6)

    async def client(first: int) -> None:
        for value in range(first, calls, in_flight):
            assert await one(value) == value

    cpu, started = cpu_seconds(os.getpid()), time.perf_counter()
    await asyncio.gather(*(client(first) for first in range(in_flight)))
    seconds, cpu = time.perf_counter() - started, cpu_seconds(os.getpid()) - cpu
    return Hop(
        percentile(latencies, 50), percentile(latencies, 99), calls / seconds, cpu / calls * 1e6
    )


async def executor_hop(workers: int, calls: int, in_flight: int) -> Hop:
    executor = Executor(workers, max_queue_items=in_flight)

    async def one(value: int) -> int:
        (outcome,) = await executor.run([Call(echo, (value,), TIMEOUT_S)])
        assert outcome.status == "ok", outcome.detail
        return int(outcome.value)  # type: ignore[arg-type]

    try:
        return await _measure(one, calls, in_flight)
    finally:
        executor.close()


async def stdlib_hop(workers: int, calls: int, in_flight: int) -> Hop:
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        loop = asyncio.get_running_loop()

        async def one(value: int) -> int:
            return await loop.run_in_executor(pool, echo, value)

        return await _measure(one, calls, in_flight)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--in-flight", type=int, default=64)
    args = parser.parse_args()
    rows = {
        "ProcessPoolExecutor (stdlib)": uvloop.run(
            stdlib_hop(args.workers, args.calls, args.in_flight)
        ),
        "Executor (envserver)": uvloop.run(executor_hop(args.workers, args.calls, args.in_flight)),
    }
    print(
        f"pool hop, a function that does nothing: {args.workers} workers, one call at a time "
        f"for the latency, {args.in_flight} in flight for the rate ({args.calls} calls)"
    )
    print(f"{'pool':<30}{'p50 µs':>8}{'p99 µs':>8}{'calls/s':>10}{'CPU µs/call':>13}")
    for name, hop in rows.items():
        print(
            f"{name:<30}{hop.p50_us:>8.0f}{hop.p99_us:>8.0f}{hop.calls_s:>10,.0f}"
            f"{hop.cpu_us:>13.0f}"
        )
    base, ours = rows["ProcessPoolExecutor (stdlib)"], rows["Executor (envserver)"]
    print(
        f"Executor vs stdlib: latency {base.p50_us / ours.p50_us:.2f}x faster, "
        f"rate {ours.calls_s / base.calls_s:.2f}x, CPU per call {ours.cpu_us / base.cpu_us:.2f}x"
    )


if __name__ == "__main__":
    main()
