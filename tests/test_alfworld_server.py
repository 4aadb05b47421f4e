"""ALFWorld over HTTP: expert plans win for 30 seeds of every task type (through the batch
endpoints a vector env uses), single steps match the environment in-process, bad input is a 4xx
that loses nothing, and what the server lacks (ALFWorld's data) is a 503 with the fix."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from environments.alfworld.family import AlfWorldEnv, AlfWorldOptions
from environments.alfworld.tables import TASK_TYPES

SEEDS = range(30)


@pytest.fixture(scope="module")
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=120) as client:
        yield client


def _ok(reply: httpx.Response) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_the_expert_plan_from_reset_wins_for_30_seeds(http: httpx.Client, task_type: str) -> None:
    options = {"task_type": task_type, "expert_plan": True}
    items = [{"seed": seed, "options": options} for seed in SEEDS]
    resets = _ok(http.post("/v1/envs/alfworld/reset/batch", json={"items": items}))["results"]
    plans = {i: list(r["info"]["expert_plan"]) for i, r in enumerate(resets)}
    tokens = {i: r["state"] for i, r in enumerate(resets)}
    assert all(r["info"]["task_type"] == task_type for r in resets)
    finished: dict[int, dict[str, Any]] = {}
    while plans:
        live = sorted(plans)
        batch = [{"state": tokens[i], "action": plans[i].pop(0)} for i in live]
        results = _ok(http.post("/v1/envs/alfworld/step/batch", json={"items": batch}))["results"]
        for i, result in zip(live, results, strict=True):
            assert result["status"] == "ok", result
            tokens[i] = result["state"]
            if not plans[i]:
                finished[i] = result
                del plans[i]
    assert len(finished) == len(SEEDS)
    for result in finished.values():
        assert (result["reward"], result["terminated"], result["info"]["won"]) == (1.0, True, True)


def test_served_steps_match_the_environment_in_process(http: httpx.Client) -> None:
    env = AlfWorldEnv()
    options = {"difficulty": "easy", "reward": "progress", "grammar": "0.3"}
    local = env.reset(17, AlfWorldOptions(**options))
    served = _ok(http.post("/v1/envs/alfworld/reset", json={"seed": 17, "options": options}))
    assert served["observation"] == local.observation
    assert served["task_id"] == "alfworld@1/17?difficulty=easy&grammar=0.3&reward=progress"
    token, state = served["state"], local.state
    for command in ["look", "go to the moon", env.expert_action(state)]:
        body = _ok(http.post("/v1/envs/alfworld/step", json={"state": token, "action": command}))
        mine = env.step(state, command)
        assert body["observation"] == mine.observation
        assert (body["reward"], body["status"]) == (mine.score.reward, mine.score.status)
        assert body["components"] == mine.score.components
        assert body["metrics"] == mine.score.metrics
        assert body["info"]["admissible_commands"] == mine.info["admissible_commands"]
        token, state = body["state"], mine.state
    replay = _ok(http.post("/v1/envs/alfworld/reset", json={"task_id": served["task_id"]}))
    assert replay["observation"] == served["observation"]


def test_forged_and_foreign_tokens_are_refused(http: httpx.Client) -> None:
    token = _ok(http.post("/v1/envs/alfworld/reset", json={"seed": 1}))["state"]
    head, _, tail = token.rpartition(".")
    forged = head + "." + ("A" if tail[0] != "A" else "B") + tail[1:]
    for bad in (forged, "garbage", "", token[:-5], base64.urlsafe_b64encode(b"{}").decode()):
        reply = http.post("/v1/envs/alfworld/step", json={"state": bad, "action": "look"})
        assert reply.status_code in (400, 403, 422), (bad, reply.status_code)
        assert reply.headers["content-type"].startswith("application/problem+json")
    other = _ok(http.post("/v1/envs/math/reset", json={"seed": 1}))["state"]
    reply = http.post("/v1/envs/alfworld/step", json={"state": other, "action": "look"})
    assert reply.status_code == 403


@pytest.mark.parametrize(
    ("options", "status"),
    [
        ({"task_type": "fly"}, 422),
        ({"split": "test"}, 422),
        ({"step_limit": 0}, 422),
        ({"grammar": "0.5"}, 422),
        ({"surprise": 1}, 422),
        ({"game_index": 2}, 422),  # combinations no game plays with, refused at the edge
        ({"engine": "textworld", "reward": "subgoal"}, 422),
        ({"engine": "textworld", "step_limit": 60}, 422),
    ],
)
def test_bad_options_are_client_errors(
    http: httpx.Client, options: dict[str, Any], status: int
) -> None:
    reply = http.post("/v1/envs/alfworld/reset", json={"seed": 0, "options": options})
    assert reply.status_code == status, reply.text


@pytest.mark.parametrize("engine", ["native", "textworld"])
def test_released_games_without_alfworld_data_are_unavailable_not_bad_input(
    http: httpx.Client, engine: str
) -> None:
    # The test server has no ALFWORLD_DATA: its configuration, not the request, is at fault.
    options = {"games": "released", "engine": engine}
    reply = http.post("/v1/envs/alfworld/reset", json={"seed": 0, "options": options})
    assert reply.status_code == 503, reply.text
    assert reply.headers["content-type"].startswith("application/problem+json")
    problem = reply.json()
    assert "ALFWORLD_DATA" in problem["reason"] and "alfworld-download" in problem["fix"]


@pytest.mark.parametrize("action", ["", "x" * 5000, "\u0000\u2603", "go to", "LOOK", "help me"])
def test_hostile_actions_say_nothing_happens(http: httpx.Client, action: str) -> None:
    first = _ok(http.post("/v1/envs/alfworld/reset", json={"seed": 3}))
    reply = http.post("/v1/envs/alfworld/step", json={"state": first["state"], "action": action})
    if reply.status_code != 200:  # the wire's own action-size limit
        assert reply.status_code in (413, 422), reply.text
        return
    body = reply.json()
    assert (body["observation"], body["status"], body["reward"]) == (
        "Nothing happens.", "invalid", 0.0
    )  # fmt: skip
    assert body["info"]["steps"] == 1
