"""Wall time to prove the optima of the 1,000-instance OPT-BENCH set on 2 cores.

Runs the build of ``envserver opt references build`` into a temporary file and compares it
with the committed cache: the build is reproducible, so they must be identical. Target
(issue 4): every reference proven optimal.

    .venv/bin/python -m benchmarks.opt_references [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from environments.opt.bench import build
from environments.opt.references import BENCH_REFERENCES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="opt-references-")) / "bench_references.json"
    started = time.perf_counter()
    build(out, args.workers)
    wall = time.perf_counter() - started
    fresh = json.loads(out.read_text())
    proven = sum(entry["optimal"] for entry in fresh.values())
    print(f"wall {wall:.1f} s on {args.workers} workers; proven optimal {proven}/{len(fresh)}")
    if BENCH_REFERENCES.exists():
        same = fresh == json.loads(BENCH_REFERENCES.read_text())
        print(f"identical to the committed cache: {same}")


if __name__ == "__main__":
    main()
