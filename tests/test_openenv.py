"""``/openenv/<env id>`` with OpenEnv's own client (``openenv.GenericEnvClient``, over its
WebSocket) and OpenEnv's HTTP wire format: a math episode, an ALFWorld game to ``won``, a WebShop
purchase, an episode that goes on across a server restart (the token in the metadata), and
malformed messages answered as OpenEnv's errors (tests/test_fuzz.py fuzzes them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from openenv import GenericEnvClient
from websockets.exceptions import ConnectionClosedOK
from websockets.sync.client import connect

from tests.conftest import make_server
from tests.test_contracts import env

GAMES = {"math": 0, "alfworld": 3, "webshop": 2}


def expert_plan(env_id: str, seed: int) -> list[str]:
    """The expert's actions for the episode ``seed`` (played in this process)."""
    environment = env(env_id)
    state = environment.reset(seed, environment.spec.options_model()).state
    plan = []
    for _ in range(100):
        action = environment.expert_action(state)
        plan.append(action)
        result = environment.step(state, action)
        state = result.state
        if result.terminated or result.truncated:
            return plan
    raise AssertionError(f"{env_id} seed {seed}: the expert did not finish")


def won(env_id: str, result: Any) -> None:
    assert (result.reward, result.done) == (1.0, True), result
    if env_id == "alfworld":
        assert result.observation["info"]["won"] is True


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_openenv_client_plays_to_the_reward_over_its_websocket(env_id: str, base_url: str) -> None:
    seed = GAMES[env_id]
    local = env(env_id)
    with GenericEnvClient(base_url=f"{base_url}/openenv/{env_id}").sync() as client:
        first = client.reset(seed=seed)
        assert (
            first.observation["text"] == local.reset(seed, local.spec.options_model()).observation
        )
        assert first.metadata["state_token"]
        for action in expert_plan(env_id, seed):
            result = client.step({"action": action})
        won(env_id, result)
        state = client.state()
        assert state["step_count"] == len(expert_plan(env_id, seed))
        assert state["state_token"] == result.metadata["state_token"]


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_openenv_http_routes_play_to_the_reward(env_id: str, base_url: str) -> None:
    seed = GAMES[env_id]
    with httpx.Client(base_url=f"{base_url}/openenv/{env_id}", timeout=120) as http:
        assert http.get("/health").json() == {"status": "healthy"}
        assert "action" in http.get("/schema").json()
        reply = http.post("/reset", json={"seed": seed}).json()
        token = reply["metadata"]["state_token"]
        for action in expert_plan(env_id, seed):
            answer = http.post("/step", json={"action": {"action": action, "state_token": token}})
            assert answer.status_code == 200, answer.text
            reply = answer.json()
            token = reply["metadata"]["state_token"]
        assert (reply["reward"], reply["done"]) == (1.0, True)
        # HTTP has no socket to remember a token: a step without one is refused.
        assert http.post("/step", json={"action": {"action": "look"}}).status_code == 400


def test_an_episode_survives_a_server_restart(tmp_path: Path) -> None:
    seed = GAMES["alfworld"]
    plan = expert_plan("alfworld", seed)
    with make_server(tmp_path) as server:
        url = f"{server.base_url}/openenv/alfworld"
        with GenericEnvClient(base_url=url).sync() as client:
            client.reset(seed=seed)
            for action in plan[:2]:
                result = client.step({"action": action})
        token = result.metadata["state_token"]
        server.stop()
        server.start()  # same port, same data directory (and signing key)
        with GenericEnvClient(base_url=url).sync() as client:
            result = client.step({"action": plan[2], "state_token": token})
            for action in plan[3:]:
                result = client.step({"action": action})
        won("alfworld", result)


def test_openenv_errors_are_its_error_messages(base_url: str) -> None:
    with GenericEnvClient(base_url=f"{base_url}/openenv/math").sync() as client:
        with pytest.raises(RuntimeError, match="state_token"):
            client.step({"action": "\\boxed{1}"})  # no reset on this socket, no token
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            client.step({"act": "x"})
        client.reset(seed=1)
        with pytest.raises(RuntimeError, match="EXECUTION_ERROR"):
            client.step({"action": "x", "state_token": "forged"})


def test_malformed_messages_are_openenv_errors_and_the_socket_stays_up(base_url: str) -> None:
    # Scalars, a binary frame, a message that is not an object: each answered with an error
    # OpenEnv's client reads, and the session goes on.
    url = base_url.replace("http://", "ws://") + "/openenv/math/ws"
    with connect(url) as ws:
        for frame, code in [
            ("123", "INVALID_JSON"),
            ("null", "INVALID_JSON"),
            ("[1]", "INVALID_JSON"),
            ('{"type": "step", "data": 5}', "VALIDATION_ERROR"),
            ('{"type": "nope"}', "UNKNOWN_TYPE"),
            ('{"type": "reset", "data": {"seed": "42"}}', "VALIDATION_ERROR"),
            (b"\xff\xfe", "INVALID_JSON"),
        ]:
            ws.send(frame)
            answer = json.loads(ws.recv(timeout=60))
            assert (answer["type"], answer["data"]["code"]) == ("error", code), (frame, answer)
        ws.send(b'{"type": "reset", "data": {"seed": 1}}')  # a message in a binary frame
        assert json.loads(ws.recv(timeout=60))["type"] == "observation"
        ws.send('{"type": "close"}')
        with pytest.raises(ConnectionClosedOK):  # closed cleanly, as asked
            ws.recv(timeout=60)


@pytest.mark.parametrize("body", [b"123", b"true", b"null", b"[1]", b'{"seed": "42"}'])
def test_openenv_http_reset_refuses_a_body_it_cannot_use(base_url: str, body: bytes) -> None:
    answer = httpx.post(
        f"{base_url}/openenv/math/reset",
        content=body,
        headers={"content-type": "application/json"},
        timeout=60,
    )
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
