"""Numbers in request bodies are numbers: no NaN or infinities, no booleans for integers.

End to end against the shared live server (422 with a message that says why), and in-process
over every options model the registry serves, so a family added later is covered too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ValidationError

from envserver.registry import discover
from verifiers.numbers import StrictNumbers

PROBLEM = "application/problem+json"
VERIFY = {"verifier": "math", "items": [{"response": "1", "reference": "1"}]}


@pytest.fixture(scope="module")
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=30) as client:
        yield client


def _refused(response: httpx.Response, says: str) -> None:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    assert says in response.json()["detail"], response.json()


def _raw(http: httpx.Client, path: str, body: str) -> httpx.Response:
    return http.post(path, content=body.encode(), headers={"content-type": "application/json"})


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN", "1e400", "-1e999"])
def test_a_non_finite_timeout_is_refused(http: httpx.Client, number: str) -> None:
    body = json.dumps(VERIFY)[:-1] + f', "timeout_s": {number}}}'
    _refused(_raw(http, "/v1/verify", body), "not finite")


@pytest.mark.parametrize("number", ["Infinity", "NaN", "1e400"])
def test_non_finite_numbers_are_refused_anywhere_in_a_body(http: httpx.Client, number: str) -> None:
    # Where a field takes any JSON (a reference, options), the parser is what refuses.
    reference = f'{{"verifier": "math", "items": [{{"response": "1", "reference": [{number}]}}]}}'
    _refused(_raw(http, "/v1/verify", reference), "not finite")
    options = f'{{"seed": 1, "options": {{"max_attempts": {number}}}}}'
    _refused(_raw(http, "/v1/envs/math/reset", options), "not finite")


def test_finite_numbers_still_read(http: httpx.Client) -> None:
    body = json.dumps(VERIFY)[:-1] + ', "timeout_s": 1e1}'
    response = _raw(http, "/v1/verify", body)
    assert response.status_code == 200, response.text
    assert response.json()["results"][0]["reward"] == 1.0


@pytest.mark.parametrize(
    ("path", "body", "where"),
    [
        ("/v1/envs/math/reset", {"seed": True}, "seed"),
        ("/v1/envs/math/reset", {"seed": False}, "seed"),
        ("/v1/envs/math/reset/batch", {"items": [{"seed": 1}, {"seed": True}]}, "items.1.seed"),
        ("/v1/envs/math/reset", {"seed": 1, "options": {"max_attempts": True}}, "max_attempts"),
        ("/v1/verify", {**VERIFY, "timeout_s": True}, "timeout_s"),
        (
            "/v1/verify",
            {**VERIFY, "verifier": "opt", "options": {"power": True}},
            "power",
        ),
        (
            "/run_code",
            {"code": "print(1)", "language": "python", "memory_limit_MB": True},
            "memory_limit_MB",
        ),
        (
            "/v1/envs/webshop/reset",
            {"seed": 1, "options": {"step_limit": True}},
            "step_limit",
        ),
    ],
)
def test_a_boolean_is_not_a_number(
    http: httpx.Client, path: str, body: dict[str, Any], where: str
) -> None:
    response = http.post(path, json=body)
    _refused(response, "a boolean is not a number")
    assert where in response.json()["detail"]


def test_integers_in_text_still_read_from_task_ids(http: httpx.Client) -> None:
    # Task ids carry options as text; refusing booleans must not refuse "2".
    response = http.post("/v1/envs/math/reset", json={"task_id": "math@1/3?max_attempts=2"})
    assert response.status_code == 200, response.text
    assert response.json()["info"]["metadata"] is not None


def _numeric_fields(model: type[BaseModel]) -> list[str]:
    return [
        name
        for name, field in model.model_fields.items()
        if field.annotation in (int, float, int | None, float | None)
    ]


def _options_models() -> dict[str, type[BaseModel]]:
    registry = discover()
    models = {f"env {key}": env.spec.options_model for key, env in registry.envs.items()}
    models.update({f"verifier {key}": v.options_model for key, v in registry.verifiers.items()})
    return models


OPTIONS = _options_models()


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_every_options_model_refuses_booleans_and_non_finite_numbers(name: str) -> None:
    model = OPTIONS[name]
    assert issubclass(model, StrictNumbers), f"{name}: {model.__name__} is not StrictNumbers"
    for field in _numeric_fields(model):
        with pytest.raises(ValidationError, match="a boolean is not a number"):
            model.model_validate({field: True})
        if model.model_fields[field].annotation in (float, float | None):
            with pytest.raises(ValidationError, match="finite"):
                model.model_validate({field: float("inf")})


def test_the_registry_has_numeric_options_to_check() -> None:
    # The test above checks something: most options models have integer or float fields.
    assert sum(bool(_numeric_fields(model)) for model in OPTIONS.values()) >= 5
