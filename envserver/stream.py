"""``/v1/stream``: one WebSocket carrying many concurrent calls of the episode and verify routes.

A text (or binary) frame is one call, the POST it stands for::

    {"id": 7, "path": "/v1/envs/<env id>/step", "body": {"state": "...", "action": "..."}}

and its answer is the status and body the same POST gets over HTTP (problem documents
included), with the headers that matter to a client (``retry-after``) when it has them::

    {"id": 7, "status": 200, "body": {"status": "ok", "reward": 1.0, ...}}

Calls run concurrently and are answered as each finishes, in any order. Each frame meets the
limits a request body meets (``max_body_bytes``: 413; nesting depth; the schema: 422), the pool's
backpressure (429 with ``retry-after``) and deadline (504); the API key is checked once, at the
handshake (``envserver.auth``). ``id`` comes first in a frame: an oversized one is refused
without being parsed, and the id it starts with is what its 413 answers.

At most ``MAX_IN_FLIGHT`` calls of one socket are open at once; beyond that the socket is not
read, so a client that stops reading its answers stops being read too (TCP pushes back on it)
and the server holds no more than that many of its answers. A socket dropped with calls in
flight loses only their answers: the calls finish and the episodes they stepped stay in the
tokens the client already holds.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import orjson
from fastapi import APIRouter, WebSocket
from pydantic import ValidationError
from starlette.websockets import WebSocketDisconnect

from envserver import calls
from envserver.calls import Route
from envserver.limits import parse_body
from envserver.problems import Problem, body_problem, problem_body, problem_of
from envserver.service import Service
from envserver.wire import ProblemKind

log = logging.getLogger("envserver")
router = APIRouter()

STREAM_PATH = "/v1/stream"
MAX_IN_FLIGHT = 256
"""Calls one socket may have open at once (running, or answered but not yet sent)."""
MAX_ID_CHARS = 256
ID_RANGE = range(-(2**63), 2**64)
"""The integers an id may be: what a JSON encoder writes back exactly (64 bits)."""
_LEADING_ID = re.compile(rb'\s*\{\s*"id"\s*:\s*("(?:[^"\\]|\\.){0,256}"|-?\d{1,20})')


def route(path: str) -> tuple[Route, str]:
    """The route a frame's ``path`` (as a URL carries it: percent-encoded) names, and the
    environment id in it; 404 for a path that is no route a stream carries."""
    found = calls.route(unquote(path))
    if found is None:
        raise Problem(
            404,
            f"path {path[:200]!r} is none of the routes a stream carries: POST "
            "/v1/envs/<env>/reset, /step, /reset/batch, /step/batch, /expand, and /v1/verify",
            kind=ProblemKind.UNKNOWN_ROUTE,
        )
    return found


def _leading_id(frame: bytes) -> Any:
    """The id an unparsed frame starts with, if it starts with one that could be answered."""
    match = _LEADING_ID.match(frame[: MAX_ID_CHARS + 32])
    try:
        found = orjson.loads(match.group(1)) if match else None
    except orjson.JSONDecodeError:  # half a surrogate pair: no answer could carry it
        return None
    valid = isinstance(found, str) or (isinstance(found, int) and found in ID_RANGE)
    return found if valid else None


def _request_id(envelope: Any) -> Any:
    if not isinstance(envelope, dict):
        raise Problem(
            400, "a frame is a JSON object: {id, path, body}", kind=ProblemKind.MALFORMED_FRAME
        )
    request_id = envelope.get("id")
    text = isinstance(request_id, str) and len(request_id) <= MAX_ID_CHARS
    number = isinstance(request_id, int) and not isinstance(request_id, bool)
    if not (text or (number and request_id in ID_RANGE)):
        raise Problem(
            400,
            f"a frame's id is a string of at most {MAX_ID_CHARS} characters or a 64-bit integer",
            kind=ProblemKind.MALFORMED_FRAME,
        )
    return request_id


def _call(envelope: dict[str, Any]) -> tuple[Route, str, Any]:
    unknown = set(envelope) - {"id", "path", "body"}
    path = envelope.get("path")
    if unknown or not isinstance(path, str) or "body" not in envelope:
        raise Problem(
            400,
            "a frame holds id, path and body, nothing else"
            + (f" (not {', '.join(sorted(unknown))})" if unknown else ""),
            kind=ProblemKind.MALFORMED_FRAME,
        )
    return *route(path), envelope["body"]


@dataclass
class _Socket:
    """One client's socket: its open calls and the lock its answers are sent under."""

    websocket: WebSocket
    service: Service
    api_key: str
    slots: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(MAX_IN_FLIGHT))
    sending: asyncio.Lock = field(default_factory=asyncio.Lock)
    open: bool = True

    async def serve(self) -> None:
        running: set[asyncio.Task[None]] = set()
        try:
            while True:
                await self.slots.acquire()
                message = await self.websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                frame: bytes = text.encode() if text is not None else message.get("bytes") or b""
                task = asyncio.create_task(self.answer(frame))
                running.add(task)
                task.add_done_callback(running.discard)
        except WebSocketDisconnect:
            pass
        finally:
            self.open = False
            # The calls in flight finish (their pool work is not abandoned halfway); only
            # their answers, which have nowhere to go, are dropped.
            if running:
                await asyncio.gather(*running, return_exceptions=True)

    async def answer(self, frame: bytes) -> None:
        started = time.perf_counter()
        request_id: Any = None
        template = "unmatched"
        headers: dict[str, str] = {}
        try:
            try:
                if len(frame) > self.service.settings.max_body_bytes:
                    request_id = _leading_id(frame)
                    raise Problem(
                        413,
                        f"frame exceeds {self.service.settings.max_body_bytes} bytes",
                        kind=ProblemKind.BODY_TOO_LARGE,
                    )
                envelope = self._parse(frame)
                request_id = _request_id(envelope)
                found, env_id, body = _call(envelope)
                template = found.template
                try:
                    request = found.body.model_validate(body)
                except ValidationError as exc:
                    raise body_problem(exc) from None
                reply = await found.run(self.service, env_id, request)
                status, payload = 200, reply.model_dump_json()
            except Exception as exc:
                problem = problem_of(exc)
                if problem is not None:
                    status = problem.status
                    headers = {k.lower(): v for k, v in (problem.headers or {}).items()}
                    payload = orjson.dumps(problem.body()).decode()
                else:
                    log.exception("unhandled error on a stream call to %s", template)
                    status = 500
                    payload = orjson.dumps(
                        problem_body(
                            500,
                            "internal error (a bug: please report it)",
                            kind=ProblemKind.INTERNAL,
                        )
                    ).decode()
            extra = f',"headers":{orjson.dumps(headers).decode()}' if headers else ""
            text = (
                f'{{"id":{orjson.dumps(request_id).decode()},"status":{status},'
                f'"body":{payload}{extra}}}'
            )
            await self._send(text)
            metrics = self.service.metrics
            metrics.requests.labels("WS", template, str(status), self.api_key).inc()
            metrics.request_seconds.labels("WS", template).observe(time.perf_counter() - started)
        finally:
            self.slots.release()

    @staticmethod
    def _parse(frame: bytes) -> Any:
        try:
            return parse_body(frame)
        except ValueError:
            raise Problem(
                400, "the frame is not valid JSON", kind=ProblemKind.MALFORMED_JSON
            ) from None

    async def _send(self, text: str) -> None:
        if not self.open:
            return
        async with self.sending:
            try:
                await self.websocket.send_text(text)
            except (WebSocketDisconnect, RuntimeError, OSError):
                # The client went away with this call in flight: its answer is dropped.
                self.open = False


@router.websocket(STREAM_PATH)
async def stream(websocket: WebSocket) -> None:
    """Many concurrent reset/step/verify calls over one socket (see the module's doc)."""
    await websocket.accept()
    service: Service = websocket.app.state.service
    api_key = websocket.scope.get("state", {}).get("api_key", "anonymous")
    await _Socket(websocket, service, api_key).serve()
