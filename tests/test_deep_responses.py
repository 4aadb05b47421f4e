"""A response nested 10,000 levels deep is the response's fault: ``invalid`` (or scored), never
``error`` (no reward) and never a 500.

Issue 25: a WebShop purchase whose ``product`` nested 1,100 levels hit the JSON parser's
recursion limit and came back ``error``, which a trainer masks instead of penalising. Every
verifier the registry serves is checked here with the shapes parsers recurse on, in the verifier's
own answer formats, in-process and (for one verifier per parser kind) over HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from envserver.registry import discover

DEPTH = 10_000
SHAPES = {
    "lists": "[" * DEPTH + "]" * DEPTH,
    "objects": '{"a": ' * DEPTH + "1" + "}" * DEPTH,
    "parentheses": "(" * DEPTH + "1" + ")" * DEPTH,
    "braces": "{" * DEPTH + "1" + "}" * DEPTH,
    "boxed": "\\boxed{" * DEPTH + "1" + "}" * DEPTH,
    "fractions": "\\frac{1}{" * DEPTH + "2" + "}" * DEPTH,
    "unclosed": "[" * DEPTH,
}
WRAPPINGS = {
    "bare": "{}",
    "answer": "Answer: {}",
    "purchase": '{{"product": {}, "price": 1, "options": {{}}}}',
    "code": "```python\nx = {}\n```",
}
REGISTRY = discover()
VERIFIERS = sorted(name for name, v in REGISTRY.verifiers.items() if v.example is not None)


@pytest.mark.parametrize("name", VERIFIERS)
def test_deep_responses_are_invalid_or_scored_never_errors(name: str) -> None:
    verifier = REGISTRY.verifiers[name]
    assert verifier.example is not None
    reference = verifier.example[1]
    for shape, deep in SHAPES.items():
        for wrapping, template in WRAPPINGS.items():
            score = verifier(template.format(deep), reference)
            assert score.status in ("ok", "invalid"), (name, shape, wrapping, score)
            assert score.reward is not None, (name, shape, wrapping)


@pytest.fixture(scope="module")
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=120) as client:
        yield client


@pytest.mark.parametrize("depth", [900, 1_100, DEPTH])
def test_a_deep_webshop_purchase_is_invalid_over_http(http: httpx.Client, depth: int) -> None:
    verifier = REGISTRY.verifiers["webshop"]
    assert verifier.example is not None
    for product in ('{"a": ' * depth + "1" + "}" * depth, "[" * depth + "]" * depth):
        response = f'{{"product": {product}, "price": 1, "options": {{}}}}'
        body = {
            "verifier": "webshop",
            "items": [{"response": response, "reference": verifier.example[1]}],
        }
        reply = http.post("/v1/verify", json=body)
        assert reply.status_code == 200, reply.text
        result = reply.json()["results"][0]
        assert (result["status"], result["reward"]) == ("invalid", 0.0), result
