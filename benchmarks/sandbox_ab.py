"""Sandbox throughput of two checkouts side by side, interleaved, against the namespace floor.

Each side is its own process (``benchmarks/sandbox_side.py``, run with ``PYTHONPATH`` set to
its tree) holding an open sandbox; the floor is a third and the warm floor (the floor's workers
carrying the head's warm modules) a fourth (see ``sandbox_side``'s docstring). Each
round asks every side for the same ``print(1)`` runs from the same number of caller threads, in
a rotating order (A B F, B F A, F A B, ...), so machine load drifts over all sides alike.
Ratios are taken within a round; medians over rounds are reported, with the CPU a run cost in
each kind of process (the callers and the pool, the workers, the runs' own processes) and on
the whole machine (which includes kernel threads, and on a shared machine other people's work).

    .venv/bin/python -m benchmarks.sandbox_ab --base /tmp/base [--head DIR] [--rounds 3]

Without ``--base`` only ``--head`` (default: this checkout) is measured against the floor.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from benchmarks.common import median

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KINDS = ("caller", "workers", "runs", "machine")
FAULTS = ("worker_faults", "run_faults")


class Side:
    """One measured side: a ``sandbox_side`` process of a tree (or the floor)."""

    def __init__(self, name: str, kind: str, tree: Path, workers: int) -> None:
        self.name = name
        env = {**os.environ, "PYTHONPATH": str(tree)}
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "sandbox_side.py"), kind, str(workers)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            cwd=tree,
        )
        hello = self._reply()
        if not hello.get("ready"):
            raise RuntimeError(f"{name} did not start: {hello}")

    def _reply(self) -> dict[str, Any]:
        out: IO[str] | None = self.process.stdout
        assert out is not None
        line = out.readline()
        if not line:
            raise RuntimeError(f"{self.name} exited (code {self.process.wait()})")
        result: dict[str, Any] = json.loads(line)
        return result

    def measure(self, runs: int, threads: int) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{runs} {threads}\n")
        self.process.stdin.flush()
        return self._reply()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--base", type=Path, help="the other checkout (e.g. a git worktree)")
    parser.add_argument("--head", type=Path, default=ROOT, help="default: this checkout")
    parser.add_argument("--runs", type=int, default=1000, help="print(1) runs per side and round")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backend", default="local", choices=("local", "weak"))
    args = parser.parse_args()
    threads = 2 * args.workers
    print(
        f"machine: {os.cpu_count()} cores, Linux {platform.release()}, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f}; "
        f"{args.workers} workers, {threads} caller threads, {args.runs} runs per side and round"
    )
    specs = [("head", args.backend, args.head.resolve())]
    if args.base is not None:
        specs.append(("base", args.backend, args.base.resolve()))
    specs.append(("floor", "floor", ROOT))
    specs.append(("warmfloor", "warmfloor", args.head.resolve()))
    sides = [Side(name, kind, tree, args.workers) for name, kind, tree in specs]
    results: dict[str, list[dict[str, Any]]] = {side.name: [] for side in sides}
    try:
        for side in sides:  # warm-up: first forks, page cache
            side.measure(8 * args.workers, threads)
        for round_ in range(args.rounds):
            shift = round_ % len(sides)
            for side in sides[shift:] + sides[:shift]:
                results[side.name].append(side.measure(args.runs, threads))
    finally:
        for side in sides:
            side.close()

    def rate(result: dict[str, Any]) -> float:
        return float(args.runs / result["seconds"])

    print(f"\n{'side':<10}{'runs/s':>8}{'/floor':>8}" + "".join(f"{k:>9}" for k in KINDS), end="")
    print(f"{'faults':>8}{'':>8}  (CPU ms, page faults per run; per-round runs/s)")
    for name, rounds in results.items():
        ratio = median([rate(r) / rate(f) for r, f in zip(rounds, results["floor"], strict=True)])
        cpu = [median([r["cpu"][k] * 1000 / args.runs for r in rounds]) for k in KINDS]
        per_round = " ".join(f"{rate(r):.0f}" for r in rounds)
        print(
            f"{name:<10}{median([rate(r) for r in rounds]):>8.0f}{ratio:>8.2f}"
            + "".join(f"{c:>9.2f}" for c in cpu)
            + f"{median([r['cpu']['worker_faults'] / args.runs for r in rounds]):>8.0f}"
            + f"{median([r['cpu']['run_faults'] / args.runs for r in rounds]):>8.0f}"
            + f"  {per_round}"
        )
    if "base" in results:
        ratio = median(
            [rate(h) / rate(b) for h, b in zip(results["head"], results["base"], strict=True)]
        )
        print(f"head/base (median of per-round ratios): {ratio:.2f}")


if __name__ == "__main__":
    main()
