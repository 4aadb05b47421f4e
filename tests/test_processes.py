"""``envserver serve --workers N``: several server processes on one port, end to end.

State lives in sealed tokens, so an episode may be reset by one process and stepped by another;
these tests pin each HTTP connection (keep-alive: one connection, one process) to a known
process and move an episode between them.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Collection, Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import make_server
from tests.server import LiveServer


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """Two server processes sharing 2 pool workers and 2 sandbox workers."""
    server = make_server(
        tmp_path_factory.mktemp("processes"),
        "--workers",
        "2",
        ENVSERVER_POOL_WORKERS="2",
        ENVSERVER_SANDBOX_WORKERS="2",
    )
    with server:
        yield server


def pin(server: LiveServer, count: int, besides: Collection[int] = ()) -> dict[int, httpx.Client]:
    """One client per server process, keyed by its pid, for ``count`` processes not in
    ``besides``: new connections are opened until each has answered one (the kernel hands each
    accept to any process)."""
    clients: dict[int, httpx.Client] = {}
    deadline = time.monotonic() + 120
    while len(clients) < count:
        if time.monotonic() > deadline:
            for client in clients.values():
                client.close()
            pytest.fail(f"{len(clients)} of {count} server processes answered")
        client = httpx.Client(base_url=server.base_url, timeout=60)
        try:
            health = client.get("/healthz")
        except httpx.TransportError:
            health = None
        pid = health.json()["process"] if health is not None and health.status_code == 200 else 0
        if not pid or pid in clients or pid in besides:
            client.close()
            time.sleep(0.05)
            continue
        clients[pid] = client
    return clients


@pytest.fixture(scope="module")
def pinned(two_processes: LiveServer) -> Iterator[dict[int, httpx.Client]]:
    """One client per server process, keyed by its pid."""
    clients = pin(two_processes, 2)
    yield clients
    for client in clients.values():
        client.close()


def test_each_process_gets_its_share_of_the_workers(pinned: dict[int, httpx.Client]) -> None:
    for pid, client in pinned.items():
        health = client.get("/healthz").json()
        assert health["process"] == pid  # the connection stays with its process
        assert health["pool_workers"] == 1
        assert health["sandbox_workers"] == 1


@pytest.mark.parametrize("difficulty", ["easy", "hard"])  # generated inline, and on the pool
def test_an_episode_moves_between_processes(
    pinned: dict[int, httpx.Client], difficulty: str
) -> None:
    first, second = pinned.values()
    options = {"difficulty": difficulty, "max_attempts": 2}
    reset = first.post("/v1/envs/math/reset", json={"seed": 11, "options": options})
    assert reset.status_code == 200, reset.text
    wrong = second.post(
        "/v1/envs/math/step", json={"state": reset.json()["state"], "action": "\\boxed{-987654321}"}
    )
    assert wrong.status_code == 200, wrong.text
    assert (wrong.json()["status"], wrong.json()["reward"]) == ("ok", 0.0)
    assert not wrong.json()["terminated"]
    # Back to the first process with the second's token: the last attempt ends the episode.
    last = first.post(
        "/v1/envs/math/step", json={"state": wrong.json()["state"], "action": "\\boxed{-987654321}"}
    )
    assert last.status_code == 200, last.text
    assert (last.json()["status"], last.json()["terminated"]) == ("ok", True)
    # The task id one process gave names the same task on the other.
    again = second.post("/v1/envs/math/reset", json={"task_id": reset.json()["task_id"]})
    assert again.json()["observation"] == reset.json()["observation"]


def test_a_token_from_one_process_is_signed_for_all(pinned: dict[int, httpx.Client]) -> None:
    first, second = pinned.values()
    state = first.post("/v1/envs/math/reset", json={"seed": 3}).json()["state"]
    forged = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
    assert (
        second.post("/v1/envs/math/step", json={"state": forged, "action": "1"}).status_code == 403
    )
    assert (
        second.post("/v1/envs/math/step", json={"state": state, "action": "1"}).status_code == 200
    )


def test_a_killed_process_loses_no_episode_and_is_replaced(tmp_path: Path) -> None:
    server = make_server(
        tmp_path, "--workers", "2", ENVSERVER_POOL_WORKERS="2", ENVSERVER_SANDBOX_WORKERS="2"
    )
    with server:
        clients = pin(server, 2)
        try:
            (doomed, first), (survivor, second) = clients.items()
            options = {"difficulty": "medium", "max_attempts": 3}
            state = first.post("/v1/envs/math/reset", json={"seed": 5, "options": options})
            os.kill(doomed, signal.SIGKILL)
            step = {"state": state.json()["state"], "action": "\\boxed{-987654321}"}
            moved = second.post("/v1/envs/math/step", json=step)
            assert moved.status_code == 200, moved.text
            # uvicorn's supervisor starts a fresh process, which serves the episode on.
            fresh = pin(server, 1, besides=(doomed, survivor))
            (client,) = fresh.values()
            try:
                step = {"state": moved.json()["state"], "action": "\\boxed{-987654321}"}
                last = client.post("/v1/envs/math/step", json=step)
                assert last.status_code == 200, last.text
                assert last.json()["status"] == "ok"
            finally:
                client.close()
        finally:
            for each in clients.values():
                each.close()
