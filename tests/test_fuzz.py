"""Schema-driven fuzzing of every route (schemathesis): no input makes the server fail.

Valid and invalid bodies, paths and parameters are generated from the server's own OpenAPI
document; every answer must be below 500, and every error a problem document.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)


def operations(base_url: str) -> list[schemathesis.APIOperation]:
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    return [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_no_input_makes_the_server_fail(base_url: str, mode: GenerationMode) -> None:
    checked = []
    for operation in operations(base_url):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
        def call(case: schemathesis.Case) -> None:
            response = case.call(base_url=base_url, timeout=60)
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
