"""What keeping task statistics costs the scoring path (issue 43): statistics off against on,
side by side in the same run.

1. In process, per scored item, on the event loop: what ``Service.verify`` adds for an item it
   counts (an ``Attempt`` of its seed and options, appended to the recorder's list), against
   the same loop doing nothing (what statistics off costs: a test of one attribute); and, off
   the loop, what the recorder's write costs per 1,000 outcomes on SQLite (task ids made
   canonical, summed per task, one upsert transaction).
2. End to end: two live servers, one with ``ENVSERVER_STATS`` off and one with it on (SQLite),
   the same batches of task-id verifications (math, answers without a final answer: the
   cheapest real scoring, so the server's own share of the time is as large as it gets) sent to
   each in alternating rounds by 4 concurrent clients: items per second and the server's CPU
   per item (its process and its pool workers).

    .venv/bin/python -m benchmarks.curriculum_recording [--items 100000] [--rounds 6]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from prometheus_client import CollectorRegistry

from benchmarks.common import cpu_seconds, median, server
from benchmarks.reward_metrics import per_item_ns
from clients.http import EnvServerClient
from environments.math.family import MathTaskOptions
from envserver.stats import Attempt, Recorder, tallies
from envserver.stats_store import StatsStore

BATCH = 256
CLIENTS = 4
WRONG = "I cannot tell."


def in_process(items: int) -> None:
    options = MathTaskOptions(difficulty="easy")
    waiting: list[Attempt] = []

    def without(i: int) -> None:
        pass  # statistics off: the service does nothing for the item

    def counted(i: int) -> None:
        # What Service.verify does for a counted item: the task stays a seed and options,
        # made canonical by the writer, off the loop.
        waiting.append(Attempt("", "run", "math", "1", (i & 1023, options), float(i & 1)))

    base = per_item_ns(without, items)
    waiting.clear()
    cost = per_item_ns(counted, items)
    print(f"on the event loop, per counted item: {cost - base:,.0f} ns added "
          f"(the loop alone: {base:,.0f} ns)")  # fmt: skip
    folder = Path(tempfile.mkdtemp(prefix="stats-bench-"))
    store = StatsStore(f"sqlite:///{folder / 'stats.sqlite'}")
    batch = waiting[:1000]
    started = time.perf_counter()
    for _ in range(20):
        store.add(tallies(batch))
    write_ms = (time.perf_counter() - started) / 20 * 1000
    print(f"off the loop, one write of 1,000 outcomes (task ids made, summed per task, one "
          f"upsert): {write_ms:.1f} ms")  # fmt: skip
    recorder = Recorder(store, 0.5, CollectorRegistry())

    async def flush_cost() -> float:
        for attempt in waiting[:1000]:
            recorder.record(attempt)
        began = time.perf_counter()
        await recorder.flush()
        return (time.perf_counter() - began) * 1000

    print(f"  through the recorder (to a thread and back): {asyncio.run(flush_cost()):.1f} ms")
    store.close()


def end_to_end(rounds: int) -> None:
    off = server(2, ENVSERVER_WARM_UP="false").start()
    on = server(2, ENVSERVER_WARM_UP="false", ENVSERVER_STATS="1").start()
    try:
        with EnvServerClient(off.base_url) as client:
            items = [{"seed": i, "options": {"difficulty": "easy"}} for i in range(BATCH)]
            tasks = [str(r.task_id) for r in client.reset_batch("math", items).results]
        batch = [{"task_id": t, "response": WRONG} for t in tasks]
        results: dict[str, list[tuple[float, float]]] = {"off": [], "on": []}
        for _ in range(rounds):
            for name, live in (("off", off), ("on", on)):
                assert live.process is not None
                results[name].append(_round(live.base_url, batch, live.process.pid))
        rate = {name: median([r[0] for r in runs]) for name, runs in results.items()}
        cpu = {name: median([r[1] for r in runs]) for name, runs in results.items()}
        print(f"end to end, {rounds} rounds of {CLIENTS} clients x 8 batches of {BATCH} items:")
        for name in ("off", "on"):
            print(f"  statistics {name:<3}: {rate[name]:8,.0f} items/s, "
                  f"{cpu[name] * 1e6:6,.0f} µs of server CPU per item")  # fmt: skip
        print(f"  on / off: throughput {rate['on'] / rate['off']:.3f}x, "
              f"CPU per item {cpu['on'] / cpu['off']:.3f}x")  # fmt: skip
    finally:
        off.stop()
        on.stop()


def _round(url: str, batch: list[dict[str, str]], pid: int) -> tuple[float, float]:
    """Items scored per second, and server CPU seconds per item, in one round."""

    def client_run(_: int) -> int:
        with EnvServerClient(url) as client:
            for _ in range(8):
                client.verify(batch, run="bench")
        return 8 * len(batch)

    cpu_before = cpu_seconds(pid)
    started = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        scored = sum(pool.map(client_run, range(CLIENTS)))
    seconds = time.perf_counter() - started
    return scored / seconds, (cpu_seconds(pid) - cpu_before) / scored


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000, help="items of the loop timing")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per server, alternating")
    args = parser.parse_args()
    in_process(args.items)
    end_to_end(args.rounds)


if __name__ == "__main__":
    main()
