"""The opt and webshop red-team suites hold: every case of ``environments/{opt,webshop}/
redteam.toml`` is scored here in-process, as ``envserver audit`` scores it over HTTP, and must
meet its ``expect``.

WebShop episodes run on the shop a default server serves (10,000 synthetic products, catalogue
seed 0), with its index built in a temporary folder.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from environments.base import EnvironmentInputError, EpisodeFinished, SingleTurnScoring
from environments.task_id import TaskId
from environments.webshop.family import WebShopEnv
from environments.webshop.shop import Shop, ShopConfig
from envserver.registry import get_registry
from verifiers.score import Score

ROOT = Path(__file__).resolve().parents[1]
SUITES = {family: ROOT / "environments" / family / "redteam.toml" for family in ("opt", "webshop")}
REGISTRY = get_registry()


def _cases(family: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = tomllib.loads(SUITES[family].read_text())["case"]
    return cases


CASES = {(family, case["name"]): case for family in SUITES for case in _cases(family)}


@pytest.fixture(scope="module")
def webshop(tmp_path_factory: pytest.TempPathFactory) -> WebShopEnv:
    return WebShopEnv(Shop(ShopConfig(cache_dir=tmp_path_factory.mktemp("webshop-index"))))


def _single(case: dict[str, Any]) -> Score:
    if "task_id" in case:
        task = TaskId.parse(case["task_id"])
        env = REGISTRY.env(task.env)
        assert task.version == env.spec.version, case["task_id"]
        options = env.spec.options_model.model_validate(task.options)
        assert isinstance(env, SingleTurnScoring), task.env
        return env.score_response(task.seed, options, case["response"])
    verifier = REGISTRY.verifiers[case["verifier"]]
    options = verifier.options_model.model_validate(case.get("options", {}))
    return verifier(case["response"], case["reference"], options)


def _wins(env: WebShopEnv, case: dict[str, Any]) -> bool:
    options = env.spec.options_model.model_validate(case.get("options", {}))
    state = env.reset(case["seed"], options).state
    for action in case["actions"]:
        try:
            result = env.step(state, action)
        except (EnvironmentInputError, EpisodeFinished):
            continue  # refused (422/409 over HTTP): the episode does not move
        assert result.score.status in ("ok", "invalid"), (action, result.score)
        if result.terminated:
            return result.score.reward == 1.0
        state = result.state
    return False


def test_the_suites_have_the_required_cases() -> None:
    for family in SUITES:
        names = [case["name"] for case in _cases(family)]
        assert len(names) == len(set(names)), f"{family}: names must be unique"
    expects = {case["expect"] for case in CASES.values()}
    assert {"zero", "invalid", "full", "below_full", "no_win"} <= expects


@pytest.mark.parametrize(("family", "name"), sorted(CASES))
def test_each_case_holds(family: str, name: str, webshop: WebShopEnv) -> None:
    case = CASES[family, name]
    targets = [key for key in ("task_id", "verifier", "env") if key in case]
    assert len(targets) == 1, f"{name}: exactly one of task_id, verifier, env"
    expect = case["expect"]
    if "env" in case:
        assert case["env"] == "webshop" and expect == "no_win", name
        assert not _wins(webshop, case), name
        return
    score = _single(case)
    assert score.status in ("ok", "invalid"), (name, score)
    assert score.reward is not None
    if expect == "zero":
        assert score.reward == 0.0, (name, score)
    elif expect == "invalid":
        assert score.status == "invalid", (name, score)
    elif expect == "full":
        assert score.reward == 1.0, (name, score)
    else:
        assert expect == "below_full" and score.reward < 1.0, (name, score)
