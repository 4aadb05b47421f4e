"""Fault isolation in the worker pool, shown against the real server and real pool."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from envserver.executor import Call, Executor
from tests.conftest import make_server
from tests.server import LiveServer


@pytest.fixture(scope="module")
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=60) as client:
        yield client


def verify(
    http: httpx.Client, verifier: str, *responses: str, **extra: object
) -> list[dict[str, object]]:
    items = [{"response": r, "reference": "x"} for r in responses]
    response = http.post("/v1/verify", json={"verifier": verifier, "items": items, **extra})
    assert response.status_code == 200, response.text
    results: list[dict[str, object]] = response.json()["results"]
    return results


def test_a_hung_item_times_out_alone(http: httpx.Client) -> None:
    started = time.monotonic()
    results = verify(http, "test.sleep", "x", "sleep:30", "y", "x")
    assert time.monotonic() - started < 10
    assert [r["status"] for r in results] == ["ok", "timeout", "ok", "ok"]
    assert [r["reward"] for r in results] == [1.0, None, 0.0, 1.0]
    assert "limit" in str(results[1]["detail"])


def test_a_spinning_item_is_killed_and_the_pool_recovers(http: httpx.Client) -> None:
    results = verify(http, "test.spin", "spin", "x")
    assert [r["status"] for r in results] == ["timeout", "ok"]
    # The killed worker was replaced: real work still runs on both workers.
    math = http.post(
        "/v1/verify",
        json={"verifier": "math", "items": [{"response": "\\boxed{2}", "reference": "2"}] * 4},
    ).json()["results"]
    assert [r["reward"] for r in math] == [1.0] * 4


def test_a_crashed_worker_is_an_error_not_a_zero(http: httpx.Client) -> None:
    results = verify(http, "test.crash", "x", "crash", "x")
    assert [r["status"] for r in results] == ["ok", "error", "ok"]
    assert results[1]["reward"] is None
    assert "died" in str(results[1]["detail"])


def test_a_verifier_that_raises_is_an_error_not_a_zero(http: httpx.Client) -> None:
    results = verify(http, "test.raise", "x")
    assert results[0]["status"] == "error" and results[0]["reward"] is None
    assert "broken" in str(results[0]["detail"])


def test_other_requests_are_served_while_an_item_hangs(http: httpx.Client, base_url: str) -> None:
    slow: list[list[dict[str, object]]] = []

    def hang() -> None:
        with httpx.Client(base_url=base_url, timeout=60) as other:
            slow.append(verify(other, "test.sleep", "sleep:0.9", "sleep:0.9"))

    thread = threading.Thread(target=hang)
    thread.start()
    try:
        started = time.monotonic()
        assert http.get("/healthz").status_code == 200
        reset = http.post("/v1/envs/math/reset", json={"seed": 1})
        assert reset.status_code == 200
        assert time.monotonic() - started < 5
    finally:
        thread.join()
    assert [r["status"] for r in slow[0]] == ["ok", "ok"]


def test_client_timeouts_are_capped_and_applied(http: httpx.Client) -> None:
    results = verify(http, "test.sleep", "sleep:1.5", timeout_s=0.3)
    assert results[0]["status"] == "timeout"


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = make_server(
        tmp_path_factory.mktemp("tight"),
        ENVSERVER_MAX_QUEUE_ITEMS="2",
        ENVSERVER_REQUEST_TIMEOUT_S="1.5",
        ENVSERVER_RETRY_AFTER_S="3",
    ).start()
    yield server
    server.stop()


def test_a_full_queue_answers_429_with_retry_after(tight: LiveServer) -> None:
    body = {
        "verifier": "test.sleep",
        "timeout_s": 5,
        "items": [{"response": "sleep:1", "reference": "x"}] * 2,
    }
    busy = threading.Thread(
        target=lambda: httpx.post(f"{tight.base_url}/v1/verify", json=body, timeout=30)
    )
    busy.start()
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            ready = httpx.get(f"{tight.base_url}/readyz").json()
            if ready["in_flight"] == 2:
                break
        refused = httpx.post(
            f"{tight.base_url}/v1/verify",
            json={"verifier": "test.sleep", "items": [{"response": "x", "reference": "x"}]},
        )
        assert refused.status_code == 429, refused.text
        assert refused.headers["retry-after"] == "3"
        assert refused.headers["content-type"].startswith("application/problem+json")
    finally:
        busy.join()
    # Once the queue drains the same request succeeds.
    again = httpx.post(
        f"{tight.base_url}/v1/verify",
        json={"verifier": "test.sleep", "items": [{"response": "x", "reference": "x"}]},
    )
    assert again.status_code == 200


def test_a_request_past_its_deadline_answers_504_and_frees_the_pool(tight: LiveServer) -> None:
    body = {
        "verifier": "test.sleep",
        "timeout_s": 20,
        "items": [{"response": "sleep:10", "reference": "x"}],
    }
    started = time.monotonic()
    response = httpx.post(f"{tight.base_url}/v1/verify", json=body, timeout=30)
    assert response.status_code == 504, response.text
    assert time.monotonic() - started < 5
    assert httpx.get(f"{tight.base_url}/readyz").json()["in_flight"] == 0
    ok = httpx.post(
        f"{tight.base_url}/v1/verify",
        json={"verifier": "test.sleep", "items": [{"response": "x", "reference": "x"}] * 2},
    )
    assert [r["reward"] for r in ok.json()["results"]] == [1.0, 1.0]


def test_metrics_record_worker_failures(http: httpx.Client) -> None:
    verify(http, "test.spin", "spin")
    text = http.get("/metrics").text
    assert 'envserver_worker_failures_total{reason="timeout"}' in text


def test_inline_calls_run_here_take_no_queue_place_and_keep_their_errors() -> None:
    executor = Executor(1, max_queue_items=1)
    try:
        calls = [Call(os.getpid, (), 5, inline=True)] * 20 + [
            Call(int, ("x",), 5, inline=True),
            Call(os.getpid, (), 5),
        ]
        outcomes = asyncio.run(executor.run(calls))
    finally:
        executor.close()
    assert [o.value for o in outcomes[:20]] == [os.getpid()] * 20
    assert outcomes[20].status == "error"
    assert isinstance(outcomes[20].raised, ValueError)  # for the service to map, as a worker's
    assert outcomes[21].status == "ok"
    assert outcomes[21].value not in (None, os.getpid())
    assert executor.in_flight == 0
