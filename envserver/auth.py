"""Optional bearer API keys, checked before the body is read (or a WebSocket is accepted)."""

from __future__ import annotations

from contextvars import ContextVar

from starlette.status import WS_1008_POLICY_VIOLATION
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketClose

from envserver.keys import ApiKey, match_api_key
from envserver.problems import problem_response
from envserver.wire import ProblemKind

# Liveness and readiness stay open so orchestrators can probe without a key.
OPEN_PATHS = frozenset({"/healthz", "/readyz"})
DENIAL = "websocket.http.response"
"""The ASGI extension that lets a WebSocket handshake be answered with an HTTP response."""
CALLER: ContextVar[str] = ContextVar("envserver_caller", default="")
"""The name of the API key whose request is being served ("" on a server without keys): whose
run statistics a request reads and writes (``envserver.stats``)."""


class ApiKeyMiddleware:
    """With keys configured, every route but the open ones needs ``Authorization: Bearer <key>``.

    The key's name (never the key) is left in ``scope["state"]["api_key"]`` for the metrics.
    """

    def __init__(self, app: ASGIApp, keys: list[ApiKey], *, protect_metrics: bool) -> None:
        self.app = app
        self.keys = keys
        self.open_paths = OPEN_PATHS if protect_metrics else OPEN_PATHS | {"/metrics"}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] not in ("http", "websocket")
            or not self.keys
            or scope["path"] in self.open_paths
        ):
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, presented = header.partition(" ")
        key = match_api_key(self.keys, presented.strip()) if scheme.lower() == "bearer" else None
        if key is None:
            detail = "missing bearer API key" if not header else "invalid API key"
            response = problem_response(
                401,
                detail,
                kind=ProblemKind.UNAUTHORIZED,
                headers={"WWW-Authenticate": 'Bearer realm="envserver"'},
            )
            if scope["type"] == "http":
                await response(scope, receive, send)
            elif DENIAL in scope.get("extensions", {}):
                # A WebSocket handshake refused with the same problem document over HTTP.
                await WebSocket(scope, receive, send).send_denial_response(response)
            else:
                await WebSocketClose(WS_1008_POLICY_VIOLATION, detail)(scope, receive, send)
            return
        scope.setdefault("state", {})["api_key"] = key.name
        CALLER.set(key.name)  # this request's task only: each request runs in its own context
        await self.app(scope, receive, send)
