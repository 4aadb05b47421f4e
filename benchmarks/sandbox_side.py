"""One side of a sandbox throughput comparison, and the namespace floor.

Run by path, as its own process, with ``PYTHONPATH`` naming the tree whose ``sandbox`` package
it measures (``benchmarks/sandbox_ab.py`` starts one per side, so two checkouts compare in one
sitting)::

    PYTHONPATH=<tree> python benchmarks/sandbox_side.py local|weak|floor WORKERS

It then reads ``RUNS THREADS`` lines on stdin and answers each with one JSON line: the wall
seconds of ``RUNS`` trivial runs made from ``THREADS`` caller threads, and the CPU they cost,
split by process (see ``Usage``). It imports nothing from ``benchmarks`` (the other tree may not
have this file), and ``sandbox`` only for the sandbox sides.

**The namespace floor** (``floor``) is what a full-isolation run cannot do without, with none
of the sandbox's code: ``WORKERS`` bare Python processes, each in its own user (mapped to a
range, as a sandbox worker's), mount, network, IPC and UTS namespaces. Per run a worker does
what a sandbox worker does to the kernel: ``unshare(CLONE_NEWPID)`` and a fork (the child is
PID 1 of a fresh PID namespace), then in the child ``unshare(CLONE_NEWNS | CLONE_NEWIPC)``, a
fresh ``/proc`` and a 64 MiB ``/dev/shm`` tmpfs; the child writes ``1`` to a pipe and exits, and
the worker reads the pipe and reaps it. No minimal root, no seccomp, rlimits, uid switch,
cgroup, scratch directory or interpreter work: the floor is the kernel's price of a fresh PID,
mount and IPC namespace per run plus a fork of a small Python process, so a sandbox can only
approach it, not pass it.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

TRIVIAL = "print(1)"
CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
FLOOR_UID_BASE = 900_000  # a host uid range no sandbox pool uses (theirs start at 200,000)
_TICK = os.sysconf("SC_CLK_TCK")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    _check(
        _libc.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


class FloorWorker:
    """A bare process in the namespaces a sandbox worker has; runs requests from a pipe."""

    def __init__(self) -> None:
        requests_r, self._requests = os.pipe()
        self._replies, replies_w = os.pipe()
        ready_r, ready_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            keep = sorted((requests_r, replies_w, ready_w))  # not other workers' pipes
            os.closerange(3, keep[0])
            os.closerange(keep[0] + 1, keep[1])
            os.closerange(keep[1] + 1, keep[2])
            os.closerange(keep[2] + 1, 1 << 16)
            try:
                _floor_setup()
                os.write(ready_w, b"1")
                _floor_serve(requests_r, replies_w)
            finally:
                os._exit(0)
        for fd in (requests_r, replies_w, ready_w):
            os.close(fd)
        if os.read(ready_r, 1) != b"1":
            raise OSError("the floor worker could not enter its namespaces")
        os.close(ready_r)
        if os.getuid() == 0:  # id maps written from outside, as the sandbox's launcher does
            for name in ("uid_map", "gid_map"):
                Path(f"/proc/{self.pid}/{name}").write_text(f"0 {FLOOR_UID_BASE} 65536\n")
        os.write(self._requests, b"m")  # maps written
        if os.read(self._replies, 1) != b"1":
            raise OSError("the floor worker could not mount /proc")

    def run(self) -> bytes:
        """One run: what its process wrote."""
        os.write(self._requests, b"r")
        return os.read(self._replies, 16)

    def close(self) -> None:
        os.close(self._requests)
        os.close(self._replies)
        os.waitpid(self.pid, 0)


def _floor_setup() -> None:
    _unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    _mount("none", "/", None, MS_REC | MS_PRIVATE)


def _floor_serve(requests: int, replies: int) -> None:
    os.read(requests, 1)  # the id maps are written: we are root in our user namespace
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
    # A PID namespace of our own with its /proc, so that each run may mount a fresh one (the
    # kernel lets a user namespace mount procfs only where one is already fully visible).
    _unshare(CLONE_NEWPID)
    if os.fork() != 0:
        os.wait()
        os._exit(0)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    pidns = os.open("/proc/self/ns/pid", os.O_RDONLY)
    os.write(replies, b"1")
    while os.read(requests, 1) == b"r":
        out_r, out_w = os.pipe()
        _unshare(CLONE_NEWPID)
        pid = os.fork()
        if pid == 0:
            _unshare(CLONE_NEWNS | CLONE_NEWIPC)
            _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
            os.write(out_w, b"1\n")
            os._exit(0)
        _check(_libc.setns(pidns, CLONE_NEWPID), "setns")
        os.close(out_w)
        out = os.read(out_r, 16)
        os.close(out_r)
        os.waitpid(pid, 0)
        os.write(replies, out)


class FloorPool:
    """``workers`` floor workers, lent one per call (the sandbox pool's discipline)."""

    def __init__(self, workers: int) -> None:
        self.workers = [FloorWorker() for _ in range(workers)]
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
    if kind == "floor":
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
