"""The playground (``/play``): every environment as pages a person plays, over HTTP and in a real
browser (Debian's chromium through its chromedriver, headless).

One server serves the small test shop, the test plugins (a family with its own renderer, a
family whose dependency is missing, misbehaving verifiers), every built-in family and the evo
family's admitted environments.
"""

from __future__ import annotations

import re
import shutil
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import pytest

from envserver.registry import discover
from envserver.wire import MAX_ACTION_CHARS
from tests.conftest import make_server
from tests.server import LiveServer
from tests.webshop_support import server_env, small_config, small_env

PLUGINS = "tests.plugins.faulty,tests.plugins.needs_missing,tests.plugins.drawn"
DISABLED = "test.needs_missing"
PAGE_WAIT_S = 120  # a page waits for a step and a renderer in the pool, on a busy machine


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    small_env().shop.index  # noqa: B018 - build the index once, here, for both processes
    env = {**server_env(small_config()), "ENVSERVER_PLUGINS": PLUGINS}
    live = make_server(tmp_path_factory.mktemp("playground"), **env)
    live.start(timeout_s=300)  # a shared machine starts slowly
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="module")
def http(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        yield client


def hidden(page: str, name: str) -> str:
    """The value of the page's first hidden field ``name``."""
    match = re.search(rf'<input type="hidden" name="{name}" value="([^"]*)"', page)
    assert match, page
    return unescape(match.group(1))


def fields(page: str) -> dict[str, str]:
    """The hidden fields every action of an episode's page sends (a single-turn page's prompt
    too)."""
    names = ("state", "task_id", "history", "prompt")
    return {name: hidden(page, name) for name in names if f'name="{name}"' in page}


def start(http: httpx.Client, env_id: str, **form: str) -> httpx.Response:
    reply = http.post(f"/play/{env_id}/reset", data=form)
    assert reply.status_code == 200, reply.text
    return reply


def act(http: httpx.Client, env_id: str, page: str, action: str) -> httpx.Response:
    return http.post(f"/play/{env_id}/step", data={**fields(page), "action": action})


def send(
    http: httpx.Client, env_id: str, page: str, text: str, compose: str = "{}"
) -> httpx.Response:
    data = {**fields(page), "compose": compose, "text": text}
    return http.post(f"/play/{env_id}/step", data=data)


def expert(env_id: str, seed: int, **options: Any) -> str:
    """The answer a perfect agent gives for the task ``(seed, options)`` names."""
    env = discover().env(env_id)
    state = env.reset(seed, env.spec.options_model.model_validate(options)).state
    return env.expert_action(state)


def error_detail(reply: httpx.Response) -> str:
    assert reply.headers["content-type"].startswith("text/html"), reply.headers
    match = re.search(r'<p class="error" id="error">(.*?)</p>', reply.text, re.DOTALL)
    assert match, reply.text
    return unescape(match.group(1))


# --- pages over HTTP -------------------------------------------------------------------------


def test_the_index_lists_every_served_environment_and_the_disabled_families(
    http: httpx.Client,
) -> None:
    page = http.get("/play")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    served = set(re.findall(r'data-env="([^"]+)"', page.text))
    catalogue = {env["id"] for env in http.get("/v1/envs").json()["envs"]}
    assert served == catalogue and {"math", "code", "webshop", "test.counter"} <= served
    assert DISABLED in page.text and "missing optional dependency" in page.text


def test_the_options_form_has_a_control_for_every_kind_of_option(http: httpx.Client) -> None:
    page = http.get("/play/test.counter").text
    assert re.search(
        r'<input type="number" name="option.target" [^>]*value="3" step="1" min="1" max="50"', page
    )
    assert '<select name="option.shape"' in page and '<option value="circle" selected>' in page
    assert re.search(r'<input type="checkbox" name="option.filled" [^>]*checked', page)
    assert re.search(r'name="option.scale" [^>]*step="any"[^>]*placeholder="unset"', page)
    assert re.search(
        r'<input type="text" name="option.label" [^>]*value="count" maxlength="40"', page
    )
    assert re.search(r'<textarea name="option.note" [^>]*maxlength="2000"', page)
    assert re.search(
        r"<textarea name=\"option.weights\"[^>]*></textarea>\s*<p class=\"help\">As JSON", page
    )
    assert "The count that ends the episode." in page  # descriptions are the help texts


def test_a_multi_turn_episode_with_attempts_ends_with_the_reward(http: httpx.Client) -> None:
    options = {"difficulty": "easy", "max_attempts": 2}
    page = start(http, "math", seed="7", **{f"option.{k}": str(v) for k, v in options.items()})
    assert hidden(page.text, "task_id") == "math@1/7?difficulty=easy&max_attempts=2"
    assert "Put your final answer within" in page.text
    wrong = send(http, "math", page.text, "\\boxed{-123456}")
    assert wrong.status_code == 200 and re.search(r'id="reward">0<', wrong.text)
    assert "Attempt 1 of 2 was not accepted" in wrong.text and 'id="finished"' not in wrong.text
    right = send(http, "math", wrong.text, f"so {expert('math', 7, **options)}")
    assert 'id="finished"' in right.text
    assert re.search(r'id="final-reward">1<', right.text)
    assert re.search(r'<ol id="history">\s*<li value="1">.*<li value="2">', right.text, re.DOTALL)
    again = send(http, "math", right.text, "\\boxed{1}")  # the ended episode's token
    assert again.status_code == 409 and "ended" in error_detail(again)


def test_a_task_id_starts_the_same_task_and_a_bad_one_is_shown_in_the_form(
    http: httpx.Client,
) -> None:
    by_seed = start(http, "math", seed="11", **{"option.difficulty": "hard"})
    by_id = start(http, "math", task_id="math@1/11?difficulty=hard")
    prompt = re.compile(r'<pre class="observation" id="prompt-text">(.*?)</pre>', re.DOTALL)
    assert prompt.findall(by_seed.text) == prompt.findall(by_id.text) != []
    for bad, status in (("math@1/x", 400), ("math@9/1", 404), ("code@1/1", 400)):
        reply = http.post("/play/math/reset", data={"task_id": bad})
        assert reply.status_code == status, (bad, reply.text)
        assert 'data-error="task_id"' in reply.text and f'value="{bad}"' in reply.text


def test_option_errors_are_shown_next_to_their_fields(http: httpx.Client) -> None:
    reply = http.post(
        "/play/test.counter/reset",
        data={
            "option.target": "0",
            "option.label": "x" * 41,
            "option.weights": "[1,",
            "seed": "-1",
        },
    )
    assert reply.status_code == 422
    # The form's own parsing finds the bad JSON and seed first; the model then the bounds.
    assert re.search(r'data-error="weights">not valid JSON', reply.text)
    assert 'data-error="seed"' in reply.text
    reply = http.post(
        "/play/test.counter/reset", data={"option.target": "0", "option.label": "x" * 41}
    )
    assert reply.status_code == 422
    assert re.search(r'data-error="target">Input should be greater than or equal to 1', reply.text)
    assert re.search(r'data-error="label">String should have at most 40 characters', reply.text)
    assert 'value="0"' in reply.text  # what was typed stays in the form
    cross = http.post("/play/code/reset", data={"option.language": "cpp", "option.format": "call"})
    assert cross.status_code == 422 and "language &#39;cpp&#39; needs format" in cross.text
    unknown = http.post("/play/math/reset", data={"option.surprise": "1"})
    assert unknown.status_code == 422 and "surprise: Extra inputs are not permitted" in unknown.text
    assert http.post("/play/math/reset", data={"option.max_attempts": "two"}).status_code == 422


def test_the_family_renderer_draws_the_episode(http: httpx.Client) -> None:
    hostile = "<script>alert(1)</script>"
    page = start(
        http,
        "test.counter",
        seed="1",
        **{"option.target": "4", "option.label": hostile, "option.note": f"a & b {hostile}"},
    )
    assert '<svg id="diagram"' in page.text and 'id="plus-one"' in page.text
    assert "<script>" not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    page = act(http, "test.counter", page.text, "add 1")
    assert 'data-count="1"' in page.text and page.text.count("<circle") == 1
    page = send(http, "test.counter", page.text, "3", compose="add {}")
    assert 'data-count="4"' in page.text and 'id="finished"' in page.text
    assert re.search(r"<td>exact</td><td>1</td>", page.text)


def test_chat_observations_show_each_message(http: httpx.Client) -> None:
    page = start(http, "sva/generated", seed="4")
    roles = re.findall(r'<div class="message"><div class="role">(\w+)</div>', page.text)
    assert roles and roles[-1] == "user", page.text[:2000]


def test_a_renderer_that_fails_leaves_the_plain_observation(http: httpx.Client) -> None:
    page = start(http, "test.counter", seed="1", **{"option.target": "40"})
    broken = send(http, "test.counter", page.text, "13", compose="add {}")
    assert broken.status_code == 200 and 'id="view-failure"' in broken.text
    assert "count 13 of 40" in broken.text  # the plain view instead
    # The renderer draws in the step's own call: one past its time costs the step (a notice,
    # nothing changed, the action kept to send again), never a page that hangs.
    slow = send(http, "test.counter", page.text, "14", compose="add {}")
    assert slow.status_code == 200 and "could not be scored (timeout)" in slow.text
    assert "count 14 of 40" not in slow.text and ">add 14</textarea>" in slow.text


def test_errors_are_pages_with_the_problems_detail(http: httpx.Client) -> None:
    page = start(http, "math", seed="1")
    token = hidden(page.text, "state")
    head, _, tail = token.rpartition(".")
    forged = f"{head}.{'A' if tail[0] != 'A' else 'B'}{tail[1:]}"
    cases = [
        (http.get("/play/no-such-env"), 404, "unknown environment"),
        (http.post("/play/math", data={"state": token}), 405, "takes no form"),
        (http.get(f"/play/{DISABLED}"), 503, "missing optional dependency"),
        (http.post(f"/play/{DISABLED}/step", data={"state": "x"}), 503, "not served"),
        (http.post("/play/math/step", data={"action": "x"}), 400, "no state token"),
        (http.post("/play/math/step", data={"state": token}), 400, "no action"),
        (
            http.post("/play/math/step", data={"state": token, "compose": "x", "text": "y"}),
            400,
            "'{}'",
        ),
        (http.post("/play/math/step", data={"state": forged, "action": "1"}), 403, "signature"),
        (http.post("/play/math/step", data={"state": "garbage", "action": "1"}), 400, "token"),
        (http.post("/play/code/step", data={"state": token, "action": "1"}), 403, "math"),
    ]
    for reply, status, words in cases:
        assert reply.status_code == status, (words, reply.status_code, reply.text[:300])
        assert words in error_detail(reply), (words, error_detail(reply))


def test_hostile_forms_get_error_pages(http: httpx.Client) -> None:
    page = start(http, "math", seed="1")
    token = hidden(page.text, "state")
    huge = http.post(
        "/play/math/step", data={"state": token, "action": "a" * (MAX_ACTION_CHARS + 1)}
    )
    assert huge.status_code == 413 and "limit" in error_detail(huge)
    long_id = http.post("/play/math/reset", data={"task_id": "m" * 2000})
    assert long_id.status_code == 413 and "task_id" in error_detail(long_id)
    many = http.post("/play/math/reset", data={f"option.x{i}": "1" for i in range(1200)})
    assert many.status_code == 400 and "fields" in error_detail(many)
    upload = http.post("/play/math/step", data={"state": token}, files={"action": ("a.txt", b"1")})
    assert upload.status_code == 400, upload.text
    for path in ("/play/math/step", "/play/math/reset"):  # JSON is the API's, as the README says
        as_json = http.post(path, json={"state": token, "action": "1", "seed": 1})
        assert as_json.status_code == 400 and "HTML forms" in error_detail(as_json), path
    untyped = http.post("/play/math/reset", content=b"seed=1")
    assert untyped.status_code == 400 and "untyped" in error_detail(untyped)
    seed = http.post("/play/math/reset", data={"seed": "9" * 30})
    assert seed.status_code == 422 and 'data-error="seed"' in seed.text
    edited = http.post(
        "/play/math/step",
        data={
            "state": token,
            "action": "\\boxed{1}",
            "history": '[["<b>", 1]]',
            "task_id": "<i>x</i>",
        },
    )
    assert (
        edited.status_code == 200
        and "&lt;i&gt;x&lt;/i&gt;" in edited.text
        and "<i>x" not in edited.text
    )


def test_a_reload_of_an_episode_page_goes_back_to_its_start(http: httpx.Client) -> None:
    for path in ("/play/math/step", "/play/opt/tsp/reset"):
        reply = http.get(path)
        assert reply.status_code == 303 and reply.headers["location"] == path.rsplit("/", 1)[0]
    moved = http.get("/webshop")
    assert moved.status_code == 307 and moved.headers["location"] == "/play/webshop"
    assert http.get("/no-such-page").status_code == 404


def test_the_store_plays_an_episode_to_its_reward(http: httpx.Client) -> None:
    env = small_env()
    page = start(http, "webshop", seed="0", **{"option.split": "test", "option.goal_index": "11"})
    assert 'id="search"' in page.text and 'name="compose" value="search[{}]"' in page.text
    state = env.reset(0, env.spec.options_model(split="test", goal_index=11)).state
    for _ in range(20):
        action = env.expert_action(state)
        if action.startswith("search["):
            # What a form sends without a submitter (Enter, a script's form.submit()).
            reply = send(http, "webshop", page.text, action[7:-1], compose="search[{}]")
        else:
            reply = act(http, "webshop", page.text, action)
        assert reply.status_code == 200, reply.text
        state = env.step(state, action).state
        page = reply
        if state["page"] == "done":
            break
    assert 'id="purchase"' in page.text and env.shop.goals[state["goal_index"]]["asin"] in page.text
    assert re.search(r'id="final-reward">1<', page.text)
    for part in ("r_att", "r_option", "r_price", "r_type"):
        assert f"<td>{part}</td>" in page.text


def test_the_stores_bad_clicks_and_empty_searches_are_notices(http: httpx.Client) -> None:
    page = start(http, "webshop", seed="3")
    unknown = act(http, "webshop", page.text, "click[nope]")
    assert unknown.status_code == 200 and 'id="notice"' in unknown.text
    empty = send(http, "webshop", page.text, "", compose="search[{}]")
    assert empty.status_code == 200 and 'id="notice"' in empty.text
    big = send(http, "webshop", page.text, "lamp " * 2000, compose="search[{}]")
    assert big.status_code == 200 and 'data-page="results"' in big.text


def component(page: str, name: str) -> str:
    """A value of the page's components table (what the API returned)."""
    match = re.search(rf"<tr><td>{name}</td><td>([^<]*)</td></tr>", page)
    assert match, page
    return match.group(1)


def evo_ids(http: httpx.Client) -> list[str]:
    """The evo family's admitted environments, once the server has planted its seeds."""
    deadline = time.monotonic() + PAGE_WAIT_S
    while time.monotonic() < deadline:
        envs = http.get("/v1/evo/envs")
        if envs.status_code == 200 and envs.json():
            return sorted(env["id"] for env in envs.json())
        time.sleep(1)
    raise AssertionError("no evo environment admitted")


def test_a_page_costs_one_pool_call(http: httpx.Client) -> None:
    # The renderer draws in the step's own call: no second call to open the token it issued.
    def calls() -> float:
        counts = re.findall(
            r"^envserver_item_seconds_count\{[^}]*\} (\S+)$", http.get("/metrics").text, re.M
        )
        return sum(float(count) for count in counts)

    page = start(http, "test.counter", seed="1", **{"option.target": "5"})
    before = calls()
    page = act(http, "test.counter", page.text, "add 1")
    assert 'data-count="1"' in page.text and '<svg id="diagram"' in page.text
    assert calls() == before + 1
    assert 'kind="render"' not in http.get("/metrics").text


def test_a_single_turn_page_keeps_the_prompt_the_answer_and_the_verdict(
    http: httpx.Client,
) -> None:
    page = start(http, "math", seed="3")
    question = re.search(r'id="prompt-text">(.*?)</pre>', page.text, re.DOTALL)
    assert question and "Put your final answer within" in unescape(question.group(1))
    hostile = "<script>alert(1)</script> \\boxed{-77777}"
    answered = send(http, "math", page.text, hostile)
    assert answered.status_code == 200 and 'id="finished"' in answered.text
    kept = re.search(r'id="prompt-text">(.*?)</pre>', answered.text, re.DOTALL)
    assert kept and kept.group(1) == question.group(1)  # the prompt stays
    answer = re.search(r'<pre id="answer">(.*?)</pre>', answered.text, re.DOTALL)
    assert answer and unescape(answer.group(1)) == hostile and "<script>" not in answered.text
    assert re.search(r'id="status" class="status-ok">ok<', answered.text)
    assert re.search(r'id="final-reward">0<', answered.text) and 'id="detail"' in answered.text
    # The prompt the page carries back is shown, never obeyed: an edited one is text too.
    edited = http.post(
        "/play/math/step",
        data={**fields(page.text), "action": "\\boxed{1}", "prompt": '"<b>bold</b>"'},
    )
    assert "&lt;b&gt;bold&lt;/b&gt;" in edited.text and "<b>bold" not in edited.text
    broken = http.post(
        "/play/math/step", data={**fields(page.text), "action": "1", "prompt": "{not json"}
    )
    assert broken.status_code == 200 and 'id="prompt-text"' not in broken.text


def test_an_opt_answer_gets_a_verdict_in_words(http: httpx.Client) -> None:
    page = start(http, "opt/knapsack", seed="3", **{"option.level": "easy"})
    cases = {
        "Answer: [0, 0]": ("infeasible", "none", "infeasible: "),
        "I do not know": ("unreadable", "none", ""),
        "Answer: [0]": ("feasible", "", "feasible; objective"),
        expert("opt/knapsack", 3, level="easy"): ("optimal", "", "feasible; objective"),
    }
    for answer, (verdict, value, why) in cases.items():
        reply = send(http, "opt/knapsack", page.text, answer)
        assert reply.status_code == 200, reply.text
        assert f'data-verdict="{verdict}"' in reply.text, (answer, reply.text[-3000:])
        reference = re.search(r'id="reference-value">([^<]*)<', reply.text)
        assert reference and reference.group(1).startswith(component(reply.text, "reference"))
        proven = component(reply.text, "optimal") == "1"
        assert ("(proven optimal)" in reference.group(1)) == proven
        shown = re.search(r'id="answer-value">([^<]*)<', reply.text)
        assert shown and shown.group(1) == (value or component(reply.text, "objective"))
        assert why in reply.text
    # The longest answer allowed is shown whole, once, and read as any other.
    huge = "<i>" * 1000 + "x" * (MAX_ACTION_CHARS - 3020) + " Answer: [0]"
    reply = send(http, "opt/knapsack", page.text, huge)
    assert reply.status_code == 200 and 'data-verdict="feasible"' in reply.text
    assert reply.text.count("&lt;i&gt;" * 1000 + "x" * 1000) == 1 and "<i>" not in reply.text


def test_an_sbol_answer_is_drawn_as_its_circuit(http: httpx.Client) -> None:
    pytest.importorskip("sbol3")
    page = start(http, "sbol/design", seed="2")
    drawn = send(http, "sbol/design", page.text, expert("sbol/design", 2))
    figure = re.search(r'<figure id="circuit">\s*(<svg.*?</svg>)', drawn.text, re.DOTALL)
    assert figure, drawn.text[-3000:]
    svg = ET.fromstring(figure.group(1))
    glyphs = [g.get("class") for g in svg.iter("{http://www.w3.org/2000/svg}g")]
    assert {"part promoter", "part CDS", "part terminator"} <= set(glyphs)
    assert re.search(r'id="final-reward">1<', drawn.text)
    nothing = send(http, "sbol/design", page.text, "```python\nraise SystemExit(1)\n```")
    assert 'id="no-circuit"' in nothing.text and "<svg" not in nothing.text


def test_admitted_evo_environments_are_listed_and_played(http: httpx.Client) -> None:
    admitted = evo_ids(http)
    index = http.get("/play").text
    listed = set(re.findall(r'data-env="(evo/[^"]+)"', index))
    assert set(admitted) <= listed
    page = start(http, admitted[0], seed="5")
    assert f"{admitted[0]}@" in hidden(page.text, "task_id")
    assert re.search(r'id="prompt-text">\S', page.text)


def test_listed_actions_are_buttons_by_the_familys_renderer(http: httpx.Client) -> None:
    reply = http.post("/play/tamarin/proof/reset", data={"seed": "0"})
    if reply.status_code != 200:
        pytest.skip(f"tamarin/proof has nothing to serve here: {error_detail(reply)}")
    listed = http.post(
        "/v1/envs/tamarin/proof/reset", json={"task_id": hidden(reply.text, "task_id")}
    ).json()["info"]["valid_actions"]
    buttons = re.findall(
        r'<button type="submit" form="play-act" name="action" value="([^"]*)"', reply.text
    )
    assert buttons == listed != []


def test_every_page_has_the_sites_icon(http: httpx.Client) -> None:
    icon = http.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
    assert ET.fromstring(icon.content).tag == "{http://www.w3.org/2000/svg}svg"
    for path in ("/play", "/play/math", "/play/no-such-env"):
        assert '<link rel="icon" href="/favicon.ico"' in http.get(path).text, path


# --- in a real browser -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (binary and driver):
        pytest.skip("Debian's chromium and chromium-driver are not installed (make setup)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    chrome.implicitly_wait(10)  # element look-ups wait for a slow page instead of failing
    yield chrome
    chrome.quit()


class Person:
    """What a person does in the browser: open pages, fill fields, press buttons and keys."""

    def __init__(self, browser: Any, base_url: str, shots: Path) -> None:
        from selenium.webdriver.common.by import By

        self.browser, self.base_url, self.shots, self.by = browser, base_url, shots, By

    def open(self, path: str) -> None:
        self.browser.get(self.base_url + path)

    def find(self, css: str) -> Any:
        return self.browser.find_element(self.by.CSS_SELECTOR, css)

    def text(self, css: str) -> str:
        return str(self.find(css).text)

    def has(self, css: str) -> bool:
        self.browser.implicitly_wait(0)
        try:
            return bool(self.browser.find_elements(self.by.CSS_SELECTOR, css))
        finally:
            self.browser.implicitly_wait(10)

    def choose(self, name: str, value: str) -> None:
        from selenium.webdriver.support.ui import Select

        Select(self.find(f'[name="{name}"]')).select_by_value(value)

    def type(self, css: str, text: str, clear: bool = True) -> None:
        box = self.find(css)
        if clear:
            box.clear()
        box.send_keys(text)

    def press(
        self, css: str | None = None, key: str | None = None, element: Any = None, script: str = ""
    ) -> None:
        """Click ``css`` or ``element`` (or press ``key`` in it, or run ``script``) and wait for
        the next page."""
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.support.ui import WebDriverWait

        page = self.browser.find_element(self.by.TAG_NAME, "html")

        def replaced(_: Any) -> bool:
            # Chromium reports an element of a page it has left either as stale or, while the
            # new document is being attached, as "Node ... does not belong to the document".
            try:
                page.is_enabled()
            except WebDriverException:
                return True
            return False

        if script:
            self.browser.execute_script(script)
        else:
            target = element if element is not None else self.find(css or "")
            if key is None:
                target.click()
            else:
                target.send_keys(key)
        WebDriverWait(self.browser, PAGE_WAIT_S).until(replaced)

    def shot(self, name: str) -> None:
        self.browser.save_screenshot(str(self.shots / f"{name}.png"))


@pytest.fixture
def person(browser: Any, server: LiveServer, tmp_path: Path) -> Iterator[Person]:
    someone = Person(browser, server.base_url, tmp_path)
    try:
        yield someone
    finally:
        someone.shot("last")


def test_browser_math_two_attempts_then_the_reward(person: Person) -> None:
    person.open("/play")
    person.press('a[data-env="math"]')
    person.choose("option.difficulty", "easy")
    person.type('[name="option.max_attempts"]', "2")
    person.type("#seed", "5")
    person.press("#start")
    assert person.text("#task-id") == "math@1/5?difficulty=easy&max_attempts=2"
    person.type("#action", "I think \\boxed{-99999}")
    person.press("#action-button")
    assert "Attempt 1 of 2" in person.text("#observation-text")
    assert person.text("#status") == "ok" and person.text("#reward") == "0"
    person.type("#action", expert("math", 5, difficulty="easy", max_attempts=2))
    person.press("#action-button")
    assert person.text("#final-reward") == "1"
    assert not person.has("#action")  # nothing more to send
    person.press("#replay")  # the same task again, by its id
    assert person.text("#task-id") == "math@1/5?difficulty=easy&max_attempts=2"


def test_browser_code_and_opt_answers_are_scored(person: Person) -> None:
    for env_id, level in (
        ("code", ("option.difficulty", "easy")),
        ("opt/knapsack", ("option.level", "easy")),
    ):
        person.open(f"/play/{env_id}")
        person.choose(*level)
        person.type("#seed", "3")
        person.press("#start")
        options = {level[0].removeprefix("option."): level[1]}
        person.type("#action", expert(env_id, 3, **options))
        person.press("#action-button")
        assert person.text("#final-reward") == "1", person.text("#turn")
        assert person.has("#components")


def test_browser_option_errors_show_inline(person: Person) -> None:
    person.open("/play/code")
    person.choose("option.language", "cpp")
    person.choose("option.format", "call")
    person.press("#start")
    assert "needs format 'stdin'" in person.text("#options-error")
    assert person.find('[name="option.language"]').get_attribute("value") == "cpp"


def test_browser_store_enter_searches_and_the_reward_shows(person: Person) -> None:
    env = small_env()
    state = env.reset(0, env.spec.options_model(split="test", goal_index=11)).state
    person.open("/webshop")  # the old address leads to the playground
    person.choose("option.split", "test")
    person.type('[name="option.goal_index"]', "11")
    person.type("#seed", "0")
    person.press("#start")
    from selenium.webdriver.common.keys import Keys

    query = "shoes and shirts"
    person.type("#search", query)
    person.press("#search", key=Keys.ENTER)
    state = env.step(state, f"search[{query}]").state
    assert person.find("#store").get_attribute("data-page") == "results"
    first = person.find("#store .product-link button")
    asin = first.text
    person.press(element=first)
    state = env.step(state, f"click[{asin.lower()}]").state
    assert person.find("#store").get_attribute("data-page") == "item"
    options = person.browser.find_elements(person.by.CSS_SELECTOR, "#store .option button")
    if options:
        value = options[0].text
        person.press(element=options[0])
        state = env.step(state, f"click[{value}]").state
        assert person.text("#store .option.checked button") == value
    person.press(element=person.browser.find_element(person.by.XPATH, "//button[text()='Buy Now']"))
    expected = env.step(state, "click[buy now]")
    assert expected.score.reward is not None
    assert float(person.text("#final-reward")) == pytest.approx(expected.score.reward, abs=1e-5)
    assert person.text("#components").count("r_") >= 3
    assert asin in person.text("#purchase")


def test_browser_search_submitted_without_its_button(person: Person) -> None:
    # The old store answered a raw JSON 422 ("body.action: Field required") when the search
    # form was submitted without its button as the submitter (a script's form.submit(), some
    # browsers' Enter); the text box's form now carries its action itself.
    person.open("/play/webshop")
    person.press("#start")
    person.type("#search", "lamp")
    person.press(script="document.getElementById('search-form').submit()")
    assert person.find("#store").get_attribute("data-page") == "results"


def test_browser_renderer_buttons_and_enter(person: Person) -> None:
    from selenium.webdriver.common.keys import Keys

    person.open("/play/test.counter")
    person.type('[name="option.target"]', "3")
    person.choose("option.shape", "square")
    person.press("#start")
    person.press("#plus-one")
    assert person.find("#counter").get_attribute("data-count") == "1"
    assert len(person.browser.find_elements(person.by.CSS_SELECTOR, "#diagram rect")) == 1
    person.type("#amount", "2")
    person.press("#amount", key=Keys.ENTER)
    assert person.text("#final-reward") == "1"


def test_browser_alfworld_by_its_buttons_to_won(person: Person, http: httpx.Client) -> None:
    options = {"task_type": "pick_heat_then_place_in_recep", "difficulty": "easy"}
    reset = http.post(
        "/v1/envs/alfworld/reset", json={"seed": 4, "options": {**options, "expert_plan": True}}
    )
    plan = reset.json()["info"]["expert_plan"]
    person.open("/alfworld")  # the short link of a one-word id
    person.choose("option.task_type", options["task_type"])
    person.choose("option.difficulty", options["difficulty"])
    person.type("#seed", "4")
    person.press("#start")
    assert person.text("#task") == f"Your task is to: {reset.json()['info']['task']}."
    person.type("#command", "LOOK")  # commands are case-sensitive: nothing happens
    person.press("#command-button")
    assert person.text("#alfworld-observation") == "Nothing happens."
    for command in plan:
        person.press(element=person.find(f'#commands button[value="{command}"]'))
    assert person.find("#alfworld").get_attribute("data-won") == "true"
    assert person.text("#final-reward") == "1"
    assert not person.has("#commands")


def test_browser_hostile_input_stays_text(person: Person) -> None:
    hostile = "<img src=x onerror=\"document.title='owned'\">"
    person.open("/play/math")
    person.type("#seed", "2")
    person.press("#start")
    person.type("#action", hostile)
    person.press("#action-button")
    assert person.browser.title != "owned"
    assert hostile in person.text("#history")
    assert not person.has("#history img")


def test_browser_error_pages(person: Person) -> None:
    person.open("/play/no-such-env")
    assert person.text("#error-title") == "404 Not Found"
    assert "unknown environment" in person.text("#error")
    person.open("/play/math")
    person.press("#start")
    person.browser.execute_script(
        "for (const f of document.querySelectorAll('input[name=state]')) f.value += 'x'"
    )
    person.type("#action", "\\boxed{1}")
    person.press("#action-button")
    assert person.text("#error-title").startswith(("400", "403"))
    assert "token" in person.text("#error")
    person.press("#again")  # back to a new episode of the same environment
    assert person.has("#options")


def test_browser_tamarin_proof_by_its_methods(person: Person) -> None:
    # Served when a Tamarin binary or recorded runs are configured (ENVSERVER_TAMARIN_*).
    person.open("/play/tamarin/proof")
    person.type("#seed", "0")
    person.press("#start")
    if person.has("#error"):
        pytest.skip(f"tamarin/proof has nothing to serve here: {person.text('#error')}")
    steps = 0
    while not person.has("#finished") and steps < 300:
        person.press('#actions button[value="1"]')  # Tamarin's own first-ranked method
        steps += 1
    assert person.text("#final-reward") == "1", person.text("#turn")
    assert int(person.find("#history li:last-child").get_attribute("value")) == steps


def test_browser_a_single_turn_answer_keeps_its_question(person: Person) -> None:
    person.open("/play/math")
    person.type("#seed", "8")
    person.press("#start")
    question = person.text("#prompt-text")
    assert "Put your final answer within" in question
    hostile = "<img src=x onerror=\"document.title='owned'\"> \\boxed{-31337}"
    person.type("#action", hostile)
    person.press("#action-button")
    assert person.text("#prompt-text") == question  # not an empty card
    assert person.text("#answer") == hostile and person.browser.title != "owned"
    assert person.text("#final-reward") == "0" and person.text("#status") == "ok"
    assert person.text("#detail")


def test_browser_opt_verdict_reads_as_words(person: Person) -> None:
    person.open("/play/opt/knapsack")
    person.choose("option.level", "easy")
    person.type("#seed", "4")
    person.press("#start")
    person.type("#action", "Answer: [0, 0]")
    person.press("#action-button")
    assert person.text("#verdict-word").startswith("Infeasible")
    reference = person.text("#reference-value")
    assert re.fullmatch(r"[\d.]+ \((proven optimal|best known, not proven optimal)\)", reference)
    assert person.text("#answer-value") == "none" and "infeasible" in person.text("#why")


def test_browser_sbol_answer_drawn(person: Person) -> None:
    pytest.importorskip("sbol3")
    person.open("/play/sbol/repair")
    person.type("#seed", "1")
    person.press("#start")
    person.type("#action", expert("sbol/repair", 1))
    person.press("#action-button")
    assert person.text("#final-reward") == "1"
    diagram = person.find("#circuit svg")
    assert diagram.size["width"] > 100 and diagram.size["height"] > 100
    assert person.browser.find_elements(person.by.CSS_SELECTOR, "#circuit svg g.part.CDS")


def test_browser_evo_environment_from_the_index(person: Person, http: httpx.Client) -> None:
    admitted = evo_ids(http)
    person.open("/play")
    person.press(f'a[data-env="{admitted[-1]}"]')
    person.type("#seed", "2")
    person.press("#start")
    assert person.text("#task-id").startswith(f"{admitted[-1]}@")
    assert person.text("#prompt-text")


def test_browser_json_to_a_page_is_a_400_page_and_the_icon_loads(person: Person) -> None:
    person.open("/play/math")
    posted = person.browser.execute_async_script(
        """const done = arguments[arguments.length - 1];
        fetch('/play/math/reset', {method: 'POST', headers: {'content-type': 'application/json'},
                                   body: '{"seed": 1}'})
          .then(r => r.text().then(t => done([r.status, r.headers.get('content-type'), t])));"""
    )
    status, kind, page = posted
    assert status == 400 and kind.startswith("text/html") and "HTML forms" in page
    width = person.browser.execute_async_script(
        """const done = arguments[arguments.length - 1];
        const icon = new Image();
        icon.onload = () => done(icon.naturalWidth);
        icon.onerror = () => done(0);
        icon.src = document.querySelector('link[rel=icon]').href;"""
    )
    assert width > 0
