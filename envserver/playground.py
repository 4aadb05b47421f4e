"""The playground: every environment of the catalogue as web pages a person can play.

``/play`` lists the environments; ``/play/<env id>`` shows one's options as a form (generated
from its options JSON Schema); a reset or a step answers with the episode's page. Resets and
steps go through ``Service`` as API calls do, so a page gets the same limits, metrics, deadline
and errors. The episode lives in the state token, carried in the page's hidden fields with the
task id, a short history and (for a single-turn task) the prompt, so the server keeps nothing
between pages.

A family may show its episodes its own way through a renderer (``environments.renderer``),
drawn in the worker call of the reset or step itself; without one the page shows the
observation as text (or chat messages). A single-turn page keeps the prompt, the answer and the
verdict once answered. Every error is a page with the problem's detail; pages are Jinja2
templates with autoescape on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

import jinja2
from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from environments.base import Observation
from environments.renderer import Turn
from environments.task_id import MAX_SEED, MAX_TASK_ID_LENGTH
from envserver.catalogue import served_now
from envserver.limits import LimitedRoute
from envserver.options_form import FIELD_PREFIX, option_fields, parse_options
from envserver.problems import Problem
from envserver.registry import Registry
from envserver.service import Service, View
from envserver.wire import (
    MAX_ACTION_CHARS,
    MAX_TOKEN_CHARS,
    EnvInfo,
    ProblemKind,
    ResetRequest,
    ResetResponse,
    StepRequest,
    StepResponse,
)

log = logging.getLogger("envserver")
PREFIX = "/play"
TEMPLATES = Path(__file__).parent / "templates"
FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")
"""The bodies a page's form sends; anything else (JSON for the API) is a 400 page."""
MAX_PROMPT_CHARS = 1024 * 1024
"""The longest prompt a single-turn page carries to show it again once answered."""
MAX_HISTORY = 50
MAX_HISTORY_ACTION_CHARS = 200
MAX_HISTORY_CHARS = 64 * 1024
MAX_COMPOSE_CHARS = 1000
MAX_FORM_FIELDS = 1000
MAX_SEED_CHARS = 40


class PageError(Exception):
    """Ends a page request with an error page: ``status`` and a detail for a person."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


class PageRoute(LimitedRoute):
    """A playground route: whatever it raises leaves as an HTML error page, never as JSON."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def paged(request: Request) -> Response:
            try:
                return await handler(request)
            except PageError as exc:
                return error_page(request, exc.status, exc.detail, exc.headers)
            except Problem as exc:
                errors = exc.extra.get("errors", [])
                headers = dict(exc.headers or {})
                return error_page(request, exc.status, exc.detail, headers, errors)
            except StarletteHTTPException as exc:
                detail = exc.detail if isinstance(exc.detail, str) else ""
                return error_page(request, exc.status_code, detail, dict(exc.headers or {}))
            except Exception:
                log.exception("unhandled error on %s %s", request.method, request.url.path)
                return error_page(request, 500, "internal error (a bug: please report it)")

        return paged


router = APIRouter(prefix=PREFIX, include_in_schema=False, route_class=PageRoute)


def page_templates(registry: Registry) -> Jinja2Templates:
    """The playground's templates and every renderer's, in one autoescaping environment."""
    folders = [TEMPLATES, *dict.fromkeys(r.templates for r in registry.renderers.values())]
    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(folder) for folder in folders])
    environment = jinja2.Environment(
        loader=loader, autoescape=True, trim_blocks=True, lstrip_blocks=True
    )
    environment.filters["number"] = _number
    return Jinja2Templates(env=environment)


def _number(value: float | None) -> str:
    return "none" if value is None else f"{value:.6g}"


def _templates(request: Request) -> Jinja2Templates:
    templates: Jinja2Templates = request.app.state.templates
    return templates


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def render(
    request: Request,
    name: str,
    context: dict[str, Any],
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    """The page ``name`` with ``context``."""
    response: HTMLResponse = _templates(request).TemplateResponse(
        request, name, {"prefix": PREFIX, **context}, status_code=status, headers=headers
    )
    return response


def error_page(
    request: Request,
    status: int,
    detail: str,
    headers: dict[str, str] | None = None,
    errors: list[dict[str, Any]] | None = None,
) -> HTMLResponse:
    """The error page: the status, its title and the problem's detail."""
    title = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"
    env_id = request.path_params.get("env_id")
    served = env_id if env_id in _service(request).registry.envs else None
    context = {"status": status, "title": title, "detail": detail, "errors": errors or []}
    return render(request, "play/error.html", {**context, "env_id": served}, status, headers)


# --- reading forms ---------------------------------------------------------------------------


async def _form(request: Request) -> FormData:
    sent = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if sent not in FORMS:
        raise PageError(
            400,
            f"the playground's pages send HTML forms, not {sent or 'an untyped body'}: "
            "for JSON, use the API (/v1/envs/<env>/reset and /step)",
        )
    try:
        return await request.form(
            max_files=0,
            max_fields=MAX_FORM_FIELDS,
            max_part_size=_service(request).settings.max_body_bytes,
        )
    except StarletteHTTPException as exc:
        raise PageError(400, f"the form could not be read: {exc.detail}") from None


def _field(form: FormData, name: str, limit: int) -> str:
    """The field's text ("" when absent; the last one when repeated, as a checkbox after its
    hidden "false" sends it); raises PageError 413 past ``limit`` characters."""
    values = form.getlist(name)
    value = values[-1] if values else ""
    if isinstance(value, UploadFile):
        raise PageError(400, f"the field {name!r} must be text, not a file")
    if len(value) > limit:
        raise PageError(
            413, f"the field {name!r} has {len(value):,} characters; the limit is {limit:,}"
        )
    return value


def _served(request: Request, env_id: str) -> EnvInfo:
    """The environment's catalogue entry, or PageError: 503 for a family that is disabled, else
    404."""
    catalogue = served_now(request.app.state.catalogue, _service(request).registry)
    for info in catalogue.envs:
        if info.id == env_id:
            return info
    reason = _service(request).registry.disabled_reason(env_id)
    if reason is not None:
        raise PageError(503, f"environment {env_id!r} is not served here: {reason}")
    raise PageError(404, f"unknown environment {env_id!r}; {PREFIX} lists them")


# --- the episode's page ----------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """One line of the history a page carries: the step's number, its action (cut short),
    how it was scored and its reward."""

    step: int
    action: str
    status: str
    reward: float | None


def _history(text: str) -> list[Move]:
    # Display only: a history that does not parse (edited by hand) is dropped, not an error.
    try:
        rows = json.loads(text) if text else []
        return [
            Move(int(s), str(a), str(st), None if r is None else float(r)) for s, a, st, r in rows
        ]
    except (ValueError, TypeError):
        return []


def _history_text(moves: list[Move]) -> str:
    return json.dumps([[m.step, m.action, m.status, m.reward] for m in moves[-MAX_HISTORY:]])


def _observation(reply: ResetResponse | StepResponse) -> Observation | None:
    if isinstance(reply.observation, list):
        return [message.model_dump() for message in reply.observation]
    return reply.observation


def _prompt(text: str) -> Observation | None:
    # Display only, as the history: a prompt that does not parse (edited by hand) is not shown.
    try:
        prompt = json.loads(text) if text else None
    except ValueError:
        return None
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list) and all(
        isinstance(m, dict) and all(isinstance(v, str) for v in m.values()) for m in prompt
    ):
        return prompt
    return None


def _prompt_text(prompt: Observation | None) -> str:
    text = json.dumps(prompt) if prompt else ""
    return text if len(text) <= MAX_PROMPT_CHARS else ""


def _turn(reply: ResetResponse | StepResponse, action: str = "") -> Turn:
    observation = _observation(reply)
    if isinstance(reply, ResetResponse):
        return Turn(observation, reply.info, reply.status, reply.detail)
    return Turn(
        observation,
        reply.info,
        reply.status,
        reply.detail,
        reply.reward,
        reply.components,
        reply.terminated,
        reply.truncated,
        action,
        reply.metrics,
    )


def _episode(
    request: Request,
    env_id: str,
    token: str,
    turn: Turn,
    view: View | None,
    *,
    task_id: str,
    history: list[Move],
    prompt: Observation | None,
    retry: str = "",
) -> HTMLResponse:
    context = {
        "env": _served(request, env_id),
        "turn": turn,
        "state": token,
        "task_id": task_id,
        "history": history,
        "history_text": _history_text(history),
        "prompt": prompt,
        "prompt_text": _prompt_text(prompt),
        "view": view.context if view else None,
        "view_template": view.template if view and view.context is not None else None,
        "view_failure": view.failure if view and view.context is None else "",
        "retry": retry,
    }
    return render(request, "play/episode.html", context)


# --- routes ----------------------------------------------------------------------------------


@router.get("", response_class=HTMLResponse)
async def index(request: Request) -> HTMLResponse:
    """Every environment served here, and the families that are not and why."""
    catalogue = served_now(request.app.state.catalogue, _service(request).registry)
    return render(request, "play/index.html", {"catalogue": catalogue})


def _start_page(
    request: Request,
    env: EnvInfo,
    *,
    submitted: dict[str, str] | None = None,
    errors: dict[str, str] | None = None,
    status: int = 200,
) -> HTMLResponse:
    context = {
        "env": env,
        "fields": option_fields(env.options_schema, submitted),
        "submitted": submitted or {},
        "errors": errors or {},
        "max_seed": MAX_SEED,
    }
    return render(request, "play/start.html", context, status)


def _option_errors(problem: Problem, names: set[str]) -> dict[str, str]:
    """The service's 422 option errors by option name; "" holds those of the options as a
    whole and of options the form does not have."""
    errors: dict[str, str] = {}
    for error in problem.extra.get("errors", []):
        where = [str(part) for part in error.get("loc", [])][1:]
        message = str(error.get("msg", ""))
        if where and where[0] in names:
            errors.setdefault(where[0], message)
        else:
            errors.setdefault("", f"{'.'.join(where)}: {message}" if where else message)
    return errors or {"": problem.detail}


@router.post("/{env_id:path}/reset", response_class=HTMLResponse)
async def reset(env_id: str, request: Request) -> HTMLResponse:
    """Start an episode from the options form (or a task id) and show its first page."""
    service = _service(request)
    env = _served(request, env_id)
    form = await _form(request)
    schema = env.options_schema
    submitted = {
        name: _field(form, name, MAX_ACTION_CHARS) for name in form if name.startswith(FIELD_PREFIX)
    }
    seed_text = _field(form, "seed", MAX_SEED_CHARS).strip()
    task_id = _field(form, "task_id", MAX_TASK_ID_LENGTH).strip()
    submitted |= {"seed": seed_text, "task_id": task_id}
    if task_id:
        request_body = ResetRequest(task_id=task_id)
    else:
        options, errors = parse_options(schema, submitted)
        seed: int | None = None
        if seed_text:
            try:
                seed = int(seed_text)
            except ValueError:
                errors["seed"] = f"{seed_text!r} is not an integer"
        try:
            request_body = ResetRequest(seed=seed, options=options)
        except ValidationError as exc:
            errors.setdefault("seed", exc.errors()[0]["msg"])
        if errors:
            return _start_page(request, env, submitted=submitted, errors=errors, status=422)
    try:
        reply, view = await service.drawn_reset(env_id, request_body)
    except Problem as exc:
        if exc.kind == ProblemKind.INVALID_OPTIONS:
            errors = _option_errors(exc, set(schema.get("properties", {})))
            return _start_page(request, env, submitted=submitted, errors=errors, status=422)
        if task_id and exc.status in (400, 404):
            errors = {"task_id": exc.detail}
            return _start_page(request, env, submitted=submitted, errors=errors, status=exc.status)
        raise
    if reply.state is None:
        status = 504 if reply.status == "timeout" else 503
        raise PageError(status, f"the episode could not start ({reply.status}): {reply.detail}")
    single = env.kind == "single_turn"
    return _episode(
        request,
        env_id,
        reply.state,
        _turn(reply),
        view,
        task_id=reply.task_id or "",
        history=[],
        prompt=_observation(reply) if single else None,
    )


def _action(form: FormData) -> str:
    """The action a form sends: a button's ``action``, or ``compose`` with ``{}`` replaced by
    the ``text`` typed (a text box's form carries its ``compose`` in a hidden field, so Enter
    sends it whichever button the browser takes as the submitter)."""
    action = _field(form, "action", MAX_ACTION_CHARS)
    compose = _field(form, "compose", MAX_COMPOSE_CHARS)
    if "action" in form:
        return action
    if "compose" not in form:
        raise PageError(400, "the form sends no action: press a button or type an action")
    if compose.count("{}") != 1:
        raise PageError(400, "the form's 'compose' field must hold one '{}' for the text")
    text = _field(form, "text", MAX_ACTION_CHARS)
    before, after = compose.split("{}")
    command = before + text + after
    if len(command) > MAX_ACTION_CHARS:
        raise PageError(413, f"the action is longer than {MAX_ACTION_CHARS:,} characters")
    return command


@router.post("/{env_id:path}/step", response_class=HTMLResponse)
async def step(env_id: str, request: Request) -> HTMLResponse:
    """Apply the action the page sent to the episode in its state token."""
    service = _service(request)
    env = _served(request, env_id)
    form = await _form(request)
    token = _field(form, "state", MAX_TOKEN_CHARS)
    if not token:
        raise PageError(400, "the page carries no state token: start an episode first")
    action = _action(form)
    task_id = _field(form, "task_id", MAX_TASK_ID_LENGTH)
    history = _history(_field(form, "history", MAX_HISTORY_CHARS))
    single = env.kind == "single_turn"
    prompt = _prompt(_field(form, "prompt", MAX_PROMPT_CHARS)) if single else None
    reply, view = await service.drawn_step(env_id, StepRequest(state=token, action=action))
    turn = _turn(reply, action)
    failed = reply.status in ("timeout", "error")
    number = (history[-1].step if history else 0) + (0 if failed else 1)
    if not failed:
        history = [
            *history,
            Move(number, action[:MAX_HISTORY_ACTION_CHARS], reply.status, reply.reward),
        ]
    return _episode(
        request,
        env_id,
        reply.state or token,
        turn,
        view,
        task_id=task_id,
        history=history,
        prompt=prompt,
        retry=action if failed else "",
    )


@router.post("/{env_id:path}", response_class=HTMLResponse)
async def other_post(env_id: str) -> HTMLResponse:
    """A post to no action of an environment (the pages post to ``/reset`` and ``/step``)."""
    raise PageError(405, "this page takes no form: start from the environment's page")


@router.get("/{env_id:path}", response_class=HTMLResponse)
async def start(env_id: str, request: Request) -> Response:
    """An environment's start page: what it is, its options, a seed or a task id."""
    service = _service(request)
    for suffix in ("/reset", "/step"):
        # A reload or a bookmark of an episode's page: its state was in the form, not the URL.
        base = env_id.removesuffix(suffix)
        if base != env_id and base in service.registry.envs:
            return RedirectResponse(f"{PREFIX}/{base}", status_code=303)
    return _start_page(request, _served(request, env_id))


def short_links(registry: Registry) -> APIRouter:
    """``GET /<env id>`` redirects to the environment's playground page, for each environment
    whose id is one word (an old page address keeps working; a short link to share)."""
    links = APIRouter(include_in_schema=False)
    for env_id in registry.envs:
        if "/" not in env_id:
            links.add_api_route(
                f"/{env_id}",
                _redirect_to(f"{PREFIX}/{env_id}"),
                methods=["GET"],
                response_class=RedirectResponse,
            )
    return links


def _redirect_to(target: str) -> Callable[[], Coroutine[Any, Any, RedirectResponse]]:
    async def redirect() -> RedirectResponse:
        return RedirectResponse(target, status_code=307)

    return redirect
