"""Batched /v1/verify math throughput over HTTP vs calling math-verify in-process.

Measured side by side in one run on the same items, interleaved over rounds (each round uses
fresh items, so no path benefits from another's warm caches). Targets (issue 2): with one pool
worker at least 0.9x the in-process single-core rate; with two workers at least 1.6x.

    .venv/bin/python -m benchmarks.math_verify_throughput [--items 600] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import time

import httpx

from benchmarks.common import math_items, median, server
from verifiers.math import VERIFIER

BATCH = 64
IN_FLIGHT = 4  # requests in flight, so the pool never waits for the next batch


def in_process(items: list[tuple[str, str]]) -> float:
    """Items per second, calling the verifier in this process on one core."""
    started = time.perf_counter()
    for response, reference in items:
        VERIFIER(response, reference)
    return len(items) / (time.perf_counter() - started)


async def _over_http(base_url: str, items: list[tuple[str, str]]) -> float:
    batches = [items[i : i + BATCH] for i in range(0, len(items), BATCH)]
    gate = asyncio.Semaphore(IN_FLIGHT)
    async with httpx.AsyncClient(base_url=base_url, timeout=120) as client:

        async def send(batch: list[tuple[str, str]]) -> None:
            body = {
                "verifier": "math",
                "items": [{"response": r, "reference": ref} for r, ref in batch],
            }
            async with gate:
                response = await client.post("/v1/verify", json=body)
            response.raise_for_status()
            statuses = {r["status"] for r in response.json()["results"]}
            assert statuses <= {"ok", "invalid"}, statuses

        started = time.perf_counter()
        await asyncio.gather(*(send(batch) for batch in batches))
        return len(items) / (time.perf_counter() - started)


def over_http(base_url: str, items: list[tuple[str, str]]) -> float:
    """Items per second through batched ``POST /v1/verify``."""
    return asyncio.run(_over_http(base_url, items))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    in_process(math_items(60, 10**9))  # warm this process as the server warms its workers
    with server(1) as one, server(2) as two:
        over_http(one.base_url, math_items(60, 10**9))
        over_http(two.base_url, math_items(60, 10**9))
        rates: dict[str, list[float]] = {
            "in-process": [],
            "http 1 worker": [],
            "http 2 workers": [],
        }
        for round_index in range(args.rounds):
            items = math_items(args.items, round_index * args.items)
            rates["in-process"].append(in_process(items))
            rates["http 1 worker"].append(over_http(one.base_url, items))
            rates["http 2 workers"].append(over_http(two.base_url, items))

    # Each round measures all three paths back to back on the same items, so the ratio is taken
    # within a round (the machine's load drifts between rounds) and its median reported.
    targets = {"in-process": None, "http 1 worker": 0.9, "http 2 workers": 1.6}
    print(f"math verify throughput, {args.items} items x {args.rounds} rounds (medians)")
    print(f"{'path':<16}{'items/s':>10}{'ratio':>8}{'target':>12}  per-round items/s")
    for name, values in rates.items():
        ratio = median([v / base for v, base in zip(values, rates["in-process"], strict=True)])
        target = targets[name]
        verdict = "" if target is None else f">={target} " + ("ok" if ratio >= target else "MISS")
        rounds = " ".join(f"{v:.0f}" for v in values)
        print(f"{name:<16}{median(values):>10.0f}{ratio:>8.2f}{verdict:>12}  {rounds}")


if __name__ == "__main__":
    main()
