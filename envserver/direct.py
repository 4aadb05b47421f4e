"""HTTP's direct path: a POST of a call every item makes (``envserver.calls``) whose body is JSON
its schema takes is answered here, without FastAPI's router and dependency solving.

Anything else (another route or method, a body that is not JSON or not the schema, a content
type other than ``application/json``) goes on to FastAPI unchanged, the body read here replayed,
so every refusal of a body is FastAPI's own. FastAPI declares these routes too, and their
endpoints run the same functions: the OpenAPI document describes what this path answers, and a
body this path leaves to FastAPI that FastAPI takes is answered alike.

It sits inside the other middleware (metrics, body limit, API keys), which see its requests as
any other, and sets the route FastAPI declares for the call in the scope, as FastAPI does, so
the request's metrics carry the same label. What it spares, measured in process with both doors
side by side (``benchmarks/hot_path.py``, the event loop's CPU per step of a pooled verifier, 2
idle cores): 243 µs here against 336 µs through FastAPI; FastAPI's own floor, ``GET /healthz``,
is 123 µs.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from envserver import calls
from envserver.limits import parse_body, replay
from envserver.problems import Problem, problem_of
from envserver.routes import JSONReply

JSON = b"application/json"


class DirectCalls:
    """Answers the calls of ``envserver.calls`` whose body its schema takes; passes on the rest."""

    def __init__(self, app: ASGIApp, routes: Iterable[BaseRoute]) -> None:
        self.app = app
        declared = {
            route.path: route
            for route in routes
            if isinstance(route, APIRoute) and "POST" in (route.methods or ())
        }
        missing = [route.template for route in calls.ROUTES if route.template not in declared]
        if missing:  # a bug: this path would answer routes the app does not document
            raise RuntimeError(f"the direct calls {missing} have no route declared to FastAPI")
        self.declared = {route.template: declared[route.template] for route in calls.ROUTES}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = _call(scope)
        if found is None:
            await self.app(scope, receive, send)
            return
        route, env_id = found
        body = await _body(receive)
        if body is None:  # the client went away before sending it all
            return
        try:
            request = route.body.model_validate(parse_body(body))
        except (ValueError, ValidationError, Problem):  # FastAPI's to refuse, as it refuses
            await self.app(scope, replay(body, receive), send)
            return
        scope["route"] = self.declared[route.template]
        try:
            reply = await route.run(scope["app"].state.service, env_id, request)
        except Exception as exc:
            problem = problem_of(exc)
            if problem is None:  # a bug: the app's catch-all logs it and answers 500
                raise
            await problem.response()(scope, receive, send)
            return
        await JSONReply(reply)(scope, receive, send)


def _call(scope: Scope) -> tuple[calls.Route, str] | None:
    """The call a request is, when it is a POST of one with a JSON body."""
    if scope["type"] != "http" or scope["method"] != "POST":
        return None
    content_type = next((v for k, v in scope["headers"] if k == b"content-type"), b"")
    if content_type.split(b";", 1)[0].strip().lower() != JSON:
        return None
    path: str = scope["path"]
    root = scope.get("root_path", "")
    return calls.route(path.removeprefix(root) if root else path)


async def _body(receive: Receive) -> bytes | None:
    """The request's whole body (its size already bounded by ``BodyLimitMiddleware``)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)
