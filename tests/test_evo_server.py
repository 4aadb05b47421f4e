"""EvoEnv over HTTP on real servers: the ten seeds served from the first start, submissions and
their stage reports, admitted environments served as ``evo/<name>`` with task ids at once on
every process, retire (410) and restore, a restart that keeps the store, two replicas sharing
one PostgreSQL store, and an ``evo/construct`` episode."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from openapi_schema_validator import OAS31Validator

from environments.evo.construct import expert_source
from environments.evo.contract import check_source
from environments.evo.program import run_calls, task_call
from environments.evo.seeds import seed_sources
from tests.conftest import make_server

SEEDS = seed_sources()
LIS = "evo/longest_increasing_subsequence"
SEED_IDS = sorted(f"evo/{check_source(source).name}" for source in SEEDS.values())


def submit(http: httpx.Client, source: str, poll_s: float = 0.2, **extra: Any) -> dict[str, Any]:
    """Submit and wait for the verdict (polling every ``poll_s``)."""
    reply = http.post("/v1/evo/submissions", json={"source": source, **extra})
    assert reply.status_code == 202, reply.text
    submission = reply.json()["id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status: dict[str, Any] = http.get(f"/v1/evo/submissions/{submission}").json()
        if status["status"] != "pending":
            return status
        time.sleep(poll_s)
    raise AssertionError(f"submission {submission} still pending")


def oracle(seed: int, difficulty: int = 1) -> str:
    task = run_calls(SEEDS["lis"], [task_call(seed, difficulty)])[0]
    return str(task.value["reference"])


def expert(seed: int) -> str:
    """A new environment (not a seed): the construction expert's recurrence for ``seed``."""
    return expert_source(seed)


def test_a_fresh_server_serves_the_ten_seeds_and_a_restart_keeps_them_once(
    tmp_path: Path,
) -> None:
    with (
        make_server(tmp_path) as server,
        httpx.Client(base_url=server.base_url, timeout=60) as http,
    ):
        envs = http.get("/v1/evo/envs").json()
        assert sorted(e["id"] for e in envs) == SEED_IDS
        assert {e["version"] for e in envs} == {1}
        catalogue = {e["id"] for e in http.get("/v1/envs").json()["envs"]}
        assert set(SEED_IDS) <= catalogue
        provenance = http.get(f"/v1/evo/submissions/{envs[0]['submission']}").json()
        assert (provenance["submitter"], provenance["status"]) == ("seed", "admitted")
        assert [r["stage"] for r in provenance["reports"]] == ["L1", "L2", "L3", "L4", "L5"]
        reset = http.post(f"/v1/envs/{LIS}/reset", json={"seed": 7}).json()
        assert reset["task_id"] == f"{LIS}@1/7"
        step = http.post(
            f"/v1/envs/{LIS}/step", json={"state": reset["state"], "action": oracle(7)}
        ).json()
        assert (step["reward"], step["status"]) == (1.0, "ok")
        assert http.post("/v1/evo/envs/planted_subset_sum/retire").status_code == 200
    with (
        make_server(tmp_path) as server,
        httpx.Client(base_url=server.base_url, timeout=60) as http,
    ):
        # Restarted on the same store: the seeds are not planted again, a retired one stays so.
        everything = http.get("/v1/evo/envs", params={"include_retired": "true"}).json()
        assert sorted(e["id"] for e in everything) == SEED_IDS
        serving = {e["id"] for e in http.get("/v1/evo/envs").json()}
        assert serving == set(SEED_IDS) - {"evo/planted_subset_sum"}


def test_submissions_are_admitted_served_retired_restored_and_survive_a_restart(
    tmp_path: Path,
) -> None:
    new, name = expert(11), "evo/recurrence_11"
    with (
        make_server(tmp_path) as server,
        httpx.Client(base_url=server.base_url, timeout=60) as http,
    ):
        admitted = submit(http, new, submitter="alice")
        assert (admitted["status"], admitted["env"], admitted["submitter"]) == (
            "admitted", f"{name}@1", "alice",
        )  # fmt: skip
        assert [r["stage"] for r in admitted["reports"]] == ["L1", "L2", "L3", "L4", "L5"]
        assert "uncalibrated" in admitted["reports"][3]["detail"]

        trivial = SEEDS["knapsack"].split("def score")[0] + "def score(instance, response):\n" \
            "    return 1.0\n"  # fmt: skip
        rejected = submit(http, trivial)
        assert (rejected["status"], rejected["stage"]) == ("rejected", "L2")
        assert "junk" in rejected["reason"]
        # A seed under another name: a duplicate of the planted pool.
        duplicate = submit(http, SEEDS["lis"].replace("longest_increasing_subsequence", "lis_copy"))
        assert (duplicate["status"], duplicate["stage"]) == ("rejected", "L5")

        catalogue = http.get("/v1/envs").json()
        (entry,) = [e for e in catalogue["envs"] if e["id"] == LIS]
        assert entry["options_schema"]["properties"]["difficulty"]["enum"] == [1, 2, 3, 4, 5]
        assert name in [e["id"] for e in http.get("/v1/evo/envs").json()]
        assert http.get(f"/v1/envs/{name}").json()["version"] == "1"
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
        boolean = http.post(f"/v1/envs/{LIS}/reset", json={"options": {"difficulty": True}})
        assert boolean.status_code == 422, boolean.text

        assert http.post("/v1/evo/envs/longest_increasing_subsequence/retire").json()["retired"]
        # Retired on this process: every process (and its pool workers) refuses it at once.
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
        assert name in {e["id"] for e in http.get("/v1/evo/envs").json()}


def test_admitted_means_served_by_every_server_process_and_pool_worker_at_once(
    tmp_path: Path,
) -> None:
    # Two server processes on one port, each with its own pool worker: the submission, the
    # status poll and the reset reach any of them; the reset runs on a pool worker.
    answers = {
        seed: run_calls(expert(seed), [task_call(1, 1)])[0].value["reference"] for seed in range(6)
    }
    with (
        make_server(tmp_path, "--workers", "2", ENVSERVER_SANDBOX_WORKERS="2") as server,
        httpx.Client(base_url=server.base_url, timeout=60) as http,
    ):
        for seed in range(6):
            assert submit(http, expert(seed), poll_s=0.01)["status"] == "admitted"
            env_id = f"evo/recurrence_{seed}"
            for _ in range(3):  # at once, on whichever process answers
                reset = http.post(f"/v1/envs/{env_id}/reset", json={"seed": 1})
                assert reset.status_code == 200, reset.text
                assert reset.json()["status"] == "ok" and reset.json()["state"], reset.text
                step = http.post(
                    f"/v1/envs/{env_id}/step",
                    json={"state": reset.json()["state"], "action": answers[seed]},
                ).json()
                assert step["reward"] == 1.0, step
        unknown = http.post("/v1/envs/evo/never_admitted/reset", json={"seed": 1})
        assert (unknown.status_code, unknown.headers["content-type"]) == (
            404, "application/problem+json",
        )  # fmt: skip


def test_an_evo_construct_episode_with_a_valid_submission_earns_a_positive_reward(
    base_url: str,
) -> None:
    with httpx.Client(base_url=base_url, timeout=180) as http:
        reset = http.post("/v1/envs/evo/construct/reset", json={"seed": 4}).json()
        assert "generate(seed, difficulty)" in reset["observation"]
        action = f"```python\n{expert_source(4)}```"
        step = http.post(
            "/v1/envs/evo/construct/step", json={"state": reset["state"], "action": action}
        ).json()
        assert step["status"] == "ok", step
        assert step["reward"] > 0 and step["terminated"]
        assert step["metrics"]["stages_passed"] == 1.0
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


def test_two_replicas_sharing_a_postgresql_store_serve_the_same_environments(
    tmp_path: Path, postgres_url: str
) -> None:
    store = {"ENVSERVER_EVO_STORE": postgres_url, "ENVSERVER_SECRET": "s" * 40}
    with (
        make_server(tmp_path / "a", **store) as a,
        make_server(tmp_path / "b", **store) as b,
        httpx.Client(base_url=a.base_url, timeout=60) as first,
        httpx.Client(base_url=b.base_url, timeout=60) as second,
    ):
        # Both planted the seeds on one store at once: each once.
        assert sorted(e["id"] for e in second.get("/v1/evo/envs").json()) == SEED_IDS
        assert submit(first, expert(21))["status"] == "admitted"
        # Admitted on one replica: served by the other at once.
        assert "evo/recurrence_21" in {e["id"] for e in second.get("/v1/envs").json()["envs"]}
        # A task started on one replica is finished on the other.
        reset = first.post(f"/v1/envs/{LIS}/reset", json={"seed": 3}).json()
        step = second.post(
            f"/v1/envs/{LIS}/step", json={"state": reset["state"], "action": oracle(3)}
        ).json()
        assert step["reward"] == 1.0
        second.post("/v1/evo/envs/longest_increasing_subsequence/retire")
        assert first.post(f"/v1/envs/{LIS}/reset", json={"seed": 3}).status_code == 410


EVO_BAD = [
    # (status, method, path, JSON body or raw bytes)
    (422, "POST", "/v1/evo/submissions", {"code": "x"}),
    (422, "POST", "/v1/evo/submissions",
     {"source": "x", "rollouts": [{"seed": 1, "difficulty": False, "response": "x"}]}),
    (422, "POST", "/v1/evo/submissions",
     {"source": "x", "rollouts": [{"seed": True, "difficulty": 1, "response": "x"}]}),
    (400, "POST", "/v1/evo/submissions", b"{"),
    (415, "POST", "/v1/evo/submissions", b"source"),
    (404, "GET", "/v1/evo/submissions/nope", None),
    (422, "GET", "/v1/evo/envs?include_retired=perhaps", None),
    (404, "POST", "/v1/evo/envs/nope/retire", None),
    (404, "POST", "/v1/evo/envs/nope/restore", None),
]  # fmt: skip


@pytest.mark.parametrize(("status", "method", "path", "body"), EVO_BAD)
def test_every_error_of_the_evo_routes_is_a_documented_problem(
    base_url: str, status: int, method: str, path: str, body: Any
) -> None:
    headers = {"content-type": "application/json" if body != b"source" else "text/plain"}
    reply = httpx.request(
        method, base_url + path, timeout=60, headers=headers,
        json=body if not isinstance(body, bytes) else None,
        content=body if isinstance(body, bytes) else None,
    )  # fmt: skip
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"] == "application/problem+json"
    spec = httpx.get(f"{base_url}/openapi.json", timeout=30).json()
    template = re.sub(r"/(nope)(?=/|$)", "/{x}", path.split("?", maxsplit=1)[0])
    (operation,) = [
        operations[method.lower()]
        for documented, operations in spec["paths"].items()
        if re.sub(r"\{[a-z_]+\}", "{x}", documented) == template
    ]
    documented = operation["responses"][str(status)]
    schema = documented["content"]["application/problem+json"]["schema"]
    OAS31Validator({**schema, "components": spec["components"]}).validate(reply.json())
