"""WebShop over HTTP: an episode through the API and bad input (the store's pages in the
playground are tested in ``tests/test_playground.py``).

One server serves the small test shop (its index shared with this process through the cache
folder).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from environments.webshop.family import WebShopOptions
from tests.conftest import make_server
from tests.server import LiveServer
from tests.webshop_support import server_env, small_config, small_env


@pytest.fixture(scope="module")
def shop_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server serving the small test shop."""
    small_env().shop.index  # noqa: B018 - build the index once, here, for both processes
    with make_server(tmp_path_factory.mktemp("webshop"), **server_env(small_config())) as server:
        yield server


@pytest.fixture(scope="module")
def http(shop_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=shop_server.base_url, timeout=60) as client:
        yield client


def reset(http: httpx.Client, **options: Any) -> dict[str, Any]:
    reply = http.post("/v1/envs/webshop/reset", json={"seed": 0, "options": options})
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def step(http: httpx.Client, token: str, action: str) -> httpx.Response:
    return http.post("/v1/envs/webshop/step", json={"state": token, "action": action})


def test_an_episode_from_reset_to_purchase(http: httpx.Client) -> None:
    env = small_env()
    options = {"split": "test", "goal_index": 11, "observation_mode": "text_rich"}
    served = reset(http, **options)
    local = env.reset(0, WebShopOptions(**options))
    assert served["observation"] == local.observation
    token, state = served["state"], local.state
    for _ in range(20):
        action = env.expert_action(state)
        reply = step(http, token, action)
        assert reply.status_code == 200, reply.text
        body = reply.json()
        mine = env.step(state, action)
        assert body["observation"] == mine.observation
        assert body["info"]["valid_actions"] == mine.info["valid_actions"]
        token, state = body["state"], mine.state
        if body["terminated"]:
            break
    assert (body["status"], body["reward"], body["terminated"]) == ("ok", 1.0, True)
    assert body["components"]["r_type"] == 1.0
    assert body["info"]["purchase"]["asin"] == env.shop.goals[state["goal_index"]]["asin"]
    assert step(http, token, "search[again]").status_code == 409


@pytest.mark.parametrize(
    "action",
    ["", "search[]", "x" * 100, "click[no such button]", "click[buy now]", "click[< prev]",
     "search", "click[[]]", "\u0000\u2603"],
)  # fmt: skip
def test_bad_actions_change_nothing(http: httpx.Client, action: str) -> None:
    first = reset(http)
    reply = step(http, first["state"], action)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert (body["status"], body["reward"], body["terminated"]) == ("invalid", 0.0, False)
    assert body["observation"] == first["observation"]


def test_empty_and_10kb_queries(http: httpx.Client) -> None:
    first = reset(http)
    assert step(http, first["state"], "search[]").json()["status"] == "invalid"
    big = step(http, first["state"], f"search[{'lamp ' * 2000}]")
    assert big.status_code in (200, 413, 422), big.text
    if big.status_code == 200:
        assert big.json()["info"]["page"] == "results"


def test_forged_and_stale_tokens_are_refused(http: httpx.Client) -> None:
    token = reset(http)["state"]
    head, _, tail = token.rpartition(".")
    forged = head + "." + ("A" if tail[0] != "A" else "B") + tail[1:]
    for bad in (forged, "garbage", "", token[:-5], base64.urlsafe_b64encode(b"{}").decode()):
        reply = step(http, bad, "search[shoes]")
        assert reply.status_code in (400, 403, 422), (bad, reply.status_code)
    other = http.post("/v1/envs/opt/tsp/reset", json={"seed": 1})
    if other.status_code == 200:
        assert step(http, other.json()["state"], "search[x]").status_code in (400, 403)


def test_bad_reset_options_are_400s(http: httpx.Client) -> None:
    for options in ({"split": "nope"}, {"goal_index": -1}, {"goal_index": 10**9, "split": "test"},
                    {"step_limit": 0}, {"observation_mode": "pdf"}, {"surprise": 1}):  # fmt: skip
        reply = http.post("/v1/envs/webshop/reset", json={"seed": 0, "options": options})
        assert 400 <= reply.status_code < 500, (options, reply.status_code, reply.text)
