"""The WebShop store for people: server-side HTML pages over the same engine as the API.

A person starts from a goal, searches, opens items, chooses options and buys, then sees the
reward and its parts. The episode lives in the same signed state token the API uses, carried in
a hidden form field, so the store keeps nothing either. Resets and steps go through the service,
as API calls do, and pages are rendered in a worker (``environments.webshop.store``): the server
process never loads the catalogue, the index or the tagger.
"""

from __future__ import annotations

import html
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse

from envserver.executor import Call, Overloaded, PoolUnavailable
from envserver.limits import LimitedRoute
from envserver.problems import Problem
from envserver.service import Service
from envserver.wire import MAX_TOKEN_CHARS, ResetRequest, StepRequest, StepResponse

router = APIRouter(prefix="/webshop", include_in_schema=False, route_class=LimitedRoute)

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


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


async def _page(service: Service, token: str, step: StepResponse | None) -> HTMLResponse:
    """The page of the episode in ``token``, rendered in a worker (where the engine lives)."""
    env = service.env(ENV_ID)
    state = service.tokens.open(token, env.spec.id, env.spec.version)
    answer = None if step is None else step.model_dump(include=_STEP_FIELDS)
    from environments.webshop.store import store_body  # noqa: PLC0415 - an optional family

    try:
        outcomes = await service.executor.run(
            [Call(store_body, (state, token, answer), env.spec.timeout_s)]
        )
    except (Overloaded, PoolUnavailable) as exc:
        return _error(f"the server is busy ({exc}); retry later", 429)
    outcome = outcomes[0]
    if outcome.value is None:
        return _error(f"the page could not be rendered: {outcome.detail}", 503)
    return _layout("WebShop", outcome.value)


_STEP_FIELDS = {"status", "detail", "reward", "components", "info"}


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
    """Reset an episode through the service and show its search page."""
    service = _service(request)
    try:
        index = int(goal_index) if goal_index.strip() else None
    except ValueError:
        return _error(f"goal index {goal_index!r} is not a number", 400)
    options: dict[str, Any] = {"split": split, "goal_index": index}
    chosen_seed = secrets.randbelow(2**63) if seed is None else seed
    try:
        reply = await service.reset(
            ENV_ID, [ResetRequest(seed=chosen_seed, options=options)], batch=False
        )
        if reply[0].state is None:
            return _error(f"the episode could not start: {reply[0].detail}", 503)
        return await _page(service, reply[0].state, None)
    except Problem as exc:
        return _error(exc.detail, 503 if exc.status == 404 else exc.status)


@router.post("/step", response_class=HTMLResponse)
async def step(
    request: Request,
    token: Annotated[str, Form(max_length=MAX_TOKEN_CHARS)],
    action: Annotated[str, Form(max_length=MAX_QUERY_CHARS + 20)],
    query: Annotated[str, Form(max_length=MAX_QUERY_CHARS)] = "",
) -> HTMLResponse:
    """Apply one button press (or a search) to the episode in ``token``."""
    service = _service(request)
    command = f"search[{query}]" if action == "search" else action
    try:
        reply = (
            await service.step(ENV_ID, [StepRequest(state=token, action=command)], batch=False)
        )[0]
        if reply.state is None or reply.status in ("timeout", "error"):
            return _error(f"the step could not be scored: {reply.detail}", 503)
        return await _page(service, reply.state, reply)
    except Problem as exc:
        return _error(exc.detail, 503 if exc.status == 404 else exc.status)
