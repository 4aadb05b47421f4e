"""The sva family's red-team suite (environments/sva/redteam.toml): every case is scored in
this process (by task id through the registry, or with the named verifier) and must come out as
the case expects."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyslang")

from environments.single_turn import SingleTurnEnvironment
from environments.task_id import TaskId
from verifiers.score import Score
from verifiers.sva import VERIFIERS, SvaOptions

SUITE = Path(__file__).parent.parent / "environments" / "sva" / "redteam.toml"
CASES: list[dict[str, Any]] = tomllib.loads(SUITE.read_text(encoding="utf-8"))["case"]


def _score(case: dict[str, Any]) -> Score:
    if "task_id" in case:
        from envserver.registry import get_registry

        task = TaskId.parse(case["task_id"])
        env = get_registry().env(task.env)
        assert isinstance(env, SingleTurnEnvironment)
        assert task.version == env.spec.version, case["task_id"]
        options = env.spec.options_model.model_validate(task.options)
        return env.score_response(task.seed, options, case["response"])
    verifier = {v.name: v for v in VERIFIERS}[case["verifier"]]
    options = SvaOptions(**case.get("options", {}))
    return verifier(case["response"], case["reference"], options)


def test_suite_is_well_formed() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names))
    for case in CASES:
        assert case["why"] and case["expect"] in ("zero", "invalid", "full", "below_full")
        assert ("task_id" in case) != ("verifier" in case), case["name"]
    expects = {case["expect"] for case in CASES}
    assert expects == {"zero", "invalid", "full", "below_full"}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case_holds(case: dict[str, Any]) -> None:
    score = _score(case)
    expect = case["expect"]
    if expect == "zero":
        assert score.status in ("ok", "invalid") and score.reward == 0.0, score
    elif expect == "invalid":
        assert (score.status, score.reward) == ("invalid", 0.0), score
    elif expect == "full":
        assert (score.status, score.reward) == ("ok", 1.0), score
    else:
        assert score.status == "ok" and score.reward is not None and score.reward < 1.0, score
