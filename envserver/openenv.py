"""OpenEnv's wire format for every environment, under ``/openenv/<env id>``.

OpenEnv's own client (``openenv.GenericEnvClient(base_url=".../openenv/<env id>")``) talks to
``/ws`` there: ``{"type": "reset" | "step" | "state" | "close", "data": ...}`` in,
``{"type": "observation" | "state" | "error", "data": ...}`` out. The HTTP routes are there too:
``POST /reset``, ``POST /step``, ``GET /state``, ``/health``, ``/schema`` and ``/metadata``.

OpenEnv keeps a session per socket on the server; this server keeps nothing. The episode lives
in its state token, which every observation carries in ``metadata["state_token"]`` (and the
``state`` message in ``state_token``). A socket remembers the last token it handed out, so a
plain OpenEnv loop (``step({"action": ...})``) works unchanged; after a reconnect, on another
replica or after a restart, ``step({"action": ..., "state_token": <the last one>})`` carries
the episode on. Over HTTP every step names its token (HTTP has no socket to remember it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request, WebSocket
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.websockets import WebSocketDisconnect

from envserver.catalogue import env_info
from envserver.limits import LimitedRoute, parse_body
from envserver.problems import Problem, body_problem
from envserver.service import Service
from envserver.wire import (
    MAX_TOKEN_CHARS,
    Observation,
    ProblemKind,
    ResetRequest,
    ResetResponse,
    Seed,
    StepRequest,
    StepResponse,
)

PREFIX = "/openenv/{env_id:path}"
router = APIRouter(route_class=LimitedRoute, tags=["openenv"])


class OpenEnvReset(BaseModel):
    """OpenEnv's reset parameters: ``seed`` and ``episode_id`` (echoed back), and ours:
    ``options`` or ``task_id``."""

    model_config = ConfigDict(extra="forbid")
    seed: Seed | None = None
    episode_id: str | None = Field(None, max_length=255)
    options: dict[str, Any] = Field(default_factory=dict)
    task_id: str | None = Field(None, max_length=1024)


class OpenEnvAction(BaseModel):
    """An action: its text, and the state token it applies to (optional on a socket that
    handed one out)."""

    model_config = ConfigDict(extra="forbid")
    action: str
    state_token: str | None = Field(None, max_length=MAX_TOKEN_CHARS)
    metadata: dict[str, Any] = Field(default_factory=dict)


class OpenEnvStep(BaseModel):
    """OpenEnv's HTTP step body."""

    model_config = ConfigDict(extra="allow")
    action: OpenEnvAction


def _text(observation: Observation | None) -> str:
    if observation is None or isinstance(observation, str):
        return observation or ""
    return json.dumps([m.model_dump() for m in observation], ensure_ascii=False)


def _observation(reply: ResetResponse | StepResponse, episode_id: str | None) -> dict[str, Any]:
    """OpenEnv's serialised observation: ``observation``, ``reward``, ``done``, ``metadata``."""
    step = reply if isinstance(reply, StepResponse) else None
    metadata = {
        "state_token": reply.state,
        "status": reply.status,
        "detail": reply.detail,
        "episode_id": episode_id,
        **({"task_id": reply.task_id} if isinstance(reply, ResetResponse) else {}),
    }
    return {
        "observation": {"text": _text(reply.observation), "info": reply.info},
        "reward": step.reward if step else None,
        "done": bool(step and (step.terminated or step.truncated)),
        "metadata": metadata,
    }


async def _reset(service: Service, env_id: str, data: dict[str, Any]) -> dict[str, Any]:
    params = OpenEnvReset.model_validate(data)
    request = ResetRequest(seed=params.seed, options=params.options, task_id=params.task_id)
    reply = (await service.reset(env_id, [request], batch=False))[0]
    return _observation(reply, params.episode_id)


async def _step(service: Service, env_id: str, action: OpenEnvAction) -> dict[str, Any]:
    if action.state_token is None:
        raise Problem(
            400,
            "no episode: give the state_token from the last observation's metadata "
            "(or reset first on this socket)",
            kind=ProblemKind.NO_STATE_TOKEN,
        )
    request = StepRequest(state=action.state_token, action=action.action)
    reply = (await service.step(env_id, [request], batch=False))[0]
    return _observation(reply, action.metadata.get("episode_id"))


def _service(request: Request | WebSocket) -> Service:
    service: Service = request.app.state.service
    return service


@router.post(PREFIX + "/reset")
async def reset(env_id: str, request: Request) -> dict[str, Any]:
    """OpenEnv's reset: the first observation, the state token in its metadata."""
    body = await request.body()
    try:
        data = parse_body(body) if body else {}
    except ValueError:
        raise Problem(
            400, "the request body is not valid JSON", kind=ProblemKind.MALFORMED_JSON
        ) from None
    try:
        return await _reset(_service(request), env_id, data)
    except ValidationError as exc:
        raise body_problem(exc) from None


@router.post(PREFIX + "/step")
async def step(env_id: str, body: OpenEnvStep, request: Request) -> dict[str, Any]:
    """OpenEnv's step: ``{"action": {"action": ..., "state_token": ...}}``."""
    return await _step(_service(request), env_id, body.action)


@router.get(PREFIX + "/state")
async def state(env_id: str, request: Request) -> dict[str, Any]:
    """Over HTTP there is no session to describe: the episode is the token the client holds."""
    _service(request).env(env_id)
    return {"episode_id": None, "step_count": 0, "state_token": None}


@router.get(PREFIX + "/health")
async def health(env_id: str, request: Request) -> dict[str, str]:
    _service(request).env(env_id)
    return {"status": "healthy"}


@router.get(PREFIX + "/metadata")
async def metadata(env_id: str, request: Request) -> dict[str, Any]:
    info = env_info(_service(request).env(env_id), _service(request).registry)
    return {"name": info.id, "description": info.description, "version": info.version}


@router.get(PREFIX + "/schema")
async def schema(env_id: str, request: Request) -> dict[str, Any]:
    info = env_info(_service(request).env(env_id), _service(request).registry)
    return {
        "action": OpenEnvAction.model_json_schema(),
        "observation": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "info": {"type": "object"}},
        },
        "state": {
            "type": "object",
            "properties": {
                "episode_id": {"type": ["string", "null"]},
                "step_count": {"type": "integer"},
                "state_token": {"type": ["string", "null"]},
            },
        },
        "reset_options": info.options_schema,
    }


class _Refused(Exception):
    """A message refused before it reaches the service, with the kind of error OpenEnv names."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"type": "error", "data": {"message": message, "code": kind}}


@dataclass
class _Session:
    """What one socket remembers: the last token it handed out, for steps that give none."""

    service: Service
    env_id: str
    token: str | None = None
    episode_id: str | None = None
    steps: int = 0

    async def answer(self, frame: bytes) -> dict[str, Any] | None:
        """The answer to one message; None for ``close``."""
        try:
            kind, data = self._message(frame)
            if kind == "close":
                return None
            if kind == "state":
                state = {
                    "episode_id": self.episode_id,
                    "step_count": self.steps,
                    "state_token": self.token,
                }
                return {"type": "state", "data": state}
            return {"type": "observation", "data": await self._episode(kind, data)}
        except _Refused as refused:
            return _error(str(refused), refused.kind)
        except ValidationError as exc:
            return _error(f"Invalid message: {exc}", "VALIDATION_ERROR")
        except Problem as problem:
            return _error(problem.detail, "EXECUTION_ERROR")

    def _message(self, frame: bytes) -> tuple[str, dict[str, Any]]:
        if len(frame) > self.service.settings.max_body_bytes:
            limit = self.service.settings.max_body_bytes
            raise _Refused(f"message exceeds {limit} bytes", "TOO_LARGE")
        try:
            message = parse_body(frame)
        except (ValueError, Problem) as exc:
            raise _Refused(f"Invalid JSON: {exc}", "INVALID_JSON") from None
        if not isinstance(message, dict):
            raise _Refused("a message is a JSON object: {type, data}", "INVALID_JSON")
        kind, data = message.get("type"), message.get("data", {})
        if kind not in ("reset", "step", "state", "close"):
            raise _Refused(f"Unknown message type: {str(kind)[:100]}", "UNKNOWN_TYPE")
        if not isinstance(data, dict):
            raise _Refused(f"a {kind} message's data is a JSON object", "VALIDATION_ERROR")
        return kind, data

    async def _episode(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        if kind == "reset":
            reply = await _reset(self.service, self.env_id, data)
            self.token, self.steps = reply["metadata"]["state_token"], 0
            self.episode_id = reply["metadata"]["episode_id"]
            return reply
        action = OpenEnvAction.model_validate(data)
        action.state_token = action.state_token or self.token
        action.metadata.setdefault("episode_id", self.episode_id)
        reply = await _step(self.service, self.env_id, action)
        self.token = reply["metadata"]["state_token"] or self.token
        self.steps += 1
        return reply


@router.websocket(PREFIX + "/ws")
async def session(websocket: WebSocket, env_id: str) -> None:
    """OpenEnv's WebSocket session (see the module's doc)."""
    await websocket.accept()
    state = _Session(_service(websocket), env_id)
    try:
        while (message := await websocket.receive())["type"] != "websocket.disconnect":
            # OpenEnv's client sends text; a binary frame is read as the same JSON, in UTF-8.
            text = message.get("text")
            frame: bytes = text.encode() if text is not None else message.get("bytes") or b""
            answer = await state.answer(frame)
            if answer is None:  # the client's close: the session ends cleanly
                await websocket.close()
                break
            await websocket.send_json(answer)
    except WebSocketDisconnect:
        pass
