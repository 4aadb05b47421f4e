"""``/mcp``: the service as an MCP server (the ``mcp`` SDK, streamable HTTP, stateless).

Tools: ``list_environments``, ``reset``, ``step`` and ``verify``, the routes of the same names
called through ``envserver.service``. The server keeps nothing between calls: ``reset`` and
``step`` return the episode's state token, which the next ``step`` takes back, so any replica
answers any call and no MCP session is kept (stateless mode, JSON answers). A result's text is
what a model reads (the observation, the actions the environment admits now, the reward and the
token to pass on); its structured content is the HTTP route's answer. A refused call (an unknown
environment, a bad token, a busy server) is a tool error whose text is the problem's detail and
whose structured content is the problem document.

In front of the SDK, ``/mcp`` answers only what a stateless server answers: a POST whose body is
JSON the service accepts (``envserver.limits``: not too deep, no non-finite number, no half
surrogate pair), else a JSON-RPC parse error (400); GET (an event stream for server-initiated
messages, which a stateless server never sends) and DELETE (a session to end: there is none)
are 405, as the MCP specification allows, so no stream is held open.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any

from fastapi import FastAPI
from mcp.server.fastmcp import FastMCP
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import INVALID_REQUEST, PARSE_ERROR, CallToolResult, TextContent
from pydantic import BaseModel, ValidationError
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from envserver.catalogue import served_now
from envserver.limits import parse_body, replay
from envserver.problems import Problem, problem_body
from envserver.service import Service
from envserver.wire import (
    Observation,
    ProblemKind,
    ResetRequest,
    ResetResponse,
    Seed,
    StepRequest,
    StepResponse,
    VerifyRequest,
)

MCP_PATH = "/mcp"
INSTRUCTIONS = """Environments and verifiers for RL with verifiable rewards.
Call list_environments, then reset an environment to start an episode: the result holds the
observation, the actions it admits and a state token. Pass the token to step with your action;
each step returns the next token. Nothing is kept between calls: the token is the episode.
verify scores answers against references (with a verifier) or task ids."""


def _observation_text(observation: Observation | None) -> str:
    if observation is None:
        return ""
    if isinstance(observation, str):
        return observation
    return json.dumps([m.model_dump() for m in observation], ensure_ascii=False)


def _episode_text(reply: ResetResponse | StepResponse, actions_key: str | None) -> str:
    lines = [_observation_text(reply.observation)]
    actions = reply.info.get(actions_key) if actions_key else None
    if isinstance(actions, list) and actions:
        lines.append("Admissible actions: " + "; ".join(map(str, actions)))
    if isinstance(reply, StepResponse):
        ended = "ended" if reply.terminated or reply.truncated else "goes on"
        lines.append(f"Status: {reply.status}; reward: {reply.reward}; the episode {ended}.")
        if reply.detail:
            lines.append(reply.detail)
    elif reply.status != "ok":
        lines.append(f"Status: {reply.status}. {reply.detail}")
    if reply.state:
        lines.append(f"State token (pass it to step): {reply.state}")
    return "\n".join(line for line in lines if line)


def _result(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structuredContent=model.model_dump(mode="json"),
    )


async def _answer(call: Awaitable[CallToolResult]) -> CallToolResult:
    """The call's result, or a tool error carrying the problem the HTTP route would answer."""
    try:
        return await call
    except Problem as problem:
        body = problem.body()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"]))
        detail = f"{where}: {first['msg']}" if where else first["msg"]
        body = problem_body(422, detail, kind=ProblemKind.VALIDATION_ERROR)
    return CallToolResult(
        content=[TextContent(type="text", text=str(body["detail"]))],
        structuredContent=body,
        isError=True,
    )


def _rpc_error(status: int, rpc_code: int, message: str, **headers: str) -> JSONResponse:
    # JSON-RPC's error object, as the SDK answers what it refuses itself; no request id could
    # be read, so it is null.
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": rpc_code, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


class _Stateless:
    """The SDK's streamable HTTP endpoint behind the checks of the module's doc."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            refused = _rpc_error(
                405,
                INVALID_REQUEST,
                f"{scope['method']} {MCP_PATH}: this MCP server is stateless and answers POST "
                "only (no event stream to open, no session to end)",
                Allow="POST",
            )
            await refused(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:  # the body's size is already bounded (BodyLimitMiddleware)
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            parse_body(body)
        except (ValueError, Problem) as exc:
            detail = exc.detail if isinstance(exc, Problem) else str(exc)
            await _rpc_error(400, PARSE_ERROR, f"Parse error: {detail}")(scope, receive, send)
            return
        await self.manager.handle_request(scope, replay(body, receive), send)


def mount_mcp(app: FastAPI) -> StreamableHTTPSessionManager:
    """Add ``/mcp`` to ``app``; the returned manager must run (``async with manager.run()``)
    for the app's lifetime."""
    server = FastMCP(
        "envserver",
        instructions=INSTRUCTIONS,
        stateless_http=True,
        json_response=True,
        streamable_http_path=MCP_PATH,
        # The service is an API served under any host name, with its own API keys.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    def actions_key(env_id: str) -> str | None:
        try:
            return service().registry.env(env_id).spec.actions_key
        except LookupError:  # the reply already says why the environment is not served
            return None

    def service() -> Service:
        current: Service = app.state.service
        return current

    @server.tool()
    async def list_environments() -> dict[str, Any]:
        """Every environment (id, kind, description, options schema) and verifier served."""
        catalogue = served_now(app.state.catalogue, service().registry)
        return catalogue.model_dump(mode="json", include={"envs", "verifiers"})

    @server.tool()
    async def reset(
        env_id: str,
        seed: Seed | None = None,
        options: dict[str, Any] | None = None,
        task_id: str | None = None,
    ) -> CallToolResult:
        """Start an episode of env_id by seed and options, or by task_id. Returns the first
        observation, the admissible actions (where the environment lists them) and the state
        token to pass to step."""

        async def run() -> CallToolResult:
            request = ResetRequest(seed=seed, options=options or {}, task_id=task_id)
            reply = (await service().reset(env_id, [request], batch=False))[0]
            return _result(reply, _episode_text(reply, actions_key(env_id)))

        return await _answer(run())

    @server.tool()
    async def step(env_id: str, state: str, action: str) -> CallToolResult:
        """Apply action to the episode in the state token (from reset or the last step).
        Returns the observation, reward, whether the episode ended, and the next token."""

        async def run() -> CallToolResult:
            request = StepRequest(state=state, action=action)
            reply = (await service().step(env_id, [request], batch=False))[0]
            return _result(reply, _episode_text(reply, actions_key(env_id)))

        return await _answer(run())

    @server.tool()
    async def verify(
        items: list[dict[str, Any]],
        verifier: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> CallToolResult:
        """Score answers. Each item is {"response", "reference"} (with verifier) or
        {"response", "task_id"}, optionally with an "id"; results in order."""

        async def run() -> CallToolResult:
            request = VerifyRequest.model_validate(
                {"items": items, "verifier": verifier, "options": options or {}}
            )
            reply = await service().verify(request)
            text = "\n".join(
                f"{i}: {r.status} reward {r.reward}" + (f" ({r.detail})" if r.detail else "")
                for i, r in enumerate(reply.results)
            )
            return _result(reply, text)

        return await _answer(run())

    server.streamable_http_app()  # makes the session manager, served behind the checks
    app.router.routes.append(Route(MCP_PATH, endpoint=_Stateless(server.session_manager)))
    return server.session_manager
