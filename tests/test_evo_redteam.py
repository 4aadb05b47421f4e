"""The evo family's red-team suite (``environments/evo/redteam.toml``), every case scored
in-process the way ``/v1/verify`` scores a task id: the seed environments a fresh store serves,
their code run in a real sandbox."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from environments.evo.served import EvoPool
from environments.single_turn import SingleTurnEnvironment
from environments.task_id import TaskId

SUITE = Path(__file__).parents[1] / "environments" / "evo" / "redteam.toml"
CASES: list[dict[str, Any]] = tomllib.loads(SUITE.read_text())["case"]


def test_the_suite_is_well_formed() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names))
    for case in CASES:
        assert set(case) == {"name", "why", "task_id", "response", "expect"}, case["name"]
        assert case["expect"] in ("zero", "full")
    assert {case["expect"] for case in CASES} == {"zero", "full"}


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fresh store: opening it plants the ten seeds."""
    return f"sqlite:///{tmp_path_factory.mktemp('store') / 'evo.sqlite'}"


POOL = EvoPool()


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_each_case_holds(
    case: dict[str, Any], store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENVSERVER_EVO_STORE", store_url)
    task = TaskId.parse(case["task_id"])
    env = POOL.find(task.env)
    assert isinstance(env, SingleTurnEnvironment), task.env
    assert env.spec.version == task.version
    options = env.spec.options_model.model_validate(task.options)
    score = env.score_response(task.seed, options, case["response"])
    if case["expect"] == "zero":
        assert (score.reward, score.status) in ((0.0, "ok"), (0.0, "invalid")), score
    else:
        assert (score.reward, score.status) == (1.0, "ok"), score
