"""The math family's red-team suite (environments/math/redteam.toml), case by case: in-process
through the verifier or the environment a task id names, and the task ids through a live
server's ``POST /v1/verify``."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest

from environments.math import ENVIRONMENTS
from environments.task_id import TaskId
from verifiers.math import VERIFIER, MathOptions
from verifiers.score import Score

SUITE = Path(__file__).resolve().parents[1] / "environments" / "math" / "redteam.toml"
CASES: list[dict[str, Any]] = tomllib.loads(SUITE.read_text())["case"]
TASK_ID_CASES = [case for case in CASES if "task_id" in case]
EXPECTATIONS = {"zero", "invalid", "full", "below_full"}


def _holds(expect: str, status: str, reward: float | None) -> bool:
    return {
        "zero": status in ("ok", "invalid") and reward == 0.0,
        "invalid": status == "invalid",
        "full": status == "ok" and reward == 1.0,
        "below_full": reward is not None and reward < 1.0,
    }[expect]


def _score(case: dict[str, Any]) -> Score:
    if "task_id" in case:
        (environment,) = ENVIRONMENTS
        task = TaskId.parse(case["task_id"])
        assert (task.env, task.version) == (environment.spec.id, environment.spec.version)
        options = environment.spec.options_model.model_validate(task.options)
        return environment.score_response(task.seed, options, case["response"])
    assert case["verifier"] == VERIFIER.name
    options = MathOptions.model_validate(case.get("options", {}))
    return VERIFIER(case["response"], case["reference"], options)


def test_suite_is_well_formed() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    for case in CASES:
        assert case["why"] and case["expect"] in EXPECTATIONS, case["name"]
        assert ("task_id" in case) != ("verifier" in case), case["name"]  # exactly one
        assert ("reference" in case) == ("verifier" in case), case["name"]
        assert isinstance(case["response"], str), case["name"]
        assert set(case) <= {"name", "why", "task_id", "verifier", "reference", "options"} | {
            "response",
            "expect",
        }, case["name"]
    # Both sides of the bar: hacks that must earn nothing, equivalents that must keep scoring.
    assert {case["expect"] for case in CASES} >= {"zero", "invalid", "full"}


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_case_holds(case: dict[str, Any]) -> None:
    score = _score(case)
    assert _holds(case["expect"], score.status, score.reward), (case["response"], score)


def test_task_id_cases_hold_through_the_server(base_url: str) -> None:
    items = [
        {"id": str(i), "response": case["response"], "task_id": case["task_id"]}
        for i, case in enumerate(TASK_ID_CASES)
    ]
    with httpx.Client(base_url=base_url, timeout=120) as client:
        response = client.post("/v1/verify", json={"verifier": "math", "items": items})
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    for case, result in zip(TASK_ID_CASES, results, strict=True):
        held = _holds(case["expect"], result["status"], result["reward"])
        assert held, (case["name"], result)
