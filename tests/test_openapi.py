"""The OpenAPI document matches the wire: it is valid OpenAPI, every error a route answers is
documented for that route as ``application/problem+json``, and the bodies the live servers send
for a representative set of bad requests (every error status, on every kind of route) validate
against the documented schema."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import httpx
import pytest
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate as validate_spec

from tests.conftest import RESTRICTED_KEY
from tests.server import LiveServer
from verifiers.tamarin.prover import locate_prover

PROBLEM = "application/problem+json"
KEY = {"Authorization": f"Bearer {RESTRICTED_KEY.partition(':')[2]}"}
ITEM = {"response": "\\boxed{1}", "reference": "1"}


@dataclass(frozen=True)
class Bad:
    """One bad request, the status it must get, and which server it goes to."""

    status: int
    method: str
    path: str
    json: Any = None
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    restricted: bool = False


def _bad_requests() -> list[Bad]:
    big = {"verifier": "math", "items": [{**ITEM, "response": "x" * 70_000}]}  # > 64 KiB
    # More than the 3 items the restricted pool queues (hard math is generated on the pool; easy
    # and medium are cheap, made in the server process, and take no place in its queue).
    four = {"items": [{"options": {"difficulty": "hard"}}] * 4}
    slow = {"verifier": "test.sleep", "timeout_s": 10, "items": [{**ITEM, "response": "sleep:3"}]}
    by_disabled_task = {"items": [{"response": "x", "task_id": "sva/nl2sva-human@1/3"}]}
    run_code = {"code": "print(1)", "language": "python"}
    cases = [
        # The open server: input errors of every route.
        Bad(400, "POST", "/v1/verify", content=b"{", headers={"content-type": "application/json"}),
        Bad(415, "POST", "/v1/verify", content=b"hi", headers={"content-type": "text/plain"}),
        Bad(422, "POST", "/v1/verify", {"items": []}),
        Bad(422, "POST", "/v1/verify", {"items": [ITEM]}),  # a reference needs a verifier
        Bad(422, "POST", "/v1/verify", {"verifier": "math", "options": {"no": 1}, "items": [ITEM]}),
        Bad(404, "POST", "/v1/verify", {"verifier": "nope", "items": [ITEM]}),
        Bad(400, "POST", "/v1/verify", {"items": [{"response": "x", "task_id": "math@1/x"}]}),
        Bad(404, "POST", "/v1/verify", {"items": [{"response": "x", "task_id": "math@99/1"}]}),
        Bad(422, "POST", "/v1/envs/math/reset", {"options": {"difficulty": "impossible"}}),
        Bad(404, "POST", "/v1/envs/nope/reset", {}),
        Bad(413, "POST", "/v1/envs/math/reset/batch", {"items": [{}] * 2049}),
        Bad(422, "POST", "/v1/envs/math/reset/batch", {"items": []}),
        Bad(400, "POST", "/v1/envs/math/step", {"state": "garbage", "action": "x"}),
        Bad(400, "POST", "/v1/envs/math/step/batch", {"items": [{"state": "x", "action": "x"}]}),
        Bad(422, "POST", "/v1/envs/math/step", {"state": "x"}),
        Bad(400, "POST", "/v1/envs/math/expand", {"state": "garbage"}),
        Bad(404, "GET", "/v1/envs/nope"),
        Bad(405, "GET", "/v1/envs/math/reset"),
        Bad(422, "POST", "/v1/sandbox/run", {"language": "cobol", "source": "x"}),
        Bad(422, "POST", "/v1/sandbox/run/batch", {"items": []}),
        Bad(422, "POST", "/v1/sandbox/matrix", {}),
        Bad(422, "POST", "/run_code", {"code": "x", "language": "nope"}),
        Bad(404, "POST", "/openrlhf/nope/get_reward", {"query": ["x"], "labels": ["x"]}),
        Bad(422, "POST", "/openrlhf/math/get_reward", {"query": ["x"], "labels": []}),
        # The restricted server: keys, disabled families, no sandbox, tight limits.
        Bad(401, "GET", "/v1/envs", restricted=True),
        Bad(401, "GET", "/metrics", restricted=True),
        Bad(401, "POST", "/v1/verify", {"items": []}, restricted=True),
        Bad(503, "GET", "/v1/envs/sva/nl2sva-human", headers=KEY, restricted=True),
        Bad(503, "POST", "/v1/envs/sva/nl2sva-machine/reset", {}, headers=KEY, restricted=True),
        Bad(503, "POST", "/v1/verify", by_disabled_task, headers=KEY, restricted=True),
        Bad(503, "POST", "/v1/sandbox/run", {"source": "print(1)"}, headers=KEY, restricted=True),
        Bad(503, "POST", "/run_code", run_code, headers=KEY, restricted=True),
        Bad(413, "POST", "/v1/verify", big, headers=KEY, restricted=True),
        Bad(429, "POST", "/v1/envs/math/reset/batch", four, headers=KEY, restricted=True),
        Bad(504, "POST", "/v1/verify", slow, headers=KEY, restricted=True),
    ]
    if locate_prover() is None:  # the proof verifier needs the binary: disabled here
        cases.append(Bad(503, "POST", "/v1/verify", {"verifier": "tamarin.proof", "items": [ITEM]}))
        cases.append(Bad(503, "GET", "/v1/envs/tamarin/proof", headers=KEY, restricted=True))
        # (An unscorable sample is not a 503 there: a NaN score OpenRLHF can filter.)
        proof = {"query": ["x"], "labels": ["x"]}
        cases.append(Bad(503, "POST", "/openrlhf/tamarin.proof/get_reward", proof))
    return cases


BAD = _bad_requests()


@cache
def _spec(base_url: str) -> dict[str, Any]:
    spec: dict[str, Any] = httpx.get(f"{base_url}/openapi.json", timeout=30).json()
    return spec


def _pattern(template: str) -> re.Pattern[str]:
    # ``{env_id}`` may hold slashes (the route's path converter allows them); others may not.
    parts = re.split(r"(\{[a-z_]+\})", template)
    return re.compile(
        "".join(
            (".+" if part == "{env_id}" else "[^/]+") if part.startswith("{") else re.escape(part)
            for part in parts
        )
    )


def _operation(spec: dict[str, Any], method: str, path: str) -> tuple[str, dict[str, Any]]:
    """The documented operation a request reaches: among the matching templates, the one with
    the most literal text (``/v1/envs/{env_id}/reset`` over ``/v1/envs/{env_id}``)."""
    found = [
        (len(re.sub(r"\{[^}]+\}", "", template)), template, operations[method.lower()])
        for template, operations in spec["paths"].items()
        if method.lower() in operations and _pattern(template).fullmatch(path)
    ]
    assert found, f"{method} {path} reaches no documented operation"
    _, template, operation = max(found, key=lambda f: f[0])
    return template, operation


def _schema_validator(spec: dict[str, Any], schema: dict[str, Any]) -> OAS31Validator:
    # The document's components travel with the schema, so its $refs resolve.
    return OAS31Validator({**schema, "components": spec["components"]})


@pytest.fixture(scope="module")
def servers(live_server: LiveServer, restricted_server: LiveServer) -> dict[bool, str]:
    return {False: live_server.base_url, True: restricted_server.base_url}


def test_the_document_is_valid_openapi_with_problem_schemas(base_url: str) -> None:
    spec = _spec(base_url)
    validate_spec(spec)
    schemas = spec["components"]["schemas"]
    assert {"Problem", "ValidationProblem", "FieldError"} <= set(schemas)
    assert "HTTPValidationError" not in schemas  # FastAPI's {detail: [...]}, never sent
    assert "errors" in schemas["ValidationProblem"]["required"]


def _operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            yield path, method, operation


def test_every_documented_error_is_a_problem_document(base_url: str) -> None:
    spec = _spec(base_url)
    for path, method, operation in _operations(spec):
        for status, response in operation["responses"].items():
            if int(status) < 400 or path in ("/healthz", "/readyz"):  # probes answer Health
                continue
            content = response.get("content", {})
            assert list(content) == [PROBLEM], (method, path, status)
            expected = "ValidationProblem" if status == "422" else "Problem"
            assert content[PROBLEM]["schema"] == {"$ref": f"#/components/schemas/{expected}"}


@pytest.mark.parametrize("bad", BAD, ids=[f"{b.status}-{b.method}-{b.path}" for b in BAD])
def test_a_bad_request_gets_its_documented_error(bad: Bad, servers: dict[bool, str]) -> None:
    base_url = servers[bad.restricted]
    reply = httpx.request(
        bad.method,
        base_url + bad.path,
        json=bad.json if bad.content is None else None,
        content=bad.content,
        headers=bad.headers,
        timeout=60,
    )
    assert reply.status_code == bad.status, reply.text
    spec = _spec(servers[False])  # the same app: the open server's document needs no key
    template, operation = _operation(spec, bad.method, bad.path)
    documented = operation["responses"].get(str(bad.status))
    assert documented is not None, f"{bad.status} is not documented for {bad.method} {template}"
    media_type = reply.headers["content-type"].split(";")[0]
    assert media_type == PROBLEM and media_type in documented["content"]
    body = json.loads(reply.content)
    _schema_validator(spec, documented["content"][PROBLEM]["schema"]).validate(body)
    assert body["status"] == bad.status
    for header in documented.get("headers", {}):
        if bad.status == 429:  # Retry-After is promised with every 429
            assert header.lower() in {h.lower() for h in reply.headers}, header
    if body["type"].endswith("/environment-unavailable"):
        assert body["reason"] and body["fix"]
