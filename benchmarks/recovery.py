"""How long a live server takes to serve again after one of its helper processes is killed: the
pool's fork server, a pool worker, a sandbox worker (zygote) and a tool process (a prover run by
a verifier), each killed with SIGKILL while a client keeps scoring.

For each kill it prints the seconds until a request of the kind the helper serves is answered
``ok`` again (``served``) and until ``/healthz`` shows the configured workers all back
(``whole``), with what ``/healthz`` and ``/readyz`` said meanwhile. The baseline, in the same
run, is one request's round trip with nothing killed.

    .venv/bin/python -m benchmarks.recovery [--rounds 3] [--workers 2]
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psutil

from benchmarks.common import server
from envserver.testing import LiveServer
from verifiers.tamarin import EXAMPLE_THEORY

Body = dict[str, Any]
MATH: Body = {"verifier": "math", "items": [{"response": "\\boxed{2}", "reference": "2"}]}
SANDBOX: Body = {"language": "python", "source": "print(2)"}
# A stand-in prover that answers --version, runs until it is stopped on a theory that asks for
# it (the tool to kill) and fails at once on any other (the workers' warm-up).
SLOW_PROVER = """#!/bin/sh
[ "$1" = "--version" ] && { echo "tamarin-prover 1.8.0 (a stand-in)"; exit 0; }
grep -q Stalled "$1" && exec sleep 300
exit 2
"""
TAMARIN: Body = {
    "verifier": "tamarin.proof",
    "items": [
        {
            "response": "simplify\nby sorry",
            "reference": {
                "theory": EXAMPLE_THEORY.replace("QuietStart", "Stalled"),
                "lemma": "nothing_needs_to_start",
            },
        }
    ],
}


def _children(pid: int) -> list[psutil.Process]:
    children: list[psutil.Process] = psutil.Process(pid).children(recursive=True)
    return children


def _find(live: LiveServer, needle: str) -> int:
    assert live.process is not None
    for child in _children(live.process.pid):
        try:
            if needle in " ".join(child.cmdline()):
                return int(child.pid)
        except psutil.Error:
            continue
    raise LookupError(needle)


def _gone(pid: int) -> None:
    """Wait until ``pid`` has ended (a zombie has)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.005)


def _pool_worker(live: LiveServer) -> int:
    fork_server = psutil.Process(_find(live, "forkserver import main"))
    return int(fork_server.children()[0].pid)


def _served(http: httpx.Client, path: str, body: Body) -> bool:
    try:
        reply = http.post(path, json=body)
    except httpx.TransportError:
        return False
    if reply.status_code != 200:
        return False
    answer = reply.json()
    return bool(
        answer["results"][0]["status"] == "ok" if "results" in answer else answer["status"] == "ok"
    )


def _whole(http: httpx.Client, workers: int, sandbox_workers: int) -> tuple[bool, str]:
    health = http.get("/healthz").json()
    ready = http.get("/readyz")
    said = f"healthz {health['status']}{' degraded' if health.get('degraded') else ''}, " \
        f"readyz {ready.status_code}"  # fmt: skip
    whole = health.get("pool_ready", health["pool_workers"]) == workers and (
        health["sandbox_workers"] == sandbox_workers
    )
    return whole and ready.status_code == 200, said


def measure(
    live: LiveServer, kill: Callable[[], int], path: str, body: Body, workers: int
) -> tuple[float, float, list[str]]:
    """Kill what ``kill`` names; seconds until ``body`` is served again, until the server is
    whole again, and what its probes said meanwhile."""
    with httpx.Client(base_url=live.base_url, timeout=60) as http:
        sandbox_workers = http.get("/healthz").json()["sandbox_workers"]
        victim = kill()
        os.kill(victim, signal.SIGKILL)
        killed = time.monotonic()
        _gone(victim)  # before it is gone the server may not know yet: "whole" counts after
        served = whole = None
        said: collections.Counter[str] = collections.Counter()
        while time.monotonic() - killed < 120 and (served is None or whole is None):
            if served is None and _served(http, path, body):
                served = time.monotonic() - killed
            done, state = _whole(http, workers, sandbox_workers)
            said[state] += 1
            if whole is None and done and served is not None:
                whole = time.monotonic() - killed
            time.sleep(0.02)
    return served or float("inf"), whole or float("inf"), sorted(said)


def _tool_kill(live: LiveServer) -> Callable[[], int]:
    """Start a verify whose prover never answers; the kill is of that prover process."""

    def kill() -> int:
        threading.Thread(
            target=lambda: httpx.post(f"{live.base_url}/v1/verify", json=TAMARIN, timeout=120),
            daemon=True,
        ).start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                return _find(live, "sleep 300")
            except LookupError:
                time.sleep(0.02)
        raise LookupError("the prover never started")

    return kill


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="envserver-recovery-"))
    prover = folder / "tamarin-prover"
    prover.write_text(SLOW_PROVER, encoding="utf-8")
    prover.chmod(0o755)
    with server(args.workers, TAMARIN_PROVER=str(prover)) as live:
        with httpx.Client(base_url=live.base_url, timeout=60) as http:
            started = time.perf_counter()
            for _ in range(20):
                assert _served(http, "/v1/verify", MATH)
            baseline = (time.perf_counter() - started) / 20
        print(f"baseline: one math verify {baseline * 1000:.1f} ms")
        kinds: list[tuple[str, Callable[[], int], str, Body]] = [
            ("fork server", lambda: _find(live, "forkserver import main"), "/v1/verify", MATH),
            ("pool worker", lambda: _pool_worker(live), "/v1/verify", MATH),
            ("sandbox worker", lambda: _find(live, "sandbox.zygote"), "/v1/sandbox/run", SANDBOX),
            ("tool process", _tool_kill(live), "/v1/verify", MATH),
        ]
        print(f"{'killed':<16}{'served again s':>15}{'whole again s':>14}{'ratio':>7}  probes")
        for name, kill, path, body in kinds:
            times = [measure(live, kill, path, body, args.workers) for _ in range(args.rounds)]
            served = statistics.median(t[0] for t in times)
            whole = statistics.median(t[1] for t in times)
            said = sorted({s for t in times for s in t[2]})
            row = f"{name:<16}{served:>15.2f}{whole:>14.2f}{served / baseline:>7.0f}"
            print(f"{row}  {'; '.join(said)}")


if __name__ == "__main__":
    main()
