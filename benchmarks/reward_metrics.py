"""What the reward metrics cost per scored item: ``Metrics.scored`` (status counter, reward
histogram, top-response sketch) next to the status counter alone (the path before them), and
both next to a cheap real item, a math answer checked in process (the median), in the same run.

The sketch hashes at most 4 KiB of a response (its two ends and its length), so its cost does not
grow with the response; the sizes below show it.

    .venv/bin/python -m benchmarks.reward_metrics [--items 200000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from benchmarks.common import math_items
from envserver.metrics import Metrics, ResponseSketch
from envserver.registry import discover


def per_item_ns(work: Callable[[int], None], items: int) -> float:
    """Nanoseconds per call of ``work(i)``, best of three runs."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter_ns()
        for i in range(items):
            work(i)
        best = min(best, (time.perf_counter_ns() - started) / items)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=200_000)
    args = parser.parse_args()
    metrics = Metrics()
    # A few hundred distinct responses, as a batch of real answers would be; fresh strings each
    # call would add the caller's own allocation, which the service pays anyway.
    responses = [f"The answer is \\boxed{{{i}}}." for i in range(500)]
    targets = ["math", "code", "sbol.circuit", "opt"]

    def counter_only(i: int) -> None:
        metrics.items.labels("verify", targets[i & 3], "ok").inc()

    def scored(i: int) -> None:
        metrics.scored("verify", targets[i & 3], "ok", (i & 1) * 1.0, responses[i % 500])

    before = per_item_ns(counter_only, args.items)
    after = per_item_ns(scored, args.items)
    print(f"per scored item: status counter alone {before:,.0f} ns; with reward histogram and")
    print(f"  top-response sketch {after:,.0f} ns; added {after - before:,.0f} ns")
    for size in (100, 10_000, 1_000_000):
        sketch = ResponseSketch()
        texts = [f"{i:08d}" + "x" * size for i in range(64)]

        def push(i: int, sketch: ResponseSketch = sketch, texts: list[str] = texts) -> None:
            sketch.push(texts[i & 63])

        cost = per_item_ns(push, args.items // 10)
        print(f"  sketch alone, {size:>9,}-character response: {cost:,.0f} ns")

    check = discover().verifiers["math"]
    options = check.options_model()
    pairs = math_items(300, 0)
    for response, reference in pairs[:20]:  # first-call set-up out of the way
        check(response, reference, options)
    times = []
    for response, reference in pairs:
        started = time.perf_counter_ns()
        check(response, reference, options)
        times.append(time.perf_counter_ns() - started)
    verify_ns = statistics.median(times)
    print(f"a math answer checked in process (median): {verify_ns / 1000:,.1f} µs")
    print(f"ratio: the added metrics cost {(after - before) / verify_ns:.4f}x that check")


if __name__ == "__main__":
    main()
