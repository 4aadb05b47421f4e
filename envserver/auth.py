"""Optional bearer API keys, checked before the body is read."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from envserver.keys import ApiKey, match_api_key
from envserver.problems import problem_response

# Liveness and readiness stay open so orchestrators can probe without a key.
OPEN_PATHS = frozenset({"/healthz", "/readyz"})


class ApiKeyMiddleware:
    """With keys configured, every route but the open ones needs ``Authorization: Bearer <key>``.

    The key's name (never the key) is left in ``scope["state"]["api_key"]`` for the metrics.
    """

    def __init__(self, app: ASGIApp, keys: list[ApiKey], *, protect_metrics: bool) -> None:
        self.app = app
        self.keys = keys
        self.open_paths = OPEN_PATHS if protect_metrics else OPEN_PATHS | {"/metrics"}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.keys or scope["path"] in self.open_paths:
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
                kind="unauthorized",
                headers={"WWW-Authenticate": 'Bearer realm="envserver"'},
            )
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["api_key"] = key.name
        await self.app(scope, receive, send)
