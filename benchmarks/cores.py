"""Calls/s against cores: the server confined to 1, 2, 4, ... cores, with its default sizing and
with hand-set sizes, side by side in one run.

For each core count ``n`` of ``--cores`` that the machine has, the server runs on cores
``0..n-1`` (this process sets its own CPU affinity before starting it; the server, its pool, its
fork server and its sandbox workers inherit it, and the default sizing reads it), and ``wrk``
drives ``GET /healthz`` (the framework's floor), a ``math`` reset, a ``math`` step with a wrong
answer (a sympy comparison on the pool) and a one-item ``/v1/verify`` for ``--seconds`` each,
from the cores left over (from the same cores when none is left, which the output says).

Rows: the default sizing (what ``envserver serve`` picks on ``n`` cores, read back from
``/readyz``) and hand-set ``processes x pool workers`` (``--grid``; by default n/2 to n
processes and n to 2n workers). Then, per core count, each route's best hand-set rate, the
defaults' share of it, and the defaults' step and verify over their own ``/healthz`` (the floor
ratio). Every configuration of a core count is alive at once and measured ``--rounds`` times,
route by route, every server in turn in a rotating order, so the machine's load moves them
alike; medians are reported.

    .venv/bin/python -m benchmarks.cores [--cores 1,2,4,8,16] [--seconds 5] [--rounds 3]
        [--grid 1x2,2x2,2x4]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from benchmarks.common import cpu_seconds
from benchmarks.load import Route, drive
from envserver.testing import LiveServer

OPTIONS = {"difficulty": "easy"}
WRONG = "\\boxed{-1}"
ROUTES = ("healthz", "reset", "step", "verify")


@dataclass(frozen=True)
class Sizing:
    """A configuration: None for the server's defaults."""

    processes: int | None
    pool_workers: int | None

    @property
    def name(self) -> str:
        if self.processes is None:
            return "defaults"
        return f"{self.processes} x {self.pool_workers}"


@dataclass(frozen=True)
class Rate:
    calls_s: float
    cpu_us: float


def _routes(base_url: str) -> dict[str, Route]:
    """The routes as wrk drives them against the server at ``base_url`` (a step's state token
    is that server's own)."""
    reset = {"seed": 7, "options": OPTIONS}
    state = httpx.post(f"{base_url}/v1/envs/math/reset", json=reset, timeout=60).json()["state"]
    step = {"state": state, "action": WRONG}
    verify = {"verifier": "math", "items": [{"response": WRONG, "reference": "27"}]}
    return {
        "healthz": Route("healthz", "GET", "/healthz", None, None),
        "reset": Route("reset", "POST", "/v1/envs/math/reset", reset, None),
        "step": Route("step", "POST", "/v1/envs/math/step", step, None),
        "verify": Route("verify", "POST", "/v1/verify", verify, None),
    }


def _grid(n: int) -> list[Sizing]:
    """Hand-set sizes around ``n`` cores: from n/2 to n processes, n to 2n pool workers."""
    processes = sorted({max(1, n // 2), n})
    return [Sizing(p, w) for p in processes for w in sorted({n, 2 * n}) if w >= p]


def _start(sizing: Sizing, cores: set[int]) -> LiveServer:
    """A server on ``cores`` with ``sizing`` (the defaults: no sizing variable set)."""
    args: tuple[str, ...] = ()
    env = {"ENVSERVER_SANDBOX_BACKEND": "none"}  # no route here runs a program
    if sizing.processes is not None:
        args = ("--workers", str(sizing.processes))
        env["ENVSERVER_POOL_WORKERS"] = str(sizing.pool_workers)
    live = LiveServer(Path(tempfile.mkdtemp(prefix="envserver-cores-")), *args, **env)
    for name in ("ENVSERVER_SERVER_PROCESSES", "ENVSERVER_POOL_WORKERS"):
        if name not in env:
            live.env.pop(name, None)  # the defaults: nothing inherited from this shell
    os.sched_setaffinity(0, cores)  # inherited by the server and everything it starts
    try:
        live.start(timeout_s=600)
    finally:
        os.sched_setaffinity(0, ALL_CORES)
    _all_processes_up(live)
    return live


def _all_processes_up(live: LiveServer, timeout_s: float = 300) -> None:
    """Until as many distinct processes as /readyz counts answered /healthz."""
    expected = int(httpx.get(f"{live.base_url}/readyz", timeout=30).json()["server_processes"])
    seen: set[int] = set()
    deadline = time.monotonic() + timeout_s
    # A connection each time: a kept-alive one would always reach the same process.
    with httpx.Client(
        base_url=live.base_url, timeout=30, headers={"Connection": "close"}
    ) as client:
        while len(seen) < expected:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {len(seen)} of {expected} server processes answered")
            reply = client.get("/healthz")
            if reply.status_code == 200:
                seen.add(reply.json()["process"])
            time.sleep(0.01)


def _measure(live: LiveServer, route: Route, args: argparse.Namespace, load: set[int]) -> Rate:
    assert live.process is not None
    work = Path(tempfile.mkdtemp(prefix="envserver-cores-wrk-"))
    os.sched_setaffinity(0, load)  # wrk inherits it
    try:
        drive(live.base_url, route, 1, args.connections, work)  # every process and worker warm
        before = cpu_seconds(live.process.pid)
        driven = drive(live.base_url, route, args.seconds, args.connections, work)
        cpu = cpu_seconds(live.process.pid) - before
    finally:
        os.sched_setaffinity(0, ALL_CORES)
        shutil.rmtree(work, ignore_errors=True)
    if driven.failed:
        raise RuntimeError(f"{route.name}: the server refused {driven.failed} calls")
    return Rate(driven.calls_s, cpu / driven.calls * 1e6 if driven.calls else math.nan)


def _one_count(n: int, args: argparse.Namespace) -> list[str]:
    """Measure every sizing on ``n`` cores; print the table; the summary lines."""
    available = sorted(ALL_CORES)
    cores = set(available[:n])
    load = set(available[n:]) or cores
    grid = (
        [Sizing(*map(int, pair.split("x"))) for pair in args.grid.split(",")]
        if args.grid
        else _grid(n)
    )
    sizings = [Sizing(None, None), *grid]
    servers: dict[str, LiveServer] = {}
    shown: dict[str, str] = {}
    rates: dict[str, dict[str, Rate]] = {}
    try:
        for sizing in sizings:
            servers[sizing.name] = live = _start(sizing, cores)
            ready = httpx.get(f"{live.base_url}/readyz", timeout=30).json()
            shown[sizing.name] = f"{ready['server_processes']} x {ready['pool_workers_total']}"
        routes = {name: _routes(live.base_url) for name, live in servers.items()}
        runs: dict[str, dict[str, list[Rate]]] = {
            name: {key: [] for key in ROUTES} for name in servers
        }
        for round_ in range(args.rounds):
            for key in ROUTES:  # route by route, every server in turn: the load moves them alike
                names = list(servers)
                names = names[round_ % len(names) :] + names[: round_ % len(names)]
                for name in names:
                    runs[name][key].append(_measure(servers[name], routes[name][key], args, load))
        rates = {
            name: {
                key: Rate(
                    statistics.median(r.calls_s for r in found),
                    statistics.median(r.cpu_us for r in found),
                )
                for key, found in row.items()
            }
            for name, row in runs.items()
        }
    finally:
        for live in servers.values():
            live.stop()
    where = "the other cores" if load != cores else "the same cores (none left over)"
    print(f"\n{n} core(s): the server on {sorted(cores)}, wrk on {where}")
    print(
        f"{'sizing':<12}{'procs x pool':>13}"
        + "".join(f"{key + '/s':>11}" for key in ROUTES)
        + f"{'step CPU µs':>12}{'step/floor':>11}"
    )
    for name, row in rates.items():
        print(
            f"{name:<12}{shown[name]:>13}"
            + "".join(f"{row[key].calls_s:>11,.0f}" for key in ROUTES)
            + f"{row['step'].cpu_us:>12,.0f}"
            + f"{row['step'].calls_s / row['healthz'].calls_s:>11.2f}"
        )
    defaults = rates["defaults"]
    lines = [
        f"{n} core(s), defaults {shown['defaults']}: "
        + ", ".join(f"{key} {defaults[key].calls_s:,.0f}/s" for key in ROUTES)
        + f"; step/floor {defaults['step'].calls_s / defaults['healthz'].calls_s:.2f}, "
        f"verify/floor {defaults['verify'].calls_s / defaults['healthz'].calls_s:.2f}"
    ]
    hand = {name: row for name, row in rates.items() if name != "defaults"}
    if hand:
        parts = []
        for key in ROUTES[1:]:
            best = max(hand, key=lambda name: hand[name][key].calls_s)
            ratio = defaults[key].calls_s / hand[best][key].calls_s
            parts.append(f"{key} {ratio:.2f} (best {best})")
        lines.append(f"{n} core(s): defaults / best hand-set: " + ", ".join(parts))
    return lines


ALL_CORES = os.sched_getaffinity(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cores", default="1,2,4,8,16", help="core counts the machine has")
    parser.add_argument(
        "--grid", default="", help="processes x pool workers, e.g. 1x2,2x4 (default: around n)"
    )
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="medians over this many")
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        parser.error("wrk is not installed: `make setup` installs it (apt-get install wrk)")
    counts = [n for n in map(int, args.cores.split(",")) if n <= len(ALL_CORES)]
    print(
        f"machine: {len(ALL_CORES)} cores usable, load average {os.getloadavg()[0]:.1f}; "
        f"wrk -c{args.connections}, {args.seconds:g} s per route and sizing, medians of "
        f"{args.rounds} rounds"
    )
    summary = [line for n in counts for line in _one_count(n, args)]
    print("\nsummary")
    for line in summary:
        print(f"  {line}")


if __name__ == "__main__":
    main()
