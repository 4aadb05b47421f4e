"""What a served process's start costs: ready time, the CPU of the whole process tree, and the
pool's fork server and workers apart (their CPU and resident memory), for ``--workers`` pool
sizes, ``--rounds`` starts each, as ``envserver serve`` starts (the CLI's preflight included).

A fork server that has imported the families forks workers that start in a fraction of a CPU
second; one that imported nothing leaves each worker (and each replacement of a killed one) to
import them itself.

    .venv/bin/python -m benchmarks.server_start [--workers 2,4] [--rounds 2]
"""

from __future__ import annotations

import argparse
import time

import psutil

from benchmarks.common import server


def _seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", default="2,4", help="pool sizes")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    header = f"{'pool':>4}  {'ready s':>7}  {'CPU s':>6}  {'fork server CPU s, MB':>22}"
    print(header + "  workers CPU s")
    for workers in map(int, args.workers.split(",")):
        for _ in range(args.rounds):
            started = time.perf_counter()
            with server(workers, ENVSERVER_WARM_UP="false") as live:
                ready = time.perf_counter() - started
                time.sleep(0.5)  # the last worker's start is done
                assert live.process is not None
                root = psutil.Process(live.process.pid)
                tree = [root, *root.children(recursive=True)]
                forks = [p for p in tree if "forkserver import main" in " ".join(p.cmdline())]
                parent = next(p for p in forks if p.ppid() not in {f.pid for f in forks})
                children = [p for p in forks if p is not parent]
                print(
                    f"{workers:>4}  {ready:>7.1f}  {sum(map(_seconds, tree)):>6.1f}  "
                    f"{_seconds(parent):>14.2f}, {parent.memory_info().rss >> 20:>5}  "
                    + " ".join(f"{_seconds(p):.2f}" for p in children)
                )


if __name__ == "__main__":
    main()
