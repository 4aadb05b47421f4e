"""The evo routes' replies are typed: the OpenAPI document names a schema for each, and what a
live server answers validates against it."""

from __future__ import annotations

import time
from typing import Any

import httpx
from openapi_schema_validator import OAS31Validator

from environments.evo.construct import expert_source

JSON = "application/json"
# (path, method, status): the reply's schema, as the document names it.
TYPED = {
    ("/v1/evo/submissions", "post", "202"): "SubmissionAccepted",
    ("/v1/evo/submissions/{submission}", "get", "200"): "SubmissionStatus",
    ("/v1/evo/envs/{name}/retire", "post", "200"): "EvoEnvInfo",
    ("/v1/evo/envs/{name}/restore", "post", "200"): "EvoEnvInfo",
}


def _spec(base_url: str) -> dict[str, Any]:
    spec: dict[str, Any] = httpx.get(f"{base_url}/openapi.json", timeout=30).json()
    return spec


def _reply_schema(spec: dict[str, Any], path: str, method: str, status: str) -> dict[str, Any]:
    schema: dict[str, Any] = spec["paths"][path][method]["responses"][status]["content"][JSON][
        "schema"
    ]
    return schema


def _validate(spec: dict[str, Any], schema: dict[str, Any], reply: Any) -> None:
    OAS31Validator({**schema, "components": spec["components"]}).validate(reply)


def test_the_openapi_document_names_a_schema_for_every_evo_reply(base_url: str) -> None:
    spec = _spec(base_url)
    schemas = spec["components"]["schemas"]
    for (path, method, status), name in TYPED.items():
        schema = _reply_schema(spec, path, method, status)
        assert schema == {"$ref": f"#/components/schemas/{name}"}, (path, schema)
    listing = _reply_schema(spec, "/v1/evo/envs", "get", "200")
    assert listing["items"] == {"$ref": "#/components/schemas/EvoEnvInfo"}
    status = schemas["SubmissionStatus"]["properties"]
    assert set(status["status"]["enum"]) == {"pending", "admitted", "rejected", "error"}
    assert status["reports"]["items"] == {"$ref": "#/components/schemas/StageReportReply"}
    assert {"id", "version", "difficulties", "retired"} <= set(schemas["EvoEnvInfo"]["required"])
    assert "source" not in schemas["EvoEnvInfo"]["properties"]
    full = spec["paths"]["/v1/evo/submissions"]["post"]["responses"]["429"]
    assert "Retry-After" in full["headers"]


def test_what_the_evo_routes_answer_is_what_the_document_says(base_url: str) -> None:
    spec = _spec(base_url)
    with httpx.Client(base_url=base_url, timeout=60) as http:
        envs = http.get("/v1/evo/envs", params={"include_retired": "true"}).json()
        _validate(spec, _reply_schema(spec, "/v1/evo/envs", "get", "200"), envs)
        assert envs and all(env["id"] == f"evo/{env['name']}" for env in envs)
        status_schema = _reply_schema(spec, "/v1/evo/submissions/{submission}", "get", "200")
        seed = http.get(f"/v1/evo/submissions/{envs[0]['submission']}").json()
        _validate(spec, status_schema, seed)
        accepted = http.post("/v1/evo/submissions", json={"source": expert_source(71)})
        assert accepted.status_code == 202
        _validate(spec, _reply_schema(spec, "/v1/evo/submissions", "post", "202"), accepted.json())
        assert accepted.json()["status"] == "pending"
        deadline = time.monotonic() + 120
        while (found := http.get(f"/v1/evo/submissions/{accepted.json()['id']}").json())[
            "status"
        ] == "pending":
            _validate(spec, status_schema, found)
            assert time.monotonic() < deadline
            time.sleep(0.2)
        _validate(spec, status_schema, found)
        assert (found["status"], found["env"]) == ("admitted", "evo/recurrence_71@1")
