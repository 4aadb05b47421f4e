"""One side of a sandbox throughput comparison, and the namespace floor.

Run by path, as its own process, with ``PYTHONPATH`` naming the tree whose ``sandbox`` package
it measures (``benchmarks/sandbox_ab.py`` starts one per side, so two checkouts compare in one
sitting)::

    PYTHONPATH=<tree> python benchmarks/sandbox_side.py local|weak|floor|warmfloor WORKERS

It then reads ``RUNS THREADS`` lines on stdin and answers each with one JSON line: the wall
seconds of ``RUNS`` trivial runs made from ``THREADS`` caller threads, and the CPU they cost,
split by process (see ``Usage``). It imports nothing from ``benchmarks`` (the other tree may not
have this file), and ``sandbox`` only for the sandbox sides.

**The namespace floor** (``floor``) is what a full-isolation run cannot do without, with none
of the sandbox's code: ``WORKERS`` bare interpreters (``namespace_floor.py`` under
``python -S``: no ``site``, nothing imported but ``os`` and ``ctypes``), each in its own user
(mapped to a range, as a sandbox worker's), mount, network, IPC and UTS namespaces. Per run a
worker does what a sandbox worker does to the kernel: ``unshare(CLONE_NEWPID)`` and a fork
(the child is PID 1 of a fresh PID namespace), then in the child
``unshare(CLONE_NEWNS | CLONE_NEWIPC)``, a fresh ``/proc`` and a 64 MiB ``/dev/shm`` tmpfs; the
child writes ``1`` to a pipe and exits, and the worker reads the pipe and reaps it. No minimal
root, seccomp, rlimits, uid switch, cgroup, scratch directory, preloaded modules or interpreter
work: the kernel's price of fresh PID, mount and IPC namespaces per run and a fork of a small
Python process, which a sandbox can approach but not pass.

**The warm floor** (``warmfloor``) is the same with the sandbox worker's warm modules
(``sandbox.zygote.WARM_MODULES``, of the tree on ``PYTHONPATH``) imported into each floor
worker first: the price of forking, and exiting, an interpreter that carries what a Python run
needs pre-imported, which no design running Python in a fork of such an interpreter can pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

TRIVIAL = "print(1)"
FLOOR_WORKER = Path(__file__).resolve().with_name("namespace_floor.py")
FLOOR_UID_BASE = 900_000  # a host uid range no sandbox pool uses (theirs start at 200,000)
_TICK = os.sysconf("SC_CLK_TCK")


class FloorWorker:
    """A floor worker process (``namespace_floor.py`` under ``python -S``, ``modules``
    imported first), one run at a time."""

    def __init__(self, modules: tuple[str, ...] = ()) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-S", str(FLOOR_WORKER), *modules],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._requests, self._replies = self.process.stdin.fileno(), self.process.stdout.fileno()
        if os.read(self._replies, 1) != b"u":
            raise OSError("the floor worker could not enter its namespaces")
        if os.getuid() == 0:  # id maps written from outside, as the sandbox's launcher does
            for name in ("uid_map", "gid_map"):
                Path(f"/proc/{self.process.pid}/{name}").write_text(f"0 {FLOOR_UID_BASE} 65536\n")
        os.write(self._requests, b"m")
        if os.read(self._replies, 1) != b"1":
            raise OSError("the floor worker could not mount /proc")

    def run(self) -> bytes:
        """One run: what its process wrote."""
        os.write(self._requests, b"r")
        return os.read(self._replies, 16)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


class FloorPool:
    """``workers`` floor workers, lent one per call (the sandbox pool's discipline)."""

    def __init__(self, workers: int, modules: tuple[str, ...] = ()) -> None:
        self.workers = [FloorWorker(modules) for _ in range(workers)]
        self._free = list(self.workers)
        self._cond = threading.Condition()

    def run(self) -> bytes:
        with self._cond:
            self._cond.wait_for(lambda: bool(self._free))
            worker = self._free.pop()
        try:
            return worker.run()
        finally:
            with self._cond:
                self._free.append(worker)
                self._cond.notify()

    def close(self) -> None:
        for worker in self.workers:
            worker.close()


@dataclass
class Usage:
    """CPU seconds of a measurement: ``caller`` this process (the caller threads and the pool's
    side), ``workers`` the live processes under it, ``runs`` the children they reaped (a run's
    own processes), ``machine`` every CPU of the machine (kernel threads and everyone else's
    work included: the namespaces' teardown is partly deferred to kernel workers)."""

    caller: float = 0.0
    workers: float = 0.0
    runs: float = 0.0
    machine: float = 0.0
    worker_faults: float = 0.0  # page faults (minor) taken by the workers
    run_faults: float = 0.0  # and by the runs' processes

    def minus(self, other: Usage) -> Usage:
        pairs = zip(asdict(self).values(), asdict(other).values(), strict=True)
        return Usage(*(a - b for a, b in pairs))


def _stat(pid: int) -> tuple[float, float, int, int]:
    """(own, reaped children's) CPU seconds and minor page faults of ``pid`` from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    own = int(fields[11]) + int(fields[12])
    children = int(fields[13]) + int(fields[14])
    return own / _TICK, children / _TICK, int(fields[7]), int(fields[8])


def _descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for task in Path(f"/proc/{parent}/task").iterdir():
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found += children
            frontier += children
    return found


def usage() -> Usage:
    """This process's and its descendants' CPU so far, and the machine's."""
    own = os.times()
    result = Usage(caller=own.user + own.system)
    for pid in _descendants(os.getpid()):
        try:
            mine, reaped, faults, reaped_faults = _stat(pid)
        except OSError:
            continue
        result.workers += mine
        result.runs += reaped
        result.worker_faults += faults
        result.run_faults += reaped_faults
    ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    result.machine = (sum(ticks) - ticks[3] - ticks[4]) / _TICK  # all but idle and iowait
    return result


def measure(call: Callable[[], object], runs: int, threads: int) -> dict[str, object]:
    """Wall seconds and CPU (``Usage``) of ``runs`` calls from ``threads`` threads."""
    before = usage()
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(lambda _: call(), range(runs)))
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "cpu": asdict(usage().minus(before))}


def main() -> None:
    kind, workers = sys.argv[1], int(sys.argv[2])
    close: Callable[[], None]
    if kind in ("floor", "warmfloor"):
        if kind == "warmfloor":
            from sandbox.zygote import WARM_MODULES  # this tree's, by PYTHONPATH

            floor = FloorPool(workers, WARM_MODULES)
        else:
            floor = FloorPool(workers)

        def call() -> None:
            assert floor.run() == b"1\n"

        close = floor.close
    else:
        from sandbox.backends import SandboxConfig, open_sandbox  # this tree's, by PYTHONPATH
        from sandbox.model import RunRequest

        sb = open_sandbox(SandboxConfig(backend=kind, workers=workers))  # type: ignore[arg-type]
        request = RunRequest(source=TRIVIAL)

        def call() -> None:
            record = sb.run(request)
            assert record.status == "ok" and record.stdout == "1\n", record

        close = sb.close
    print(json.dumps({"ready": True}), flush=True)
    try:
        for line in sys.stdin:
            runs, threads = (int(v) for v in line.split())
            print(json.dumps(measure(call, runs, threads)), flush=True)
    finally:
        close()


if __name__ == "__main__":
    main()
