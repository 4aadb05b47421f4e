"""Fuzzing every route and protocol: no input makes the server fail, and every call is answered.

- Schema-driven (schemathesis): valid and invalid bodies, paths and parameters generated from the
  server's own OpenAPI document, against a server with every route on (statistics kept, so the
  curriculum's routes answer too; a key of its own); every answer below 500, every error a
  problem document.
- The protocols OpenAPI does not describe: ``/v1/stream`` and OpenEnv's WebSocket (frame by
  frame: each gets its one answer, none a server error, and the socket stays up), ``/mcp`` (any
  method, any body: below 500, and at once) and OpenEnv's HTTP reset, which parses its own body.
  Cases are drawn from JSON values (every scalar at the top level, 64-bit-overflowing integers,
  strings holding half a surrogate pair, nesting past the limit), each protocol's near-valid
  messages and raw bytes. Each test prints the status codes it saw.
"""

from __future__ import annotations

import json
from collections import Counter
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.conftest import STATS_KEYS
from tests.server import LiveServer

MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)


def operations(base_url: str, headers: dict[str, str]) -> list[schemathesis.APIOperation]:
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json", headers=headers)
    return [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_no_input_makes_the_server_fail(stats_server: LiveServer, mode: GenerationMode) -> None:
    base_url, key = stats_server.base_url, {"authorization": f"Bearer {STATS_KEYS['fuzzer']}"}
    checked = []
    for operation in operations(base_url, key):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
        def call(case: schemathesis.Case) -> None:
            response = case.call(base_url=base_url, headers=key, timeout=60)
            assert response.status_code < 500, (case.as_curl_command(), response.text)
            if response.status_code >= 400:
                assert response.headers["content-type"][0].startswith("application/problem+json")
                assert response.json()["detail"]

        try:
            call()
        except Unsatisfiable:
            # No invalid input exists for a route without parameters or body (GET /healthz).
            assert mode is GenerationMode.NEGATIVE
            continue
        checked.append(operation.label)
    assert len(checked) >= (10 if mode is GenerationMode.POSITIVE else 5), checked


# --- what the cases are made of -----------------------------------------------------------------

CASES = 300
"""Cases per protocol: each is one round trip to the shared server (a few seconds in all)."""
ANSWER_S = 60
"""How long a call may take to be answered (the pool may be busy with other tests' work)."""

TEXT = st.text(st.characters(codec=None), max_size=12)
"""Any code point but half a surrogate pair."""
SURROGATES = st.sampled_from(["\ud800", "\udfff", "a\udc00b", "\ud83d\ude00"])
"""Strings holding half a surrogate pair (json.dumps writes them as \\ud800 escapes, as a buggy
client would), and a whole pair."""


def json_values(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    scalars = (
        st.none()
        | st.booleans()
        | st.integers()  # unbounded: past 64 bits, where JSON encoders stop
        | st.floats(allow_nan=False, allow_infinity=False)
        | text
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
        max_leaves=12,
    )


JSON = json_values(TEXT)
ODD_JSON = json_values(TEXT | SURROGATES)
DEEP = st.integers(90, 5000).map(lambda n: "[" * n + "]" * n)
RAW = st.binary(max_size=64) | st.text(max_size=64).map(str.encode)


def as_json(value: Any) -> str:
    return json.dumps(value)  # ASCII: lone surrogates as escapes, so any value makes a frame


def frames(messages: st.SearchStrategy[Any]) -> st.SearchStrategy[str | bytes]:
    """WebSocket frames: a protocol's messages (half the cases; one in three of those in a
    binary frame), any JSON value, deep nesting, raw bytes (a binary frame) and text that is not
    JSON."""
    text = messages.map(as_json)
    return st.one_of(
        text,
        text,
        messages.map(lambda m: as_json(m).encode()),
        ODD_JSON.map(as_json),
        DEEP,
        RAW | st.text(max_size=64),
    )


# --- /v1/stream ---------------------------------------------------------------------------------

ROUTES = (
    "/v1/envs/math/reset",
    "/v1/envs/math/step",
    "/v1/envs/math/reset/batch",
    "/v1/envs/math/step/batch",
    "/v1/envs/math/expand",
    "/v1/verify",
    "/v1/envs/no-such-env/reset",
)
IDS = st.one_of(
    st.integers(0, 10**6),
    st.text(max_size=12),
    st.integers(-(2**70), 2**70),  # past 64 bits: no answer could carry them exactly
    st.text(min_size=250, max_size=260),  # at the 256 characters' limit
    SURROGATES,
    JSON,
)
SEEDS = st.integers(0, 2**63 - 1) | JSON
STREAM_BODIES = (
    JSON
    | st.fixed_dictionaries({}, optional={"seed": SEEDS, "options": JSON, "task_id": JSON})
    | st.fixed_dictionaries(
        {"items": st.lists(st.fixed_dictionaries({}, optional={"seed": SEEDS}), max_size=3)}
    )
    | st.fixed_dictionaries({"state": TEXT, "action": TEXT})
    | st.fixed_dictionaries(
        {"items": st.lists(st.fixed_dictionaries({"response": TEXT, "reference": JSON}))},
        optional={"verifier": st.sampled_from(["math", "code"]) | TEXT},
    )
)
CALL = {
    "id": IDS,
    "path": st.one_of(st.sampled_from(ROUTES), st.sampled_from(ROUTES), TEXT),
    "body": STREAM_BODIES,
}
STREAM_CALLS = st.one_of(
    *[st.fixed_dictionaries(CALL)] * 3,
    st.fixed_dictionaries(CALL, optional={"extra": JSON}),  # no other member is allowed
    st.fixed_dictionaries({}, optional=CALL),  # members missing
)


def readable_id(frame: str | bytes) -> Any:
    """The id the server reads from ``frame``: a string of at most 256 characters or a 64-bit
    integer, in a JSON object it accepts (no half surrogate pair, no non-finite number); None
    for any other frame."""
    try:
        value = json.loads(frame, parse_constant=float, parse_float=float)
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode()
    except (ValueError, RecursionError):  # not JSON, half a surrogate pair, too deep to read
        return None
    found = value.get("id") if isinstance(value, dict) else None
    if isinstance(found, int) and not isinstance(found, bool) and -(2**63) <= found < 2**64:
        return found
    return found if isinstance(found, str) and len(found) <= 256 else None


def test_every_stream_frame_is_answered_and_none_fails(base_url: str) -> None:
    codes: Counter[int] = Counter()
    url = base_url.replace("http://", "ws://") + "/v1/stream"
    with connect(url, max_size=None) as ws:

        @given(frame=frames(STREAM_CALLS))
        @settings(max_examples=CASES, deadline=None, suppress_health_check=list(HealthCheck))
        def call(frame: str | bytes) -> None:
            ws.send(frame)
            answer = json.loads(ws.recv(timeout=ANSWER_S))
            codes[answer["status"]] += 1
            assert answer["status"] < 500, (frame, answer)
            assert answer["id"] == readable_id(frame), (frame, answer)
            if answer["status"] != 200:
                assert answer["body"]["detail"], answer

        call()
        ws.send(json.dumps({"id": "last", "path": "/v1/envs/math/reset", "body": {"seed": 1}}))
        assert json.loads(ws.recv(timeout=ANSWER_S))["status"] == 200  # the socket is still up
    print(f"\n/v1/stream: {sum(codes.values())} frames, statuses {dict(sorted(codes.items()))}")


# --- OpenEnv's WebSocket and HTTP reset ---------------------------------------------------------

OPENENV_TYPES = st.sampled_from(["reset", "step", "state", "close"]) | TEXT
OPENENV_DATA = (
    JSON
    | st.fixed_dictionaries({}, optional={"seed": SEEDS, "options": JSON, "episode_id": JSON})
    | st.fixed_dictionaries({"action": JSON}, optional={"state_token": JSON, "metadata": JSON})
)
OPENENV_MESSAGES = st.fixed_dictionaries(
    {"type": OPENENV_TYPES}, optional={"data": OPENENV_DATA, "extra": JSON}
)
OPENENV_ERRORS = {
    "INVALID_JSON",
    "UNKNOWN_TYPE",
    "VALIDATION_ERROR",
    "EXECUTION_ERROR",
    "TOO_LARGE",
}
"""The error codes of OpenEnv's own server that a refused message may carry."""


class Session:
    """A socket to ``/openenv/math/ws``, opened again after a ``close`` message ends it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.sockets = ExitStack()
        self.reopen()

    def reopen(self) -> None:
        self.sockets.close()
        self.ws = self.sockets.enter_context(connect(self.url, max_size=None))


def test_every_openenv_message_is_answered_and_none_drops_the_socket(base_url: str) -> None:
    answers: Counter[str] = Counter()
    session = Session(base_url.replace("http://", "ws://") + "/openenv/math/ws")

    @given(frame=frames(OPENENV_MESSAGES))
    @settings(max_examples=CASES, deadline=None, suppress_health_check=list(HealthCheck))
    def call(frame: str | bytes) -> None:
        session.ws.send(frame)
        try:
            answer = json.loads(session.ws.recv(timeout=ANSWER_S))
        except ConnectionClosed as closed:
            # Only a close message ends a session, and cleanly.
            assert json.loads(frame)["type"] == "close", (frame, closed)
            assert closed.rcvd is not None and closed.rcvd.code == 1000, closed
            answers["closed"] += 1
            session.reopen()
            return
        assert answer["type"] in ("observation", "state", "error"), (frame, answer)
        if answer["type"] == "error":
            assert answer["data"]["code"] in OPENENV_ERRORS, (frame, answer)
        answers[answer["data"]["code"] if answer["type"] == "error" else answer["type"]] += 1

    with session.sockets:
        call()
    print(f"\n/openenv/math/ws: {sum(answers.values())} messages, answers {dict(answers)}")


def test_openenv_http_reset_refuses_any_body_it_cannot_use(base_url: str) -> None:
    codes: Counter[int] = Counter()
    bodies = (
        OPENENV_DATA.map(as_json).map(str.encode)
        | ODD_JSON.map(as_json).map(str.encode)
        | DEEP.map(str.encode)
        | RAW
    )
    with httpx.Client(base_url=f"{base_url}/openenv/math", timeout=ANSWER_S) as http:

        @given(body=bodies)
        @settings(max_examples=CASES, deadline=None, suppress_health_check=list(HealthCheck))
        def call(body: bytes) -> None:
            answer = http.post("/reset", content=body, headers={"content-type": "application/json"})
            codes[answer.status_code] += 1
            assert answer.status_code < 500, (body, answer.text)
            if answer.status_code >= 400:
                assert answer.headers["content-type"].startswith("application/problem+json")

        call()
    statuses = dict(sorted(codes.items()))
    print(f"\n/openenv/math/reset: {sum(codes.values())} bodies, statuses {statuses}")


# --- /mcp ---------------------------------------------------------------------------------------

METHODS = ("initialize", "ping", "tools/list", "tools/call", "notifications/initialized")
TOOLS = st.sampled_from(["list_environments", "reset", "step", "verify"]) | TEXT
TOOL_ARGUMENTS = (
    JSON
    | st.fixed_dictionaries(
        {"env_id": st.sampled_from(["math", "alfworld", "no-such-env"]) | TEXT},
        optional={"seed": SEEDS, "options": JSON, "task_id": JSON, "state": TEXT, "action": TEXT},
    )
    | st.fixed_dictionaries(
        {"items": JSON | st.lists(st.fixed_dictionaries({"response": TEXT, "reference": JSON}))},
        optional={"verifier": st.sampled_from(["math"]) | TEXT, "options": JSON},
    )
)
TOOL_CALL = st.fixed_dictionaries({"name": TOOLS}, optional={"arguments": TOOL_ARGUMENTS})
MCP_MESSAGES = st.fixed_dictionaries(
    {
        "jsonrpc": st.one_of(st.just("2.0"), st.just("2.0"), JSON),
        "method": st.one_of(st.sampled_from(METHODS), st.sampled_from(METHODS), TEXT),
    },
    optional={"id": IDS, "params": st.one_of(TOOL_CALL, TOOL_CALL, JSON)},
)
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def test_every_mcp_request_is_answered_at_once_and_none_fails(base_url: str) -> None:
    codes: Counter[str] = Counter()
    message = MCP_MESSAGES.map(as_json).map(str.encode)
    bodies = st.one_of(
        message,
        message,
        st.lists(MCP_MESSAGES, min_size=1, max_size=3).map(as_json).map(str.encode),
        ODD_JSON.map(as_json).map(str.encode),
        DEEP.map(str.encode),
        RAW,
    )
    methods = st.sampled_from(["POST"] * 6 + ["GET", "DELETE", "PUT", "PATCH"])
    # A stream left open would be no answer: every call must end within the timeout.
    with httpx.Client(base_url=base_url, headers=MCP_HEADERS, timeout=ANSWER_S) as http:

        @given(method=methods, body=bodies)
        @settings(max_examples=CASES, deadline=None, suppress_health_check=list(HealthCheck))
        def call(method: str, body: bytes) -> None:
            answer = http.request(method, "/mcp", content=body)
            codes[f"{method} {answer.status_code}"] += 1
            assert answer.status_code < 500, (method, body, answer.text)
            if method != "POST":
                assert (answer.status_code, answer.headers["allow"]) == (405, "POST")

        call()
    print(f"\n/mcp: {sum(codes.values())} requests, answers {dict(sorted(codes.items()))}")
