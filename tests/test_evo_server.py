"""EvoEnv over HTTP on real servers: submissions and their stage reports, admitted environments
served as ``evo/<name>`` with task ids, retire (410) and restore, a restart that keeps the
store, two replicas sharing one PostgreSQL store, and an ``evo/construct`` episode."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from environments.evo.construct import Construct
from environments.evo.program import run_calls, task_call
from environments.evo.seeds import seed_sources
from tests.conftest import make_server
from tests.postgres_support import PostgresUnavailable, postgres_server

SEEDS = seed_sources()
LIS = "evo/longest_increasing_subsequence"


def submit(http: httpx.Client, source: str, **extra: Any) -> dict[str, Any]:
    """Submit and wait for the verdict."""
    reply = http.post("/v1/evo/submissions", json={"source": source, **extra})
    assert reply.status_code == 202, reply.text
    submission = reply.json()["id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status: dict[str, Any] = http.get(f"/v1/evo/submissions/{submission}").json()
        if status["status"] != "pending":
            return status
        time.sleep(0.2)
    raise AssertionError(f"submission {submission} still pending")


def oracle(seed: int, difficulty: int = 1) -> str:
    task = run_calls(SEEDS["lis"], [task_call(seed, difficulty)])[0]
    return str(task.value["reference"])


def test_submissions_are_admitted_served_retired_restored_and_survive_a_restart(
    tmp_path: Path,
) -> None:
    with (
        make_server(tmp_path) as server,
        httpx.Client(base_url=server.base_url, timeout=60) as http,
    ):
        admitted = submit(http, SEEDS["lis"], submitter="alice")
        assert (admitted["status"], admitted["env"], admitted["submitter"]) == (
            "admitted", f"{LIS}@1", "alice",
        )  # fmt: skip
        assert [r["stage"] for r in admitted["reports"]] == ["L1", "L2", "L3", "L4", "L5"]
        assert "uncalibrated" in admitted["reports"][3]["detail"]

        trivial = SEEDS["knapsack"].split("def score")[0] + "def score(instance, response):\n" \
            "    return 1.0\n"  # fmt: skip
        rejected = submit(http, trivial)
        assert (rejected["status"], rejected["stage"]) == ("rejected", "L2")
        assert "junk" in rejected["reason"]
        duplicate = submit(http, SEEDS["lis"].replace("longest_increasing_subsequence", "lis_copy"))
        assert (duplicate["status"], duplicate["stage"]) == ("rejected", "L5")

        catalogue = http.get("/v1/envs").json()
        (entry,) = [e for e in catalogue["envs"] if e["id"] == LIS]
        assert entry["options_schema"]["properties"]["difficulty"]["enum"] == [1, 2, 3, 4, 5]
        assert [e["id"] for e in http.get("/v1/evo/envs").json()] == [LIS]
        assert http.get(f"/v1/envs/{LIS}").json()["version"] == "1"
        assert http.get(f"/v1/envs/{LIS}/reset").status_code == 405

        reset = http.post(f"/v1/envs/{LIS}/reset", json={"seed": 7, "options": {"difficulty": 2}})
        assert reset.status_code == 200, reset.text
        task_id = reset.json()["task_id"]
        assert task_id == f"{LIS}@1/7?difficulty=2"
        assert "<answer>" in reset.json()["observation"]
        step = http.post(
            f"/v1/envs/{LIS}/step", json={"state": reset.json()["state"], "action": oracle(7, 2)}
        ).json()
        assert (step["reward"], step["status"], step["terminated"]) == (1.0, "ok", True)
        items = [
            {"task_id": task_id, "response": oracle(7, 2)},
            {"task_id": task_id, "response": "<answer>-1</answer>"},
            {"task_id": task_id, "response": "no idea"},
        ]
        results = http.post("/v1/verify", json={"items": items}).json()["results"]
        assert [(r["reward"], r["status"]) for r in results] == [
            (1.0, "ok"), (0.0, "ok"), (0.0, "invalid"),
        ]  # fmt: skip

        assert http.post("/v1/evo/envs/longest_increasing_subsequence/retire").json()["retired"]
        gone = http.post("/v1/verify", json={"items": items[:1]})
        assert gone.status_code == 410
        assert gone.headers["content-type"] == "application/problem+json"
        assert "retired" in gone.json()["detail"]
        assert http.post(f"/v1/envs/{LIS}/reset", json={"task_id": task_id}).status_code == 410
        assert LIS not in {e["id"] for e in http.get("/v1/envs").json()["envs"]}
        assert http.post("/v1/evo/envs/longest_increasing_subsequence/restore").status_code == 200
        assert http.post("/v1/verify", json={"items": items[:1]}).json()["results"][0]["reward"]

        missing = http.get("/v1/evo/submissions/nope")
        assert (missing.status_code, missing.headers["content-type"]) == (
            404, "application/problem+json",
        )  # fmt: skip
        assert http.post("/v1/evo/envs/nope/retire").status_code == 404
        assert http.post("/v1/evo/submissions", json={"code": "x"}).status_code == 422

    # The same data directory after a restart: the store, and what it serves, are kept.
    with (
        make_server(tmp_path) as server,
        httpx.Client(base_url=server.base_url, timeout=60) as http,
    ):
        result = http.post("/v1/verify", json={"items": items[:1]}).json()["results"][0]
        assert (result["reward"], result["status"]) == (1.0, "ok")
        assert http.get(f"/v1/evo/submissions/{admitted['id']}").json()["status"] == "admitted"


def test_an_evo_construct_episode_with_a_valid_submission_earns_a_positive_reward(
    base_url: str,
) -> None:
    with httpx.Client(base_url=base_url, timeout=180) as http:
        reset = http.post("/v1/envs/evo/construct/reset", json={"seed": 4}).json()
        assert "generate(seed, difficulty)" in reset["observation"]
        action = Construct().expert_action({"seed": 4})
        step = http.post(
            "/v1/envs/evo/construct/step", json={"state": reset["state"], "action": action}
        ).json()
        assert step["status"] == "ok", step
        assert step["reward"] > 0 and step["terminated"]
        assert step["components"]["stages_passed"] == 1.0
        assert [r["stage"] for r in step["info"]["reports"]] == ["L1", "L2", "L3", "L4", "L5"]
        # A module that the pipeline rejects: reward 0, with the stage.
        reset = http.post("/v1/envs/evo/construct/reset", json={"seed": 5}).json()
        leaky = action.replace(
            '")? Reply with "', '") = " + str(_term(instance)) + "? Reply with "'
        )
        assert leaky != action
        step = http.post(
            "/v1/envs/evo/construct/step", json={"state": reset["state"], "action": leaky}
        ).json()
        assert (step["reward"], step["info"]["stage"]) == (0.0, "L3"), step


@pytest.fixture(scope="module")
def shared_store() -> Iterator[str]:
    try:
        with postgres_server() as url:
            yield url
    except PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL could not start here: {exc}")


def test_two_replicas_sharing_a_postgresql_store_serve_the_same_environments(
    tmp_path: Path, shared_store: str
) -> None:
    store = {"ENVSERVER_EVO_STORE": shared_store, "ENVSERVER_SECRET": "s" * 40}
    with (
        make_server(tmp_path / "a", **store) as a,
        make_server(tmp_path / "b", **store) as b,
        httpx.Client(base_url=a.base_url, timeout=60) as first,
        httpx.Client(base_url=b.base_url, timeout=60) as second,
    ):
        assert submit(first, SEEDS["lis"])["status"] == "admitted"
        time.sleep(1.2)  # what a replica read from the store stays fresh for a second
        assert LIS in {e["id"] for e in second.get("/v1/envs").json()["envs"]}
        # A task started on one replica is finished on the other.
        reset = first.post(f"/v1/envs/{LIS}/reset", json={"seed": 3}).json()
        step = second.post(
            f"/v1/envs/{LIS}/step", json={"state": reset["state"], "action": oracle(3)}
        ).json()
        assert step["reward"] == 1.0
        second.post("/v1/evo/envs/longest_increasing_subsequence/retire")
        time.sleep(1.2)
        assert first.post(f"/v1/envs/{LIS}/reset", json={"seed": 3}).status_code == 410
