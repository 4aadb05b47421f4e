"""A server started as the README starts it (``envserver serve``) with every optional tool
configured at once: a ``tamarin-prover`` (a stand-in replaying recorded runs), ``ALFWORLD_DATA``
and PostgreSQL for the evo store. It must become ready and serve each of those families
(issue 24: with a prover configured the server never became ready, and no test started one)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import make_server
from tests.optional_tools import LEMMA, PROOF, TUTORIAL, optional_tools
from tests.server import LiveServer
from tests.test_evo_server import expert, submit


@pytest.fixture(scope="module")
def configured(tmp_path_factory: pytest.TempPathFactory, postgres_url: str) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("configured")
    # As a user starts it: warm before ready (the other test servers skip the warm-up).
    with make_server(
        folder, ENVSERVER_EVO_STORE=postgres_url, ENVSERVER_WARM_UP="true", **optional_tools(folder)
    ) as server:
        yield server


@pytest.fixture
def http(configured: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=configured.base_url, timeout=120) as client:
        yield client


def test_it_is_ready_with_nothing_disabled(http: httpx.Client) -> None:
    ready = http.get("/readyz")
    assert ready.status_code == 200, ready.text
    disabled = {entry["name"] for entry in ready.json()["disabled"]}
    assert not disabled & {"tamarin.proof", "tamarin/proof", "tamarin", "alfworld", "evo"}


def test_a_tamarin_proof_is_scored_by_the_configured_prover(http: httpx.Client) -> None:
    reference = {"theory": TUTORIAL, "lemma": LEMMA}
    items = [
        {"response": f"```\n{PROOF}\n```", "reference": reference},
        {"response": "simplify\nby sorry", "reference": reference},  # never recorded
    ]
    results = http.post("/v1/verify", json={"verifier": "tamarin.proof", "items": items})
    assert results.status_code == 200, results.text
    proved, unrecorded = results.json()["results"]
    assert (proved["status"], proved["reward"]) == ("ok", 1.0), proved
    assert proved["components"]["verified"] == 1.0
    # The stand-in refuses what was never recorded: no verdict, never a reward of 0.
    assert (unrecorded["status"], unrecorded["reward"]) == ("error", None), unrecorded


def test_alfworld_serves_the_released_games(http: httpx.Client) -> None:
    options = {"games": "released", "engine": "textworld", "split": "valid_unseen",
               "expert_plan": True}  # fmt: skip
    reset = http.post("/v1/envs/alfworld/reset", json={"seed": 1, "options": options}).json()
    assert reset["status"] == "ok", reset
    step = http.post(
        "/v1/envs/alfworld/step",
        json={"state": reset["state"], "action": reset["info"]["expert_plan"][0]},
    ).json()
    assert step["status"] == "ok", step


def test_evo_serves_the_seeds_and_admits_into_the_postgresql_store(http: httpx.Client) -> None:
    listed = {env["id"] for env in http.get("/v1/evo/envs").json()}
    assert "evo/longest_increasing_subsequence" in listed  # a seed, planted in the fresh store
    admitted = submit(http, expert(12))
    assert (admitted["status"], admitted["env"]) == ("admitted", "evo/recurrence_12@1"), admitted
    assert "evo/recurrence_12" in {env["id"] for env in http.get("/v1/evo/envs").json()}
    for env in ("longest_increasing_subsequence", "recurrence_12"):
        reset = http.post(f"/v1/envs/evo/{env}/reset", json={"seed": 3})
        assert reset.json()["status"] == "ok", reset.text
