"""The HTTP API end to end, against a real uvicorn server process on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import make_server

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=30) as client:
        yield client


def assert_problem(
    response: httpx.Response, status: int, kind: str | None = None
) -> dict[str, object]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, object] = response.json()
    assert body["status"] == status
    assert body["title"] and body["detail"]
    if kind is not None:
        assert body["type"] == f"https://envserver.dev/problems/{kind}", body
    return body


# --- happy paths ---------------------------------------------------------------------------


def test_catalogue_lists_math_with_its_options_schema(http: httpx.Client) -> None:
    catalogue = http.get("/v1/envs").json()
    envs = {env["id"]: env for env in catalogue["envs"]}
    assert envs["math"]["kind"] == "single_turn"
    properties = envs["math"]["options_schema"]["properties"]
    assert {"difficulty", "max_attempts"} <= set(properties)
    assert {v["name"] for v in catalogue["verifiers"]} >= {"math", "test.sleep"}
    # Only what needs an absent binary may be disabled, and it says how to enable it.
    assert {d["name"] for d in catalogue["disabled"]} <= {"tamarin.proof"}
    assert all(d["reason"] and d["fix"] for d in catalogue["disabled"])
    assert {"sva/nl2sva-human", "sva/nl2sva-machine", "tamarin/proof"} <= set(envs)
    assert http.get("/v1/envs/math").json() == envs["math"]


def test_reset_then_step_with_a_wrong_answer(http: httpx.Client) -> None:
    reset = http.post("/v1/envs/math/reset", json={"seed": 5, "options": {"difficulty": "easy"}})
    assert reset.status_code == 200
    body = reset.json()
    assert body["status"] == "ok"
    assert body["task_id"] == "math@1/5?difficulty=easy"
    assert "boxed" in body["observation"]
    step = http.post(
        "/v1/envs/math/step", json={"state": body["state"], "action": "\\boxed{123456789}"}
    ).json()
    assert step["status"] == "ok"
    assert step["reward"] == 0.0
    assert step["terminated"] is True
    assert step["components"] == {"correct": 0.0}


def test_reset_is_deterministic_and_task_ids_reproduce_it(http: httpx.Client) -> None:
    first = http.post("/v1/envs/math/reset", json={"seed": 77, "options": {"difficulty": "hard"}})
    second = http.post("/v1/envs/math/reset", json={"task_id": "math@1/77?difficulty=hard"})
    assert first.json() == second.json()
    assert first.json()["state"] == second.json()["state"]


def test_reset_without_seed_draws_one_and_reports_the_task_id(http: httpx.Client) -> None:
    ids = {http.post("/v1/envs/math/reset", json={}).json()["task_id"] for _ in range(3)}
    assert len(ids) == 3
    assert all(i.startswith("math@1/") for i in ids)


def test_finished_episode_cannot_be_stepped(http: httpx.Client) -> None:
    state = http.post("/v1/envs/math/reset", json={"seed": 1}).json()["state"]
    done = http.post("/v1/envs/math/step", json={"state": state, "action": "\\boxed{0}"}).json()
    assert done["terminated"]
    again = http.post("/v1/envs/math/step", json={"state": done["state"], "action": "1"})
    assert_problem(again, 409, "episode-finished")


def test_an_unfinished_token_can_be_replayed_as_the_readme_says(http: httpx.Client) -> None:
    # README "State tokens can be replayed": max_attempts binds a client that steps each token
    # once; the token from before an attempt can be stepped again (the harness must own tokens).
    options = {"max_attempts": 1}
    state = http.post("/v1/envs/math/reset", json={"seed": 1, "options": options}).json()["state"]
    wrong = {"state": state, "action": "\\boxed{-987654321}"}
    first = http.post("/v1/envs/math/step", json=wrong).json()
    assert first["terminated"] and first["info"]["attempt"] == 1
    again = http.post("/v1/envs/math/step", json=wrong).json()
    assert again["status"] == "ok" and again["info"]["attempt"] == 1
    assert_problem(http.post("/v1/envs/math/step", json={**wrong, "state": first["state"]}), 409)


def test_batch_reset_and_step_keep_order(http: httpx.Client) -> None:
    items = [{"seed": s, "options": {"difficulty": "medium"}} for s in range(6)]
    resets = http.post("/v1/envs/math/reset/batch", json={"items": items}).json()["results"]
    assert [r["task_id"] for r in resets] == [f"math@1/{s}" for s in range(6)]
    singles = [http.post("/v1/envs/math/reset", json=item).json() for item in items]
    assert resets == singles
    steps = http.post(
        "/v1/envs/math/step/batch",
        json={"items": [{"state": r["state"], "action": "no answer"} for r in resets]},
    ).json()["results"]
    assert [s["status"] for s in steps] == ["invalid"] * 6
    assert all(s["reward"] == 0.0 for s in steps)


def test_verify_with_references_and_task_ids(http: httpx.Client) -> None:
    body = {
        "verifier": "math",
        "items": [
            {"id": "a", "response": "so $\\boxed{\\frac{1}{2}}$", "reference": "0.5"},
            {"id": "b", "response": "\\boxed{3}", "reference": "4"},
            {"id": "c", "response": "no idea", "reference": "4"},
            {"id": "d", "response": "\\boxed{1}", "task_id": "math@1/3?difficulty=easy"},
        ],
    }
    results = http.post("/v1/verify", json=body).json()["results"]
    assert [r["id"] for r in results] == ["a", "b", "c", "d"]
    assert [(r["status"], r["reward"]) for r in results[:3]] == [
        ("ok", 1.0),
        ("ok", 0.0),
        ("invalid", 0.0),
    ]
    assert results[3]["status"] in ("ok", "invalid")
    assert all(r["latency_ms"] >= 0 for r in results)


def test_verify_options_reach_the_verifier(http: httpx.Client) -> None:
    item = {"response": "The answer is 4.", "reference": "4"}
    auto = http.post("/v1/verify", json={"verifier": "math", "items": [item]}).json()
    boxed = http.post(
        "/v1/verify", json={"verifier": "math", "options": {"extraction": "boxed"}, "items": [item]}
    ).json()
    assert auto["results"][0]["reward"] == 1.0
    assert boxed["results"][0]["status"] == "invalid"


def test_health_readiness_docs_and_openapi(http: httpx.Client) -> None:
    assert http.get("/healthz").json()["status"] == "ok"
    ready = http.get("/readyz").json()
    assert ready["status"] == "ok" and ready["pool_workers"] == 2 and ready["envs"] >= 1
    # Readiness counts what the catalogue lists (EvoEnv's admitted environments included);
    # liveness what the process loaded (it reads no store). Both say which process answered
    # and how many sandbox workers it has.
    listed = len(http.get("/v1/envs").json()["envs"])
    alive = http.get("/healthz").json()
    assert ready["envs"] == listed and 1 <= alive["envs"] <= listed
    for probe in (ready, alive):
        assert probe["process"] > 0 and probe["sandbox_workers"] >= 1, probe
    assert http.get("/docs").status_code == 200
    paths = http.get("/openapi.json").json()["paths"]
    assert {"/v1/verify", "/v1/envs/{env_id}/reset", "/v1/envs/{env_id}/step/batch"} <= set(paths)


def test_metrics_count_requests_and_items(http: httpx.Client) -> None:
    http.post(
        "/v1/verify", json={"verifier": "math", "items": [{"response": "1", "reference": "1"}]}
    )
    http.get("/v1/envs/nope")
    text = http.get("/metrics").text
    assert 'envserver_items_total{kind="verify",status="ok",target="math"}' in text
    assert 'route="/v1/verify",status="200"' in text
    assert 'route="/v1/envs/{env_id:path}",status="404"' in text
    assert "envserver_in_flight_items" in text


# --- bad input: every one a clear 4xx, never a 500 -----------------------------------------


def test_unknown_environment(http: httpx.Client) -> None:
    assert_problem(http.post("/v1/envs/nope/reset", json={}), 404, "unknown-environment")
    assert_problem(http.get("/v1/envs/no/such/env"), 404, "unknown-environment")


def test_wrong_method_is_405_not_an_unknown_environment(http: httpx.Client) -> None:
    response = http.get("/v1/envs/math/reset")
    assert_problem(response, 405)
    assert response.headers["allow"] == "POST"
    assert_problem(http.get("/v1/envs/math/step/batch"), 405)
    assert_problem(http.delete("/v1/verify"), 405)


def test_malformed_json(http: httpx.Client) -> None:
    response = http.post(
        "/v1/verify", content=b'{"items": [', headers={"content-type": "application/json"}
    )
    assert_problem(response, 400, "malformed-json")


def test_form_body_is_unsupported_media_type(http: httpx.Client) -> None:
    response = http.post("/v1/verify", content=b"items=1", headers={"content-type": "text/plain"})
    assert_problem(response, 415)


@pytest.mark.parametrize(
    "body",
    [
        {"items": "not a list"},
        {"verifier": "math", "items": []},
        {"verifier": "math", "items": [{"response": 5, "reference": "1"}]},
        {"verifier": "math", "items": [{"response": "1"}]},
        {"verifier": "math", "items": [{"response": "1", "reference": "1", "task_id": "math@1/1"}]},
        {"verifier": "math", "items": [{"response": "1", "reference": "1"}], "surprise": 1},
        {"verifier": "math", "timeout_s": -1, "items": [{"response": "1", "reference": "1"}]},
        [1, 2, 3],
    ],
)
def test_wrong_types_and_shapes(http: httpx.Client, body: object) -> None:
    assert_problem(http.post("/v1/verify", json=body), 422)


def test_reference_items_need_a_verifier(http: httpx.Client) -> None:
    body = {"items": [{"response": "1", "reference": "1"}]}
    assert_problem(http.post("/v1/verify", json=body), 422)


def test_unknown_verifier(http: httpx.Client) -> None:
    body = {"verifier": "astrology", "items": [{"response": "1", "reference": "1"}]}
    assert_problem(http.post("/v1/verify", json=body), 404, "unknown-verifier")


def test_invalid_options_name_the_field(http: httpx.Client) -> None:
    bad = http.post("/v1/envs/math/reset", json={"seed": 1, "options": {"difficulty": "extreme"}})
    body = assert_problem(bad, 422, "invalid-options")
    assert "difficulty" in str(body["detail"])
    unknown = http.post("/v1/envs/math/reset", json={"seed": 1, "options": {"colour": "red"}})
    assert_problem(unknown, 422, "invalid-options")
    batch = http.post(
        "/v1/envs/math/reset/batch",
        json={"items": [{"seed": 1}, {"seed": 2, "options": {"max_attempts": 0}}]},
    )
    assert "items.1.options.max_attempts" in str(assert_problem(batch, 422)["detail"])


@pytest.mark.parametrize("seed", [-1, 2**63, "seven", 1.5, "42", True])
def test_bad_seeds(http: httpx.Client, seed: object) -> None:
    # A seed is a JSON integer: its text ("42") is refused like any other text.
    assert_problem(http.post("/v1/envs/math/reset", json={"seed": seed}), 422)


def test_a_string_escaping_half_a_surrogate_pair_is_malformed_json(http: httpx.Client) -> None:
    # No UTF-8 can hold it, so no answer could echo it back: refused where the body is read.
    body = b'{"verifier": "math", "items": [{"response": "\\ud800", "reference": "1"}]}'
    response = http.post("/v1/verify", content=body, headers={"content-type": "application/json"})
    assert_problem(response, 400, "malformed-json")


@pytest.mark.parametrize(
    ("task_id", "status", "kind"),
    [
        ("math", 400, "malformed-task-id"),
        ("math@1/abc", 400, "malformed-task-id"),
        ("math@1/1?difficulty=extreme", 400, "malformed-task-id"),
        ("math@1/1?colour=red", 400, "malformed-task-id"),
        ("math@999/1", 404, "unknown-task"),
        ("nope@1/1", 404, "unknown-environment"),
    ],
)
def test_unknown_or_malformed_task_ids(
    http: httpx.Client, task_id: str, status: int, kind: str
) -> None:
    verify = http.post("/v1/verify", json={"items": [{"response": "1", "task_id": task_id}]})
    assert_problem(verify, status, kind)
    if kind != "unknown-environment":
        assert_problem(http.post("/v1/envs/math/reset", json={"task_id": task_id}), status, kind)


def test_task_id_and_seed_together_are_refused(http: httpx.Client) -> None:
    response = http.post("/v1/envs/math/reset", json={"task_id": "math@1/1", "seed": 1})
    assert_problem(response, 422)


def test_tampered_truncated_and_foreign_tokens(http: httpx.Client) -> None:
    state = http.post("/v1/envs/math/reset", json={"seed": 9}).json()["state"]
    head, body, mac = state.split(".")
    flipped = body[:10] + ("A" if body[10] != "A" else "B") + body[11:]
    tampered = http.post(
        "/v1/envs/math/step", json={"state": f"{head}.{flipped}.{mac}", "action": "1"}
    )
    assert_problem(tampered, 403, "invalid-token-signature")
    for cut in (1, 5, 40):
        truncated = http.post("/v1/envs/math/step", json={"state": state[:-cut], "action": "1"})
        # Unreadable (400) or unverifiable (403): refused either way, never repaired.
        assert_problem(truncated, truncated.status_code)
        assert truncated.status_code in (400, 403)
    garbage = http.post("/v1/envs/math/step", json={"state": "not-a-token", "action": "1"})
    assert_problem(garbage, 400, "malformed-token")
    batch = http.post(
        "/v1/envs/math/step/batch",
        json={"items": [{"state": state, "action": "1"}, {"state": flipped, "action": "1"}]},
    )
    assert "items.1.state" in str(assert_problem(batch, 400)["detail"])
    other = http.post(
        "/v1/envs/math/step/batch",
        json={
            "items": [
                {"state": state, "action": "1"},
                {"state": f"{head}.{flipped}.{mac}", "action": "1"},
            ]
        },
    )
    assert "items.1.state" in str(assert_problem(other, 403)["detail"])


def test_oversized_body_is_refused_before_parsing(tmp_path: Path) -> None:
    server = make_server(tmp_path, ENVSERVER_MAX_BODY_BYTES="4096", ENVSERVER_MAX_BATCH_ITEMS="3")
    server.start()
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            big = {"verifier": "math", "items": [{"response": "x" * 5000, "reference": "1"}]}
            assert_problem(client.post("/v1/verify", json=big), 413, "body-too-large")

            def chunks() -> Iterator[bytes]:
                yield b'{"verifier": "math", "items": [{"response": "'
                for _ in range(10):
                    yield b"x" * 1000
                yield b'", "reference": "1"}]}'

            chunked = client.post(
                "/v1/verify", content=chunks(), headers={"content-type": "application/json"}
            )
            assert_problem(chunked, 413, "body-too-large")
            small_chunked = client.post(
                "/v1/verify",
                content=iter(
                    [
                        json.dumps(
                            {
                                "verifier": "math",
                                "items": [{"response": "\\boxed{1}", "reference": "1"}],
                            }
                        ).encode()
                    ]
                ),
                headers={"content-type": "application/json"},
            )
            assert small_chunked.json()["results"][0]["reward"] == 1.0
            four = {"verifier": "math", "items": [{"response": "1", "reference": "1"}] * 4}
            assert_problem(client.post("/v1/verify", json=four), 413, "batch-too-large")
    finally:
        server.stop()


def test_api_keys(tmp_path: Path) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text("# team keys\nbob:bob-secret-key-2\n")
    server = make_server(
        tmp_path, ENVSERVER_API_KEYS="alice:alice-secret-key", ENVSERVER_API_KEYS_FILE=str(keys)
    )
    server.start()
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            missing = client.get("/v1/envs")
            assert_problem(missing, 401, "unauthorized")
            assert missing.headers["www-authenticate"].startswith("Bearer")
            wrong = client.get("/v1/envs", headers={"Authorization": "Bearer nope-nope-nope"})
            assert_problem(wrong, 401, "unauthorized")
            # Refused before the body is read: malformed JSON still gets 401, not 400.
            assert_problem(client.post("/v1/verify", content=b"{"), 401)
            for name, key in (("alice", "alice-secret-key"), ("bob", "bob-secret-key-2")):
                ok = client.get("/v1/envs", headers={"Authorization": f"Bearer {key}"})
                assert ok.status_code == 200, name
            assert client.get("/healthz").status_code == 200
            assert client.get("/readyz").status_code == 200
            assert_problem(client.get("/metrics"), 401)
            headers = {"Authorization": "Bearer alice-secret-key"}
            metrics = client.get("/metrics", headers=headers).text
            assert 'api_key="alice"' in metrics and 'api_key="bob"' in metrics
            assert "alice-secret-key" not in metrics
    finally:
        server.stop()


def test_replicas_sharing_a_secret_accept_each_others_tokens(tmp_path: Path) -> None:
    secret = {"ENVSERVER_SECRET": "a-secret-shared-by-replicas"}
    one = make_server(tmp_path / "one", **secret)
    two = make_server(tmp_path / "two", **secret)
    one.start()
    two.start()
    try:
        state = httpx.post(f"{one.base_url}/v1/envs/math/reset", json={"seed": 3}).json()["state"]
        step = httpx.post(f"{two.base_url}/v1/envs/math/step", json={"state": state, "action": "?"})
        assert step.status_code == 200 and step.json()["status"] == "invalid"
    finally:
        one.stop()
        two.stop()


def test_restart_keeps_tokens_valid(tmp_path: Path) -> None:
    server = make_server(tmp_path)
    server.start()
    state = httpx.post(f"{server.base_url}/v1/envs/math/reset", json={"seed": 4}).json()["state"]
    server.stop()
    server.start()
    try:
        step = httpx.post(
            f"{server.base_url}/v1/envs/math/step", json={"state": state, "action": "?"}
        )
        assert step.status_code == 200
    finally:
        server.stop()
