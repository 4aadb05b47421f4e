"""Request limits: the body's size (enforced before it is read) and its nesting depth (once it
is parsed, for every route)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Coroutine
from typing import Any, NoReturn

import orjson
from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from envserver.problems import Problem, problem_response
from envserver.wire import MAX_JSON_DEPTH, ProblemKind


class BodyLimitMiddleware:
    """Answers 413 when the declared or the actual body exceeds ``max_bytes``.

    A body without Content-Length (chunked) is read up to the limit and then replayed, so the
    limit holds without trusting the client.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and not declared.isdigit():
            await problem_response(400, "malformed Content-Length", kind=ProblemKind.BAD_REQUEST)(
                scope, receive, send
            )
        elif declared is not None and int(declared) > self.max_bytes:
            await self._too_large(scope, receive, send)
        elif declared is not None or scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE"):
            # The server enforces Content-Length framing, so a declared size is the real size.
            await self.app(scope, receive, send)
        else:
            await self._chunked(scope, receive, send)

    async def _chunked(self, scope: Scope, receive: Receive, send: Send) -> None:
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._too_large(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        await self.app(scope, replay(b"".join(chunks), receive), send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem_response(
            413, f"request body exceeds {self.max_bytes} bytes", kind=ProblemKind.BODY_TOO_LARGE
        )
        await response(scope, receive, send)


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app ``body`` (read already, to check it) as the request's
    whole body, then defers to ``receive`` (for the client's disconnect)."""
    replayed = False

    async def again() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again


def nesting_depth(value: Any, limit: int) -> int:
    """How deeply ``value``'s lists and objects nest, counted up to ``limit + 1`` (the walk
    stops there, so a hostile body costs no more than its first too-deep path)."""
    deepest = 0
    # A scalar (``123``, ``null``) nests nothing: only lists and objects are walked.
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        item, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def _non_finite(text: str) -> NoReturn:
    raise Problem(
        422,
        f"the request body holds the number {text[:40]}, which is not finite: JSON numbers "
        "must be finite (no NaN, Infinity or overflowing exponents)",
        kind=ProblemKind.NON_FINITE_NUMBER,
    )


def _finite_float(text: str) -> float:
    value = float(text)
    return value if math.isfinite(value) else _non_finite(text)


def _unpaired_surrogate(value: Any) -> str | None:
    """The first lone UTF-16 surrogate in a string (key or value) of ``value``."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode()
            except UnicodeEncodeError as exc:
                return item[exc.start]
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _loads(body: bytes) -> Any:
    """``json.loads`` at orjson's speed: orjson parses every well-formed body; the standard
    library reparses only what orjson refuses (malformed, deeper than orjson's 1024 levels, the
    non-finite numbers and the lone surrogates orjson refuses too), so every error message stays
    the standard library's. ``NaN``, ``Infinity`` and ``1e400`` (which the standard library would
    read as non-finite floats) are refused with 422: they are not JSON, and no field takes them.
    A string escaping half a surrogate pair (``"\\ud800"``) is not text (RFC 8259 8.2: no UTF-8
    can hold it, so no answer could echo it) and is refused as malformed JSON."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        value = json.loads(body, parse_constant=_non_finite, parse_float=_finite_float)
    if (surrogate := _unpaired_surrogate(value)) is not None:
        escape = f"\\u{ord(surrogate):04x}"
        found = re.search(re.escape(escape).encode(), body, re.IGNORECASE)
        where = found.start() if found else 0
        raise json.JSONDecodeError(f"unpaired surrogate {escape}", body.decode("latin-1"), where)
    return value


def parse_body(body: bytes) -> Any:
    """A request body's JSON, refused (422) when it nests deeper than ``MAX_JSON_DEPTH`` or
    holds a non-finite number; ``ValueError`` when it is not JSON."""
    try:
        value = _loads(body)
    except RecursionError:
        value = None
        depth = MAX_JSON_DEPTH + 1
    else:
        depth = nesting_depth(value, MAX_JSON_DEPTH)
    if depth > MAX_JSON_DEPTH:
        raise Problem(
            422,
            f"the request body nests lists and objects deeper than {MAX_JSON_DEPTH} "
            "levels, the limit for every request",
            kind=ProblemKind.TOO_DEEP,
        )
    return value


class LimitedRequest(Request):
    """A request whose JSON body may nest at most ``MAX_JSON_DEPTH`` levels.

    Deeper values cannot cross to the worker processes (pickling recurses per level) and no
    family needs them, so they are refused here, once for every route, before any work.
    """

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = parse_body(await self.body())
        return self._json


class LimitedRoute(APIRoute):
    """The route class of every router: its handlers read bodies through ``LimitedRequest``."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def limited(request: Request) -> Response:
            return await handler(LimitedRequest(request.scope, request.receive))

        return limited
