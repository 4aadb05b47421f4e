"""WebShop over HTTP: an episode through the API, bad input, the store's pages and a browser.

One server serves the small test shop (its index shared with this process through the cache
folder); the browser test drives Debian's chromium through its chromedriver, headless.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from environments.webshop.family import WebShopOptions
from envserver.testing import LiveServer
from tests.browser import chromium
from tests.conftest import make_server
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
    assert body["info"]["purchase"]["asin"] == state["goal"]["asin"]
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


def _form(page: str) -> str:
    match = re.search(r"name='token' value='([^']+)'", page)
    assert match, page
    return match.group(1)


def test_the_store_pages_play_an_episode(http: httpx.Client) -> None:
    assert "Start shopping" in http.get("/webshop").text
    page = http.get("/webshop/start", params={"split": "test", "goal_index": "11"})
    assert page.status_code == 200 and "search_input" in page.text
    token = _form(page.text)
    env = small_env()
    state = env.reset(0, WebShopOptions(split="test", goal_index=11)).state
    for _ in range(20):
        action = env.expert_action(state)
        data = {"token": token, "action": action}
        if action.startswith("search["):
            data = {"token": token, "action": "search", "query": action[7:-1]}
        reply = http.post("/webshop/step", data=data)
        assert reply.status_code == 200, reply.text
        state = env.step(state, action).state
        if state["page"] == "done":
            break
        token = _form(reply.text)
    assert re.search(r"id='reward'>1\.0000<", reply.text)
    assert "r_type" in reply.text


def test_the_store_refuses_bad_input_with_4xx(http: httpx.Client) -> None:
    page = http.get("/webshop/start", params={"split": "test", "goal_index": "0"})
    token = _form(page.text)
    # Options are validated as the API validates them: a schema error is a 422.
    assert http.get("/webshop/start", params={"split": "bogus"}).status_code == 422
    assert http.get("/webshop/start", params={"goal_index": "abc"}).status_code == 400
    assert (
        http.get("/webshop/start", params={"goal_index": "99999999", "split": "test"}).status_code
        == 400
    )
    assert http.post("/webshop/step", data={"token": "forged", "action": "x"}).status_code in (
        400,
        403,
    )
    assert http.post("/webshop/step", data={"action": "x"}).status_code == 422
    unknown = http.post("/webshop/step", data={"token": token, "action": "click[nope]"})
    assert unknown.status_code == 200 and "id='notice'" in unknown.text
    huge = http.post(
        "/webshop/step", data={"token": token, "action": "search", "query": "a" * 10_000}
    )
    assert huge.status_code == 200
    empty = http.post("/webshop/step", data={"token": token, "action": "search", "query": ""})
    assert empty.status_code == 200 and "id='notice'" in empty.text


def test_a_person_shops_in_a_real_browser(shop_server: LiveServer, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    env = small_env()
    state = env.reset(0, WebShopOptions(split="test", goal_index=11)).state
    browser = chromium()

    def press(element: Any) -> None:
        # Every button submits a form: wait for the next page before reading it.
        page = browser.find_element(By.TAG_NAME, "html")
        element.click()
        WebDriverWait(browser, 20).until(expected_conditions.staleness_of(page))

    try:
        browser.get(f"{shop_server.base_url}/webshop")
        browser.find_element(By.NAME, "split").send_keys("test")
        browser.find_element(By.NAME, "goal_index").send_keys("11")
        press(browser.find_element(By.ID, "start_button"))
        query = "shoes and shirts"
        browser.find_element(By.ID, "search_input").send_keys(query)
        press(browser.find_element(By.ID, "search_button"))
        state = env.step(state, f"search[{query}]").state
        first = browser.find_element(By.CSS_SELECTOR, ".product-link button")
        asin = first.text
        press(first)
        state = env.step(state, f"click[{asin.lower()}]").state
        assert browser.find_element(By.ID, "page").get_attribute("data-page") == "item"
        options = browser.find_elements(By.CSS_SELECTOR, ".option button")
        if options:
            value = options[0].text
            press(options[0])
            state = env.step(state, f"click[{value}]").state
            chosen = browser.find_element(By.CSS_SELECTOR, ".option.checked button")
            assert chosen.text == value
        press(browser.find_element(By.XPATH, "//button[text()='Buy Now']"))
        shown = float(browser.find_element(By.ID, "reward").text)
        expected = env.step(state, "click[buy now]").score.reward
        assert expected is not None and shown == pytest.approx(expected, abs=1e-4)
        assert browser.find_element(By.ID, "components").text.count("r_") >= 3
    finally:
        browser.save_screenshot(str(tmp_path / "store.png"))
        browser.quit()
