"""The WebShop store for people: server-side HTML pages over the same engine as the API.

A person starts from a goal, searches, opens items, chooses options and buys, then sees the
reward and its parts. The episode lives in the same signed state token the API uses, carried in
a hidden form field, so the store keeps nothing either. The engine runs in the thread pool: the
first request loads the catalogue, index and tagger, which must not block the event loop.
"""

from __future__ import annotations

import html
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from pydantic import ValidationError

from environments.base import EnvironmentInputError, EpisodeFinished, StepResult
from envserver.registry import UnknownEnvironment, get_registry
from envserver.tokens import StateTokens, TokenError

router = APIRouter(prefix="/webshop", include_in_schema=False)

ENV_ID = "webshop"
MAX_QUERY_CHARS = 10_000
_STYLE = """
body { font-family: sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
button { margin: 0.2rem; padding: 0.3rem 0.7rem; cursor: pointer; }
.option button { border: 1px solid #888; background: #fff; }
.option.checked button { background: #2a7; color: #fff; }
.product-link button { font-weight: bold; } .visited button { color: #777; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 0.2rem 0.6rem; }
.reward { font-size: 1.6rem; } .error { color: #b00; }
"""


def _layout(title: str, body: str, status_code: int = 200) -> HTMLResponse:
    page = (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h2><a href='/webshop'>WebShop</a></h2>"
        f"{body}</body></html>"
    )
    return HTMLResponse(page, status_code=status_code)


def _error(message: str, status_code: int) -> HTMLResponse:
    body = (
        f"<p class='error' id='error'>{html.escape(message)}</p>"
        "<p><a href='/webshop'>Start a new episode</a></p>"
    )
    return _layout("WebShop: error", body, status_code)


def _env() -> Any:
    return get_registry().env(ENV_ID)


def _tokens(request: Request) -> StateTokens:
    tokens: StateTokens = request.app.state.service.tokens
    return tokens


def _render_episode(env: Any, state: Any, token: str, result: StepResult | None) -> str:
    """The page the state shows, every clickable a submit button of one form."""
    from environments.webshop.engine import EpisodeState  # noqa: PLC0415 - optional family
    from environments.webshop.pages import render_html_body  # noqa: PLC0415

    episode = EpisodeState.from_json(state, env.shop)
    page = env.engine.page(episode)

    def clickable(action: str, inner: str) -> str:
        return f'<button type="submit" name="action" value="{html.escape(action)}">{inner}</button>'

    search_box = (
        '<input id="search_input" type="text" name="query" maxlength="10000" autofocus '
        'placeholder="Search..."/> <button id="search_button" type="submit" name="action" '
        'value="search">Search</button>'
    )
    body = render_html_body(page, clickable, search_box)
    notice = ""
    if result is not None and result.score.status == "invalid":
        notice = f"<p class='error' id='notice'>{html.escape(result.score.detail)}</p>"
    if page.name == "done" and result is not None:
        return notice + _breakdown(result)
    return (
        f"{notice}<form method='post' action='/webshop/step' id='page' data-page='{page.name}'>"
        f"<input type='hidden' name='token' value='{html.escape(token)}'/>{body}</form>"
    )


def _breakdown(result: StepResult) -> str:
    score = result.score
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{value:g}</td></tr>"
        for name, value in score.components.items()
    )
    purchase = result.info.get("purchase") or {}
    reward = "error" if score.reward is None else f"{score.reward:.4f}"
    return (
        "<h3>Thank you for shopping with us!</h3>"
        f"<p>Your score (min 0.0, max 1.0): <span class='reward' id='reward'>{reward}</span></p>"
        f"<p id='detail'>{html.escape(score.detail)}</p>"
        f"<p>Purchased {html.escape(str(purchase.get('asin', '')))} with options "
        f"{html.escape(str(purchase.get('options', {})))}</p>"
        f"<table id='components'><tr><th>part</th><th>value</th></tr>{rows}</table>"
        "<p><a href='/webshop' id='again'>Shop again</a></p>"
    )


@router.get("", response_class=HTMLResponse)
async def landing() -> HTMLResponse:
    """The start page: choose a split and a goal (or a random one)."""
    body = """
<form method="get" action="/webshop/start" id="start">
  <p>Split <select name="split"><option>test</option><option>eval</option><option>train</option>
  <option selected>all</option></select>
  Goal index <input type="number" name="goal_index" min="0" placeholder="random"/>
  <button type="submit" id="start_button">Start shopping</button></p>
</form>
<p>Follow the instruction: search, open items, choose options, and buy. The reward scores your
purchase as the WebShop benchmark does.</p>"""
    return _layout("WebShop", body)


@router.get("/start", response_class=HTMLResponse)
async def start(
    request: Request,
    split: Annotated[str, Query(max_length=10)] = "all",
    goal_index: Annotated[str, Query(max_length=12)] = "",
    seed: Annotated[int | None, Query(ge=0, le=2**63 - 1)] = None,
) -> HTMLResponse:
    """Reset an episode and show its search page."""
    try:
        env = _env()
        options = env.spec.options_model.model_validate(
            {"split": split, "goal_index": int(goal_index) if goal_index.strip() else None}
        )
    except UnknownEnvironment as exc:
        return _error(str(exc), 503)
    except (ValidationError, ValueError) as exc:
        return _error(f"bad start options: {exc}", 400)
    chosen_seed = secrets.randbelow(2**63) if seed is None else seed
    try:
        first = await run_in_threadpool(env.reset, chosen_seed, options)
        token = _tokens(request).issue(ENV_ID, env.spec.version, first.state)
        body = await run_in_threadpool(_render_episode, env, first.state, token, None)
    except EnvironmentInputError as exc:
        return _error(str(exc), 400)
    return _layout("WebShop", body)


@router.post("/step", response_class=HTMLResponse)
async def step(
    request: Request,
    token: Annotated[str, Form(max_length=1_000_000)],
    action: Annotated[str, Form(max_length=MAX_QUERY_CHARS + 20)],
    query: Annotated[str, Form(max_length=MAX_QUERY_CHARS)] = "",
) -> HTMLResponse:
    """Apply one button press (or a search) to the episode in ``token``."""
    try:
        env = _env()
    except UnknownEnvironment as exc:
        return _error(str(exc), 503)
    tokens = _tokens(request)
    try:
        state = tokens.open(token, ENV_ID, env.spec.version)
    except TokenError as exc:
        return _error(
            f"this page's state token is not valid ({exc})", 403 if exc.forbidden else 400
        )
    command = f"search[{query}]" if action == "search" else action
    try:
        result = await run_in_threadpool(env.step, state, command)
        new_token = tokens.issue(ENV_ID, env.spec.version, result.state)
        body = await run_in_threadpool(_render_episode, env, result.state, new_token, result)
    except EpisodeFinished as exc:
        return _error(str(exc), 409)
    except EnvironmentInputError as exc:
        return _error(str(exc), 400)
    except ValueError as exc:  # the state outgrew the token limit (a huge query)
        return _error(f"cannot continue this episode: {exc}", 413)
    return _layout("WebShop", body)
