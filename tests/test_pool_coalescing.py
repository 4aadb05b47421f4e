"""Coalescing under saturation in the real pool (``envserver.executor``): a worker that comes
free with no other worker idle takes several queued items of small measured cost, and nothing
else changes: order, per-item deadlines and failures stay each item's own."""

from __future__ import annotations

import asyncio
import os
import time

from envserver.executor import Call, Executor, Outcome

CHEAP_S = 0.05  # the pools here count an item under 50 ms as cheap


def work(tag: str) -> tuple[str, int]:
    """An item: ``sleep:S`` sleeps S seconds, ``die`` ends its worker, anything else returns
    at once; the value says which worker ran it."""
    if tag.startswith("sleep:"):
        time.sleep(float(tag.removeprefix("sleep:")))
    elif tag == "die":
        os._exit(3)
    return tag, os.getpid()


Calls = list[Call[tuple[str, int]]]
Outcomes = list[Outcome[tuple[str, int]]]


def calls(*tags: str, key: str = "cheap", timeout_s: float = 10) -> Calls:
    return [Call(work, (tag,), timeout_s, cost_key=key) for tag in tags]


async def _run(executor: Executor, *batches: Calls) -> Outcomes:
    results = await asyncio.gather(*(executor.run(batch) for batch in batches))
    return [outcome for outcomes in results for outcome in outcomes]


def run(executor: Executor, *batches: Calls, seed: Calls | None = None) -> Outcomes:
    """``batches`` as concurrent requests, after ``seed`` (default: one cheap item) has given
    its key an estimate and started the workers."""

    async def go() -> Outcomes:
        await _run(executor, seed or calls("seed"))
        return await _run(executor, *batches)

    return asyncio.run(go())


def test_a_saturated_worker_takes_several_cheap_items_in_order() -> None:
    executor = Executor(1, max_queue_items=64, coalesce_item_s=CHEAP_S)
    try:
        tags = [f"item{i}" for i in range(20)]
        outcomes = run(executor, calls(*tags))
    finally:
        executor.close()
    assert [o.status for o in outcomes] == ["ok"] * 20
    assert [o.value[0] for o in outcomes if o.value is not None] == tags
    assert executor.coalesced >= 10  # one worker, 20 queued: most went several at a time


def test_idle_workers_take_one_item_each() -> None:
    executor = Executor(2, max_queue_items=64, coalesce_item_s=CHEAP_S)
    try:

        async def go() -> Outcomes:
            await _run(executor, calls("seed"), calls("seed"))
            while executor.ready_workers() < 2:  # noqa: ASYNC110 - the pool's own count
                await asyncio.sleep(0.05)
            return await _run(executor, calls("a", "b"))

        outcomes = asyncio.run(go())
    finally:
        executor.close()
    assert [o.status for o in outcomes] == ["ok", "ok"]
    assert executor.coalesced == 0
    assert len({o.value[1] for o in outcomes if o.value is not None}) == 2  # one each


def test_off_and_unknown_and_slow_kinds_go_one_at_a_time() -> None:
    for item_s, key, tags in (
        (0.0, "cheap", ["x"] * 6),  # coalescing off
        (CHEAP_S, "", ["x"] * 6),  # no cost key: never estimated
        (CHEAP_S, "slow", ["sleep:0.1"] * 3),  # estimated above the limit
    ):
        executor = Executor(1, max_queue_items=64, coalesce_item_s=item_s)
        try:
            outcomes = run(executor, calls(*tags, key=key), seed=calls(tags[0], key=key))
        finally:
            executor.close()
        assert [o.status for o in outcomes] == ["ok"] * len(tags)
        assert executor.coalesced == 0, (item_s, key)


def test_a_cheap_item_is_never_taken_behind_a_slow_one() -> None:
    """A slow kind among cheap ones: the worker takes cheap ones from around it, the slow one
    goes alone."""
    executor = Executor(1, max_queue_items=64, coalesce_item_s=CHEAP_S)
    try:

        async def go() -> Outcomes:
            await _run(executor, calls("seed"), calls("sleep:0.1", key="slow"))
            head = calls("first")
            cheap = [f"c{i}" for i in range(1, 7)]
            mixed = calls(*cheap[:2]) + calls("sleep:0.1", key="slow") + calls(*cheap[2:])
            return await _run(executor, head, mixed)

        outcomes = asyncio.run(go())
    finally:
        executor.close()
    assert [o.status for o in outcomes] == ["ok"] * 8
    # first alone (the worker was idle); then c1 to c4 together (a fair share of the queue: at
    # most COALESCE_MAX_ITEMS), passing the slow one; it goes alone, then c5 and c6, one each.
    assert executor.coalesced == 3
    done = {o.value[0]: o.seconds for o in outcomes if o.value is not None}
    assert max(done[f"c{i}"] for i in range(1, 5)) < done["sleep:0.1"] < done["c5"]


def test_each_item_of_a_batch_keeps_its_own_deadline() -> None:
    """An item estimated cheap that hangs in a batch times out alone; the items sent behind
    it never started, and run on the replacement worker."""
    executor = Executor(1, max_queue_items=64, coalesce_item_s=CHEAP_S)
    try:
        hung = calls("first") + calls("a", "sleep:30", "b", "c", "d", "e", timeout_s=1.0)
        outcomes = run(executor, hung)
    finally:
        executor.close()
    assert [o.status for o in outcomes] == ["ok", "ok", "timeout", "ok", "ok", "ok", "ok"]
    assert executor.coalesced >= 2  # a, the hanging item and b went in one write
    assert outcomes[2].seconds < 10
    pids = [o.value[1] if o.value is not None else 0 for o in outcomes]
    assert pids[3] != pids[0]  # b, sent behind it, ran in the replacement


def test_a_worker_that_dies_mid_batch_fails_its_item_alone() -> None:
    executor = Executor(1, max_queue_items=64, coalesce_item_s=CHEAP_S)
    try:
        outcomes = run(executor, calls("first", "a", "die", "b", "c"))
    finally:
        executor.close()
    assert [o.status for o in outcomes] == ["ok", "ok", "error", "ok", "ok"]
    assert "died" in outcomes[2].detail
    assert executor.crashes == 1


def test_a_cancelled_request_sent_behind_another_runs_and_its_answer_is_dropped() -> None:
    """An item already sent to a worker behind another cannot be taken back: it runs, its
    answer is dropped, and the worker is not stopped for it."""
    executor = Executor(1, max_queue_items=64, coalesce_item_s=CHEAP_S)
    try:

        async def go() -> tuple[Outcomes, bool]:
            await _run(executor, calls("seed"))
            first = asyncio.ensure_future(executor.run(calls("sleep:0.3", key="other")))
            await asyncio.sleep(0)  # first runs up to its wait: sent to the idle worker
            ahead = asyncio.ensure_future(executor.run(calls("sleep:0.2")))
            behind = asyncio.ensure_future(executor.run(calls("sleep:0.01")))
            last = asyncio.ensure_future(executor.run(calls("z")))
            async with asyncio.timeout(30):
                while executor.coalesced < 1:  # noqa: ASYNC110 - ahead and behind in one write
                    await asyncio.sleep(0.005)
            behind.cancel()
            outcomes = [*(await first), *(await ahead), *(await last)]
            return outcomes, behind.cancelled()

        outcomes, cancelled = asyncio.run(go())
    finally:
        executor.close()
    assert cancelled
    assert [o.status for o in outcomes] == ["ok", "ok", "ok"]
    assert executor.in_flight == 0 and executor.crashes == 0 and executor.restarts == 0
    assert len({o.value[1] for o in outcomes if o.value is not None}) == 1  # never replaced
