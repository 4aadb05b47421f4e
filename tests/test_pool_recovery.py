"""The pool survives what one item carries and heals when its processes die (issue 14, 1-2).

In-process tests drive the real ``Executor`` (its forkserver worker processes);
end-to-end tests kill a live server's pool worker and fork server under load.
"""

from __future__ import annotations

import asyncio
import collections
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvloop

from envserver.executor import Call, Executor, Outcome, PoolUnavailable
from envserver.wire import MAX_JSON_DEPTH
from tests.conftest import make_server
from tests.process_support import alive
from tests.server import ROOT, LiveServer


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth - 1):
        value = [value]
    return [value]


def add(a: int, b: int) -> int:
    return a + b


def deep_result(depth: int) -> Any:
    return nested(depth)


@pytest.fixture
def executor() -> Iterator[Executor]:
    pool = Executor(2, max_queue_items=64)
    yield pool
    pool.close()


def test_an_item_that_cannot_be_pickled_fails_alone(executor: Executor) -> None:
    calls = [Call(add, (1, 2), 10), Call(add, (nested(5000), 1), 10), Call(add, (2, 2), 10)]
    outcomes = asyncio.run(executor.run(calls))
    assert [o.status for o in outcomes] == ["ok", "error", "ok"]
    assert "cannot be sent to a worker" in outcomes[1].detail
    assert executor.alive and executor.restarts == 0


def test_a_result_that_cannot_be_sent_back_fails_alone(executor: Executor) -> None:
    outcomes = asyncio.run(executor.run([Call(deep_result, (5000,), 10), Call(add, (1, 1), 10)]))
    assert outcomes[0].status == "error" and "cannot be sent back" in outcomes[0].detail
    assert outcomes[1].value == 2
    assert executor.alive and executor.restarts == 0


def echo(value: Any) -> Any:
    return value


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
def test_items_and_results_larger_than_a_socket_buffer_cross_whole(
    executor: Executor, run: Callable[[Any], Any]
) -> None:
    # uvloop makes the sockets it watches non-blocking: a message crosses in many pieces.
    big = bytes(range(256)) * (32 << 10)  # 8 MiB
    calls = [Call(echo, (big,), 30), Call(len, (big,), 30), Call(add, (1, 1), 30)] * 2
    outcomes = run(executor.run(calls))
    assert [o.status for o in outcomes] == ["ok"] * 6
    assert [o.value for o in outcomes] == [big, len(big), 2] * 2
    assert executor.restarts == 0


class Unpicklable(Exception):
    """An exception whose arguments do not survive the trip back (its __init__ takes two)."""

    def __init__(self, a: str, b: str) -> None:
        super().__init__(f"{a} {b}")


def raise_unpicklable() -> None:
    raise Unpicklable("odd", "arguments")


def test_an_exception_that_cannot_be_sent_back_fails_its_item_with_its_message(
    executor: Executor,
) -> None:
    calls: list[Call[Any]] = [Call(raise_unpicklable, (), 10), Call(add, (1, 1), 10)]
    outcomes = asyncio.run(executor.run(calls))
    assert outcomes[0].status == "error"
    assert "Unpicklable: odd arguments" in outcomes[0].detail
    assert "cannot be sent back" in outcomes[0].detail
    assert "raise_unpicklable" in getattr(outcomes[0].raised, "traceback", "")
    assert outcomes[1].value == 2 and executor.restarts == 0


def die(code: int) -> None:
    os._exit(code)


def test_a_worker_that_dies_fails_its_item_alone_and_is_replaced() -> None:
    pool = Executor(1, max_queue_items=8)
    try:
        calls: list[Call[Any]] = [Call(add, (1, 1), 10), Call(die, (7,), 10), Call(add, (2, 2), 10)]
        calls *= 2
        outcomes = asyncio.run(pool.run(calls))
    finally:
        pool.close()
    assert [o.status for o in outcomes] == ["ok", "error", "ok"] * 2
    assert "exit code 7" in outcomes[1].detail
    # The items queued behind each death ran on the replacement.
    assert pool.crashes == 2 and pool.restarts == 2


def test_a_fork_server_that_just_died_is_replaced_without_a_failed_start(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Its worker dies with it, and the replacement starts while it may still be dying: that
    # start is refused (or loses it mid-request) and must wait for the next fork server rather
    # than fail (issue 27: "cannot start a worker process: [Errno 111]").
    pool = Executor(1, max_queue_items=8)

    async def kill_five_times() -> list[Any]:
        # As the server's lifespan does: the pool's first start, then its watch.
        values = [o.value for o in await pool.run([Call(add, (1, 1), 10)])]
        watch = asyncio.create_task(pool.watch())
        for _ in range(5):
            server = [pid for pid, args in _children(os.getpid()) if "forkserver" in args]
            worker = [pid for pid, _ in _children(server[0])]
            # The worker dies with its fork server (killed too, at once): once the pool sees
            # it gone its replacement starts, while the fork server may still be dying.
            os.kill(server[0], signal.SIGKILL)
            os.kill(worker[0], signal.SIGKILL)
            while pool.ready_workers():  # noqa: ASYNC110 - the pool signals no event for it
                await asyncio.sleep(0.001)
            values += [o.detail or o.value for o in await pool.run([Call(add, (2, 2), 30)])]
        watch.cancel()
        return values

    try:
        assert asyncio.run(kill_five_times()) == [2] + [4] * 5
    finally:
        pool.close()
    failed = [r.getMessage() for r in caplog.records if "cannot start" in r.getMessage()]
    assert not failed, failed
    assert pool.restarts == 5


HELD: list[Any] = []


def hold_a_lock() -> None:
    # As tqdm does in a worker, even for a hidden bar: a semaphore the resource tracker follows.
    HELD.append(multiprocessing.Lock())


def test_closing_the_pool_leaks_no_semaphore_a_worker_made() -> None:
    # The resource tracker warns when this process exits, so the pool runs in a process of its
    # own (issue 27: Ctrl-C printed "1 leaked semaphore objects").
    script = (
        "import asyncio\n"
        "from envserver.executor import Call, Executor\n"
        "from tests.test_pool_recovery import hold_a_lock\n"
        "pool = Executor(1, max_queue_items=4)\n"
        "print(asyncio.run(pool.run([Call(hold_a_lock, (), 30)]))[0].status)\n"
        "pool.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.strip() == "ok", done.stderr
    assert "leaked" not in done.stderr, done.stderr


def test_an_item_past_its_deadline_is_stopped_alone(executor: Executor) -> None:
    started = time.monotonic()
    calls: list[Call[Any]] = [Call(time.sleep, (30,), 0.5), Call(add, (1, 1), 10)]
    outcomes = asyncio.run(executor.run(calls))
    assert time.monotonic() - started < 10
    assert [o.status for o in outcomes] == ["timeout", "ok"]
    assert "0.5 s limit" in outcomes[0].detail and 0.5 <= outcomes[0].seconds < 5
    assert executor.timeouts == 1


def test_cancelling_a_request_stops_its_running_item_and_the_pool_heals(
    executor: Executor,
) -> None:
    async def scenario() -> list[Any]:
        await executor.run([Call(add, (0, 0), 10)] * 2)
        request = asyncio.ensure_future(executor.run([Call(time.sleep, (30,), 60)]))
        await asyncio.sleep(0.3)
        request.cancel()
        with pytest.raises(asyncio.CancelledError):
            await request
        deadline = time.monotonic() + 20
        while executor.restarts < 1 and time.monotonic() < deadline:
            await executor.run([Call(add, (1, 1), 10)])
            await asyncio.sleep(0.05)
        return [o.value for o in await executor.run([Call(add, (3, 4), 10)] * 2)]

    assert asyncio.run(scenario()) == [7, 7]
    assert executor.restarts == 1 and executor.in_flight == 0


def test_closing_the_pool_ends_items_in_flight_with_error() -> None:
    pool = Executor(1, max_queue_items=8)

    async def scenario() -> list[Any]:
        await pool.run([Call(add, (0, 0), 10)])
        request = asyncio.ensure_future(pool.run([Call(time.sleep, (30,), 60)] * 2))
        await asyncio.sleep(0.3)
        pool.close()
        return await asyncio.wait_for(request, 5)

    outcomes = asyncio.run(scenario())
    assert [(o.status, o.detail) for o in outcomes] == [("error", "the worker pool closed")] * 2


def _open_descriptors() -> int:
    return sum(1 for _ in Path("/proc/self/fd").iterdir())


def test_replacing_workers_leaks_no_descriptors(executor: Executor) -> None:
    async def crashes(count: int) -> None:
        for _ in range(count):
            await executor.run([Call(die, (1,), 10)])
        await executor.run([Call(add, (1, 1), 10)] * 2)

    asyncio.run(crashes(3))
    before = _open_descriptors()
    asyncio.run(crashes(30))
    assert executor.crashes == 33
    assert _open_descriptors() <= before + 2  # a start may be under way


def refuse_to_start() -> None:
    raise SystemExit(3)


def test_workers_that_cannot_start_answer_unavailable_and_turn_unhealthy() -> None:
    pool = Executor(2, max_queue_items=8, initializer=refuse_to_start, max_start_failures=4)

    async def scenario() -> list[Outcome[Any]]:
        watchdog = asyncio.ensure_future(pool.watch(0.05))
        try:
            # Queued while the first workers start; they end in error when none can.
            first = await asyncio.wait_for(pool.run([Call(add, (1, 1), 10)]), 30)
            deadline = time.monotonic() + 30
            while pool.healthy and time.monotonic() < deadline:  # noqa: ASYNC110 - polled
                await asyncio.sleep(0.05)
            return first
        finally:
            watchdog.cancel()

    try:
        first = asyncio.run(scenario())
        assert [o.status for o in first] == ["error"]
        assert "exited while starting (exit code 3)" in first[0].detail
        assert not pool.healthy and not pool.alive
        with pytest.raises(PoolUnavailable, match="exit code 3"):
            asyncio.run(pool.run([Call(add, (1, 1), 10)]))
    finally:
        pool.close()


# --- end to end ---------------------------------------------------------------------------------


def test_too_deep_bodies_are_refused_on_every_route(base_url: str) -> None:
    deep, fine = "DEEP", nested(MAX_JSON_DEPTH - 3)  # the body, items and item hold it
    cases: list[tuple[str, Any]] = [
        ("/v1/verify", {"verifier": "math", "items": [{"response": "1", "reference": deep}]}),
        ("/v1/envs/math/reset", {"seed": 1, "options": {"difficulty": deep}}),
        (
            "/v1/sandbox/matrix",
            {
                "programs": ["def f(x):\n    return x"],
                "tests": {"kind": "call", "entry_point": "f", "items": [{"args": [deep]}]},
            },
        ),
        ("/openrlhf/math/get_reward", {"query": ["x"], "prompts": ["x"], "labels": [deep]}),
    ]
    with httpx.Client(base_url=base_url, timeout=60) as http:
        for path, body in cases:
            for depth in (MAX_JSON_DEPTH + 1, 600, 5000):
                text = json.dumps(body).replace('"DEEP"', "[" * depth + "1" + "]" * depth)
                reply = http.post(path, content=text, headers={"content-type": "application/json"})
                assert reply.status_code == 422, (path, depth, reply.text)
                assert reply.json()["type"].endswith("/too-deep")
                assert str(MAX_JSON_DEPTH) in reply.json()["detail"]
        # Just inside the limit is an ordinary request, and the pool still works.
        ok = http.post(
            "/v1/verify",
            json={"verifier": "test.sleep", "items": [{"response": "x", "reference": fine}]},
        )
        assert ok.status_code == 200 and ok.json()["results"][0]["status"] == "ok", ok.text
        again = http.post(
            "/v1/verify",
            json={"verifier": "math", "items": [{"response": "\\boxed{2}", "reference": "2"}]},
        )
        assert again.json()["results"][0]["reward"] == 1.0


def _children(pid: int) -> list[tuple[int, str]]:
    command = ["ps", "-ww", "-o", "pid=,args=", "--ppid", str(pid)]
    # Exit status 1 means no such process: an empty list.
    out = subprocess.run(command, check=False, capture_output=True, text=True).stdout
    return [(int(line.split(None, 1)[0]), line.split(None, 1)[1]) for line in out.splitlines()]


def _fork_server(server: LiveServer) -> int:
    assert server.process is not None
    found = [pid for pid, args in _children(server.process.pid) if "forkserver import main" in args]
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def victim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with make_server(tmp_path_factory.mktemp("victim")) as server:
        yield server


class Load:
    """Clients scoring math items in a loop, recording every reply, and a /healthz watcher."""

    def __init__(self, base_url: str, clients: int = 3) -> None:
        self.base_url = base_url
        self.replies: collections.Counter[Any] = collections.Counter()
        self.health: collections.Counter[int] = collections.Counter()
        self.degraded: collections.Counter[tuple[int, str]] = collections.Counter()
        self.last_ok = 0.0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._score) for _ in range(clients)]
        self._threads.append(threading.Thread(target=self._watch))

    def _score(self) -> None:
        items = [{"response": "\\boxed{2}", "reference": "2"}] * 4
        with httpx.Client(base_url=self.base_url, timeout=60) as http:
            while not self._stop.is_set():
                reply = http.post("/v1/verify", json={"verifier": "math", "items": items})
                if reply.status_code != 200:
                    self.replies[reply.status_code] += 1
                    continue
                for result in reply.json()["results"]:
                    self.replies[(result["status"], result["reward"])] += 1
                self.last_ok = time.monotonic()

    def _watch(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=10) as http:
            while not self._stop.is_set():
                health = http.get("/healthz")
                self.health[health.status_code] += 1
                if health.json().get("degraded"):
                    self.degraded[(http.get("/readyz").status_code, health.json()["detail"])] += 1
                time.sleep(0.05)

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        time.sleep(1.0)
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def recovered_within(self, seconds: float) -> bool:
        killed = time.monotonic()
        while time.monotonic() - killed < seconds:
            if self.last_ok > killed + 0.5:
                return True
            time.sleep(0.1)
        return False


def _check(load: Load) -> None:
    # Only scored items or items lost in flight (error, no reward); 503 is the retryable answer
    # while a pool is replaced; never a 500 and never a wrong reward.
    wrong = {
        key: n for key, n in load.replies.items() if key not in {("ok", 1.0), ("error", None), 503}
    }
    assert not wrong, dict(load.replies)
    assert set(load.health) == {200}, dict(load.health)


def test_the_fork_server_has_imported_the_families(victim: LiveServer) -> None:
    """Its workers fork with the families loaded: a worker (and each replacement) then starts
    in about 0.3 CPU-s instead of importing them itself (about 2), and shares their pages. The
    CLI's preflight discovers the families before the app does, and the second discovery once
    gave the fork server nothing to import: 13 MB resident, each worker 250 MB of its own."""
    status = Path(f"/proc/{_fork_server(victim)}/status").read_text()
    resident_kib = int(
        next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]
    )
    assert resident_kib > 100 * 1024, status


def test_killing_a_pool_worker_under_load_loses_only_items_in_flight(victim: LiveServer) -> None:
    with Load(victim.base_url) as load:
        workers = _children(_fork_server(victim))
        assert workers, "the pool's workers are children of its fork server"
        os.kill(workers[0][0], signal.SIGKILL)
        assert load.recovered_within(20), dict(load.replies)
    _check(load)
    health = httpx.get(f"{victim.base_url}/healthz").json()
    assert health["pool_workers"] == 2


def test_killing_the_fork_server_under_load_loses_only_items_in_flight(victim: LiveServer) -> None:
    with Load(victim.base_url) as load:
        old = _fork_server(victim)
        workers = [pid for pid, _ in _children(old)]
        assert workers
        os.kill(old, signal.SIGKILL)
        # Its workers die with it (none lives on unsupervised), and new ones start from a new
        # fork server without a warm-up: the new fork server's imports are the wait (about 3 s
        # on an idle machine, several times that on a loaded one: benchmarks/recovery.py). This
        # checks that it recovers, not how fast: over 20 s was seen beside the rest of the suite.
        assert load.recovered_within(60), dict(load.replies)
    _check(load)
    # Meanwhile /healthz said the pool was degraded (still 200: it heals by itself), and
    # /readyz refused while no worker was ready.
    assert load.degraded, "the degraded pool never showed in /healthz"
    assert any("pool workers ready" in detail for _, detail in load.degraded), load.degraded
    assert 503 in {status for status, _ in load.degraded}, load.degraded
    assert not [pid for pid in workers if alive(pid)]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _fork_server(victim) == old:
        time.sleep(0.1)
    assert _fork_server(victim) != old
    assert httpx.get(f"{victim.base_url}/healthz").json()["pool_workers"] == 2


def test_killing_a_sandbox_worker_shows_in_healthz_and_heals(victim: LiveServer) -> None:
    assert victim.process is not None
    zygotes = [pid for pid, args in _children(victim.process.pid) if "sandbox.zygote" in args]
    before = httpx.get(f"{victim.base_url}/healthz").json()
    assert before["sandbox_workers"] == len(zygotes) > 1
    os.kill(zygotes[0], signal.SIGKILL)
    seen: set[int] = set()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        reply = httpx.get(f"{victim.base_url}/healthz")
        assert reply.status_code == 200, reply.text  # other workers still serve: alive
        seen.add(reply.json()["sandbox_workers"])
        if len(seen) > 1 and reply.json()["sandbox_workers"] == len(zygotes):
            break
        time.sleep(0.05)
    assert len(zygotes) - 1 in seen, seen
    assert httpx.get(f"{victim.base_url}/healthz").json()["sandbox_workers"] == len(zygotes)
