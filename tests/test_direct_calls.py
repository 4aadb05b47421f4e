"""HTTP's direct path (``envserver.direct``): the calls every item makes, answered without
FastAPI's router, exactly as FastAPI answers them; whatever it does not take goes on to FastAPI
with its body intact."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from starlette.types import Message, Receive, Scope, Send

from envserver import calls
from envserver.app import create_app
from envserver.config import Settings
from envserver.direct import DirectCalls
from envserver.routes import router

FASTAPI_JSON = "application/vnd.envserver+json"
"""JSON that FastAPI reads (any ``+json`` type) and the direct path leaves to it."""


@pytest.fixture(scope="module")
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=60) as client:
        yield client


MASKED = frozenset({"state", "latency_ms"})
"""What differs between two answers to one call: a token is sealed with a fresh nonce each
time, and a score's time is its own."""


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<masked>" if k in MASKED else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _both(http: httpx.Client, path: str, body: Any) -> tuple[httpx.Response, httpx.Response]:
    """The same call sent as the direct path takes it and as only FastAPI reads it."""
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    direct = http.post(path, content=content, headers={"content-type": "application/json"})
    fastapi = http.post(path, content=content, headers={"content-type": FASTAPI_JSON})
    return direct, fastapi


def _token(http: httpx.Client, env: str = "math", seed: int = 3) -> str:
    reply = http.post(f"/v1/envs/{env}/reset", json={"seed": seed})
    assert reply.status_code == 200, reply.text
    token: str = reply.json()["state"]
    return token


def _finished(http: httpx.Client) -> str:
    reply = http.post("/v1/envs/math/step", json={"state": _token(http), "action": "\\boxed{0}"})
    assert reply.json()["terminated"], reply.text
    token: str = reply.json()["state"]
    return token


def test_every_call_is_answered_as_fastapi_answers_it(http: httpx.Client) -> None:
    token, finished = _token(http), _finished(http)
    verify = {"verifier": "math", "items": [{"response": "\\boxed{2}", "reference": "2"}]}
    cases: list[tuple[str, Any, int]] = [
        ("/v1/envs/math/reset", {"seed": 5, "options": {"difficulty": "easy"}}, 200),
        ("/v1/envs/math/step", {"state": token, "action": "\\boxed{-1}"}, 200),
        ("/v1/envs/math/step", {"state": finished, "action": "\\boxed{1}"}, 409),
        ("/v1/envs/math/step", {"state": token[:-8] + "AAAAAAAA", "action": "1"}, 403),
        ("/v1/envs/opt/tsp/step", {"state": token, "action": "1"}, 403),  # another env's token
        ("/v1/envs/no-such-env/reset", {"seed": 1}, 404),
        ("/v1/envs/math/expand", {"state": token, "actions": ["1"]}, 400),
        ("/v1/envs/math/reset/batch", {"items": [{"seed": 1}, {"seed": 2}]}, 200),
        (
            "/v1/envs/math/step/batch",
            {"items": [{"state": token, "action": "1"}, {"state": finished, "action": "1"}]},
            200,
        ),
        ("/v1/verify", verify, 200),
        ("/v1/verify", {"verifier": "nope", "items": [{"response": "1", "reference": 1}]}, 404),
        # Bodies the direct path leaves to FastAPI, through both doors alike.
        ("/v1/envs/math/step", {"state": token}, 422),
        ("/v1/envs/math/step", b'{"state": ', 400),
        ("/v1/envs/math/reset", b"[" * 200 + b"]" * 200, 422),
        ("/v1/envs/math/reset", b"", 422),
    ]
    for path, body, status in cases:
        direct, fastapi = _both(http, path, body)
        assert direct.status_code == fastapi.status_code == status, (path, direct.text)
        assert _masked(direct.json()) == _masked(fastapi.json()), (path, direct.text)
        for header in ("content-type", "retry-after", "allow"):
            assert direct.headers.get(header) == fastapi.headers.get(header), (path, header)


def test_a_direct_call_is_counted_under_its_declared_route(http: httpx.Client) -> None:
    route = 'route="/v1/envs/{env_id:path}/step",status="200"'

    def counted() -> float:
        lines = http.get("/metrics").text.splitlines()
        found = [
            line
            for line in lines
            if line.startswith("envserver_http_requests_total") and route in line
        ]
        return sum(float(line.rsplit(" ", 1)[1]) for line in found)

    before = counted()
    for _ in range(3):
        reply = http.post("/v1/envs/math/step", json={"state": _token(http), "action": "1"})
        assert reply.status_code == 200
    assert counted() - before == 3


class _Next:
    """What comes after the direct path (FastAPI, in the app): records what reaches it."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        self.bodies.append(body)
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b""})


async def _drive(
    direct: DirectCalls,
    app: Any,
    *,
    method: str,
    path: str,
    body: bytes,
    content_type: str,
    root_path: str = "",
) -> tuple[int, bytes, Scope]:
    scope: Scope = {
        "type": "http",
        "method": method,
        "path": root_path + path,
        "root_path": root_path,
        "headers": [(b"content-type", content_type.encode())],
        "app": app,
        "state": {},
    }
    chunks = [body[:3], body[3:]]  # sent in two parts: the path reads the whole body

    async def receive() -> Message:
        if chunks:
            chunk = chunks.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}
        return {"type": "http.disconnect"}

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    await direct(scope, receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:]), scope


def test_the_direct_path_answers_what_it_takes_and_passes_on_the_rest(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path, pool_workers=1, sandbox_backend="none"))

    async def run() -> None:
        async with app.router.lifespan_context(app):
            after = _Next()
            direct = DirectCalls(after, routes=router.routes)
            reset = orjson.dumps({"seed": 1})
            # As sent, and behind a root path (a proxy's prefix, Ray Serve's route prefix).
            for content_type, root_path in (
                ("application/json", ""),
                ("Application/JSON; charset=utf-8", "/prefix"),
            ):
                status, body, scope = await _drive(
                    direct,
                    app,
                    method="POST",
                    path="/v1/envs/math/reset",
                    body=reset,
                    content_type=content_type,
                    root_path=root_path,
                )
                assert status == 200 and "state" in orjson.loads(body)
                assert scope["route"].path == "/v1/envs/{env_id:path}/reset"
            assert after.bodies == []
            passed_on = [
                ("POST", "/v1/envs/math/reset", b'{"seed": ', "application/json"),  # not JSON
                ("POST", "/v1/envs/math/reset", b'{"seed": "x"}', "application/json"),  # schema
                ("POST", "/v1/envs/math/reset", reset, "text/plain"),
                ("POST", "/v1/envs/math/reset", reset, FASTAPI_JSON),
                ("POST", "/v1/envs/math/reset/", reset, "application/json"),
                ("POST", "/v1/envs/math", reset, "application/json"),
                ("PUT", "/v1/envs/math/reset", reset, "application/json"),
                ("POST", "/v1/curriculum/sample", reset, "application/json"),
            ]
            for method, path, sent_body, content_type in passed_on:
                status, _, _ = await _drive(
                    direct,
                    app,
                    method=method,
                    path=path,
                    body=sent_body,
                    content_type=content_type,
                )
                assert status == 299, (method, path, content_type)
            assert after.bodies == [b for _, _, b, _ in passed_on]

    asyncio.run(run())


def test_a_direct_call_fastapi_does_not_declare_is_a_bug_found_at_start() -> None:
    with pytest.raises(RuntimeError, match="no route declared"):
        DirectCalls(
            _Next(), routes=[r for r in router.routes if "/step" not in getattr(r, "path", "")]
        )
    assert {r.template for r in calls.ROUTES} <= {getattr(r, "path", "") for r in router.routes}
