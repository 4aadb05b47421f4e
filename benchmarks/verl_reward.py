"""verl's reward loop scoring a batch through the service: the async ``compute_score`` (one shared
client, concurrent samples batched into ``/v1/verify`` requests) next to the synchronous
per-sample form run as verl runs a sync function (``run_in_executor`` on the loop's default
thread pool, one request per sample), on the same server, same samples, side by side.

verl 0.9's naive reward manager awaits every sample of a batch concurrently; this reproduces that
shape with ``asyncio.gather`` over the samples, without verl itself (the numbers are the
adapter's and the service's, not verl's).

    .venv/bin/python -m benchmarks.verl_reward [--samples 512] [--workers 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import partial

from benchmarks.common import math_items, median, server
from clients.adapters.verl import compute_score, compute_score_sync

Sample = tuple[str, str]


async def _async_path(url: str, samples: list[Sample]) -> None:
    await asyncio.gather(*(compute_score("openai/gsm8k", r, g, url=url) for r, g in samples))


async def _sync_path(url: str, samples: list[Sample]) -> None:
    loop = asyncio.get_running_loop()
    await asyncio.gather(
        *(
            loop.run_in_executor(None, partial(compute_score_sync, "openai/gsm8k", r, g, url=url))
            for r, g in samples
        )
    )


def samples_per_s(
    path: Callable[[str, list[Sample]], Awaitable[None]], url: str, samples: list[Sample]
) -> float:
    """Samples per second for one batch on a fresh event loop (as a reward worker has)."""

    async def once() -> float:
        started = time.perf_counter()
        await path(url, samples)
        return len(samples) / (time.perf_counter() - started)

    return asyncio.run(once())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=512)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    samples = math_items(args.samples, first_seed=0)
    live = server(args.workers).start(timeout_s=900)  # a busy machine starts slowly
    try:
        url = live.base_url
        samples_per_s(_async_path, url, samples[:8])  # warm both paths and the server
        samples_per_s(_sync_path, url, samples[:8])
        sync, batched = [], []
        for _ in range(args.rounds):  # interleaved, so drift hits both alike
            sync.append(samples_per_s(_sync_path, url, samples))
            batched.append(samples_per_s(_async_path, url, samples))
    finally:
        live.stop()
    print(
        f"{args.samples} math samples per batch, {args.workers} pool workers, "
        f"median of {args.rounds} rounds"
    )
    print(f"sync per-sample (thread pool, one request each): {median(sync):8.1f} samples/s")
    print(f"async compute_score (batched, one client):       {median(batched):8.1f} samples/s")
    print(f"ratio async/sync: {median(batched) / median(sync):.2f}x")


if __name__ == "__main__":
    main()
