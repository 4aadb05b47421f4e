"""``envserver serve --workers N``: several server processes on one port, end to end.

State lives in signed tokens, so an episode may be reset by one process and stepped by another;
these tests pin each HTTP connection (keep-alive: one connection, one process) to a known
process and move an episode between them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

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


@pytest.fixture(scope="module")
def pinned(two_processes: LiveServer) -> Iterator[dict[int, httpx.Client]]:
    """One client per server process, keyed by its pid: new connections are opened until each
    process has answered one (the kernel hands each accept to either process)."""
    clients: dict[int, httpx.Client] = {}
    deadline = time.monotonic() + 120
    try:
        while len(clients) < 2:
            assert time.monotonic() < deadline, f"{len(clients)} process(es) answered"
            client = httpx.Client(base_url=two_processes.base_url, timeout=60)
            health = client.get("/healthz")
            if health.status_code != 200 or health.json()["process"] in clients:
                client.close()
                time.sleep(0.05)
                continue
            clients[health.json()["process"]] = client
        yield clients
    finally:
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
        "/v1/envs/math/step", json={"state": reset.json()["state"], "action": "\\boxed{x+1}"}
    )
    assert wrong.status_code == 200, wrong.text
    assert (wrong.json()["status"], wrong.json()["reward"]) == ("ok", 0.0)
    assert not wrong.json()["terminated"]
    # Back to the first process with the second's token: the last attempt ends the episode.
    last = first.post(
        "/v1/envs/math/step", json={"state": wrong.json()["state"], "action": "\\boxed{x+1}"}
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
