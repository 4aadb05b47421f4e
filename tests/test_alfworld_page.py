"""The ALFWorld page fragment (``environments.alfworld.page``): what it shows, that it escapes
what it shows, and that a person can play an episode with it in a real browser.

The playground that serves family pages is not this family's; the browser test wraps the
fragment in the minimal page the playground provides (a form carrying the state) on a loopback
test server, and plays the expert's plan by pressing the buttons in Debian's chromium.
"""

from __future__ import annotations

import html
import json
import threading
import urllib.parse
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from environments.alfworld.family import AlfWorldEnv, AlfWorldOptions
from environments.alfworld.page import render
from tests.test_webshop_server import _chromium_driver

ENV = AlfWorldEnv()
OPTIONS = AlfWorldOptions(task_type="pick_heat_then_place_in_recep", difficulty="easy",
                          expert_plan=True)  # fmt: skip


class _Buttons(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.values: list[str] = []
        self.texts: dict[str, str] = {}
        self._id: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "button":
            self.values.append(str(found["value"]))
        self._id = found.get("id")

    def handle_endtag(self, tag: str) -> None:
        self._id = None

    def handle_data(self, data: str) -> None:
        if self._id:
            self.texts[self._id] = self.texts.get(self._id, "") + data


def test_the_fragment_shows_the_turn() -> None:
    first = ENV.reset(2, OPTIONS)
    parsed = _Buttons()
    parsed.feed(render(first.observation, first.info))
    assert parsed.values == first.info["admissible_commands"]
    assert parsed.texts["observation"] == first.observation
    assert parsed.texts["task"] == f"Your task is to: {first.info['task']}."
    assert "reward" not in parsed.texts
    step = ENV.step(first.state, "go to the moon")
    page = render(step.observation, step.info, reward=step.score.reward,
                  components=step.score.components, status=step.score.status,
                  detail=step.score.detail)  # fmt: skip
    parsed = _Buttons()
    parsed.feed(page)
    assert parsed.texts["notice"].startswith("Nothing happens.")
    assert parsed.texts["reward"] == "0"
    assert "<tr><td>subgoals</td><td>0</td></tr>" in page


def test_the_fragment_escapes_everything() -> None:
    hostile = "<script>alert(1)</script>\"'&"
    page = render(hostile, {"task": hostile, "admissible_commands": [hostile], "won": False})
    assert "<script>" not in page
    parsed = _Buttons()
    parsed.feed(page)
    assert parsed.values == [hostile]
    assert parsed.texts["observation"] == hostile
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_finished_episode_has_no_buttons() -> None:
    page = render("You move the apple 1 to the fridge 1.",
                  {"admissible_commands": ["look"], "won": True, "steps": 6},
                  reward=1.0, components={"won": 1.0})  # fmt: skip
    assert "<button" not in page and 'data-won="true"' in page
    assert "after 6 steps" in page


class _Playground(BaseHTTPRequestHandler):
    """The minimal playground: a form with the state, around the family's fragment."""

    def _page(self, fragment: str, state: Any) -> None:
        body = (
            "<!doctype html><html><body><form method='post' action='/step'>"
            f"<input type='hidden' name='state' value='{html.escape(json.dumps(state))}'/>"
            f"{fragment}</form></body></html>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        first = ENV.reset(2, OPTIONS)
        self._page(render(first.observation, first.info), first.state)

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        form = urllib.parse.parse_qs(self.rfile.read(length).decode())
        step = ENV.step(json.loads(form["state"][0]), form["action"][0])
        fragment = render(step.observation, step.info, reward=step.score.reward,
                          components=step.score.components, status=step.score.status,
                          detail=step.score.detail,
                          finished=step.terminated or step.truncated)  # fmt: skip
        self._page(fragment, step.state)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def playground() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Playground)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_person_plays_an_episode_in_a_real_browser(playground: str, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    plan = ENV.reset(2, OPTIONS).info["expert_plan"]
    browser = _chromium_driver()
    try:
        browser.get(playground)
        assert "Your task is to:" in browser.find_element(By.ID, "task").text
        for command in plan:
            page = browser.find_element(By.TAG_NAME, "html")
            buttons = browser.find_elements(By.CSS_SELECTOR, "#commands button")
            button = next(b for b in buttons if b.get_attribute("value") == command)
            button.click()
            WebDriverWait(browser, 20).until(expected_conditions.staleness_of(page))
        assert browser.find_element(By.ID, "reward").text == "1"
        assert browser.find_element(By.ID, "alfworld").get_attribute("data-won") == "true"
        assert browser.find_elements(By.CSS_SELECTOR, "#commands button") == []
        assert "won" in browser.find_element(By.ID, "components").text
    finally:
        browser.save_screenshot(str(tmp_path / "alfworld.png"))
        browser.quit()
