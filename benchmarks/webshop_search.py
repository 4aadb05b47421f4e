"""WebShop: index build time and memory, search latency at 10 k and 1 M products, and env step
throughput over HTTP.

Each catalogue size is built from scratch in a child process (its peak RSS is the build's
memory), into a fresh cache folder unless ``--cache`` names one. Search latency is measured in
this process on the memory-mapped index with instruction-like queries (products' instructions,
price clauses dropped), top 50 as the environment asks. Step throughput runs expert episodes
against a real server on the 10 k catalogue: one client sequentially, then several at once.
Target (issue 7): search p50 under 10 ms at 1 M products.

    .venv/bin/python -m benchmarks.webshop_search [--sizes 10000,1000000] [--queries 300]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from benchmarks.common import median, percentile, server


def _build(size: int, cache: str) -> dict[str, float]:
    from environments.webshop.bm25 import SearchIndex, index_stats
    from environments.webshop.catalogue import SyntheticCatalogue

    started = time.perf_counter()
    index = SearchIndex.open(SyntheticCatalogue(size), Path(cache))
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "seconds": seconds,
        "peak_mb": peak_mb,
        "disk_mb": index_stats(index)["bytes_on_disk"] / 1e6,
    }


def _queries(size: int, count: int) -> list[list[str]]:
    from environments.webshop.catalogue import SyntheticCatalogue

    catalogue = SyntheticCatalogue(size)
    rng = random.Random(7)
    queries: list[list[str]] = []
    while len(queries) < count:
        product = catalogue.product_at(rng.randrange(size))
        text = product.instruction or product.title
        queries.append(text.lower().split(" "))
    return queries


def search_row(size: int, count: int, cache: str) -> dict[str, Any]:
    """Build (in a child process) and query one catalogue size."""
    from environments.webshop.bm25 import SearchIndex
    from environments.webshop.catalogue import SyntheticCatalogue

    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=spawn) as pool:
        built = pool.submit(_build, size, cache).result()
    started = time.perf_counter()
    index = SearchIndex.open(SyntheticCatalogue(size), Path(cache))
    load_ms = (time.perf_counter() - started) * 1000
    queries = _queries(size, count)
    for query in queries[:20]:  # warm the page cache of the memory map
        index.search(query)
    latencies = []
    for query in queries:
        started = time.perf_counter()
        index.search(query)
        latencies.append((time.perf_counter() - started) * 1000)
    return {
        "size": size,
        **built,
        "load_ms": load_ms,
        "p50": median(latencies),
        "p99": percentile(latencies, 99),
    }


def step_throughput(episodes: int, clients: int) -> dict[str, float]:
    """Expert episodes over HTTP on the 10 k catalogue: steps per second and step p50/p99."""
    from environments.webshop.family import WebShopEnv, WebShopOptions

    env = WebShopEnv()
    env.shop.index  # noqa: B018 - build or load it before the server's workers need it
    latencies: list[float] = []

    def episode(seed: int, http: httpx.Client) -> int:
        options = {"split": "test", "goal_index": seed % 500}
        reply = http.post("/v1/envs/webshop/reset", json={"seed": seed, "options": options})
        token = reply.json()["state"]
        state = env.reset(seed, WebShopOptions(split="test", goal_index=seed % 500)).state
        steps = 0
        while True:
            action = env.expert_action(state)
            started = time.perf_counter()
            body = http.post(
                "/v1/envs/webshop/step", json={"state": token, "action": action}
            ).json()
            latencies.append((time.perf_counter() - started) * 1000)
            steps += 1
            state, token = env.step(state, action).state, body["state"]
            if body["terminated"] or body["truncated"]:
                return steps

    def worker(first: int) -> int:
        with httpx.Client(base_url=live.base_url, timeout=120) as http:
            return sum(episode(s, http) for s in range(first, episodes, clients))

    with server(2) as live:
        with httpx.Client(base_url=live.base_url, timeout=120) as http:
            episode(10_000, http)  # warm the workers (catalogue, index, tagger)
        latencies.clear()
        started = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            steps = sum(pool.map(worker, range(clients)))
        seconds = time.perf_counter() - started
    return {
        "clients": clients,
        "steps": steps,
        "steps_per_s": steps / seconds,
        "p50": median(latencies),
        "p99": percentile(latencies, 99),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--cache", default="", help="index folder (default: a fresh temp one)")
    args = parser.parse_args()
    cache = args.cache or tempfile.mkdtemp(prefix="webshop-bench-")
    print(f"search (top 50, {args.queries} instruction queries; index in {cache})")
    print(f"{'products':>10} {'build s':>8} {'build peak MB':>14} {'disk MB':>8} "
          f"{'load ms':>8} {'p50 ms':>7} {'p99 ms':>7}")  # fmt: skip
    for size in (int(s) for s in args.sizes.split(",")):
        row = search_row(size, args.queries, cache)
        print(f"{row['size']:>10,} {row['seconds']:>8.1f} {row['peak_mb']:>14.0f} "
              f"{row['disk_mb']:>8.0f} {row['load_ms']:>8.1f} {row['p50']:>7.2f} "
              f"{row['p99']:>7.2f}", flush=True)  # fmt: skip
    print("\nenv steps over HTTP (expert episodes, 10,000 products, 2 pool workers)")
    print(f"{'clients':>8} {'steps':>6} {'steps/s':>8} {'p50 ms':>7} {'p99 ms':>7}")
    for clients in (1, 4):
        row = step_throughput(args.episodes, clients)
        print(f"{row['clients']:>8} {row['steps']:>6.0f} {row['steps_per_s']:>8.1f} "
              f"{row['p50']:>7.2f} {row['p99']:>7.2f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
