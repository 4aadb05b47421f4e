"""The pool survives what one item carries and heals when its processes die (issue 14, 1-2).

In-process tests drive the real ``Executor`` (a real pebble pool of forkserver processes);
end-to-end tests kill a live server's pool worker and fork server under load.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from envserver.executor import Call, Executor, PoolUnavailable
from envserver.wire import MAX_JSON_DEPTH
from tests.conftest import make_server
from tests.server import LiveServer


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
    assert executor.alive and executor.rebuilds == 0


def test_a_result_that_cannot_be_sent_back_fails_alone(executor: Executor) -> None:
    outcomes = asyncio.run(executor.run([Call(deep_result, (5000,), 10), Call(add, (1, 1), 10)]))
    assert outcomes[0].status == "error" and "cannot be sent back" in outcomes[0].detail
    assert outcomes[1].value == 2
    assert executor.alive and executor.rebuilds == 0


class Poison:
    """A task pebble's scheduling thread chokes on: it waits until released, then raises, so
    the thread dies with the items queued behind it stranded (what a pickling RecursionError
    did before arguments were pickled outside the pool)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    @property
    def future(self) -> Any:
        self.entered.set()
        self.release.wait(10)
        raise RuntimeError("poisoned")


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_dead_pool_thread_is_replaced_and_its_items_end_in_error(executor: Executor) -> None:
    async def scenario() -> tuple[list[str], list[Any], str]:
        await executor.run([Call(add, (0, 0), 10)])  # pebble starts its threads on first use
        poison = Poison()
        executor._pool._context.task_queue.put(poison)
        assert poison.entered.wait(10)
        stranded = asyncio.ensure_future(executor.run([Call(add, (1, 1), 10)]))
        await asyncio.sleep(0.1)  # queued behind the poison
        poison.release.set()
        await asyncio.sleep(0.1)
        problem = executor.problem()
        watchdog = asyncio.ensure_future(executor.watch(0.05))
        done = await asyncio.wait_for(stranded, 10)
        after = await executor.run([Call(add, (3, 4), 10)])
        watchdog.cancel()
        return [o.status for o in done], [o.value for o in after], problem

    statuses, values, problem = asyncio.run(scenario())
    assert problem
    assert statuses == ["error"]
    assert values == [7]
    assert executor.rebuilds == 1 and executor.healthy


def test_a_pool_that_cannot_be_replaced_answers_unavailable_and_is_unhealthy(
    executor: Executor,
) -> None:
    executor._pool.stop()  # type: ignore[no-untyped-call]
    executor._new_pool = _refuse  # type: ignore[method-assign]
    with pytest.raises(PoolUnavailable):
        asyncio.run(executor.run([Call(add, (1, 1), 10)]))
    for _ in range(executor.max_rebuilds):
        executor.check()
    assert not executor.healthy and not executor.alive


def _refuse() -> Any:
    raise OSError("no more processes")


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
                self.health[http.get("/healthz").status_code] += 1
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
        workers = _children(old)
        os.kill(old, signal.SIGKILL)
        # Make the pool start workers now: a killed worker is replaced from a new fork server.
        for pid, _ in workers:
            os.kill(pid, signal.SIGKILL)
        assert load.recovered_within(20), dict(load.replies)
    _check(load)
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
