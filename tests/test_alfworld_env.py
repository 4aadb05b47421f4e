"""The ``alfworld`` environment: options, rewards, the step limit, expert plans, malformed
states, and the ``textworld`` backend (ALFWorld's engine) on generated and released games."""

from __future__ import annotations

import json
import math
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from environments.alfworld.engine import NOTHING_HAPPENS, commands, intro
from environments.alfworld.export import game_file, write
from environments.alfworld.family import AlfWorldEnv, AlfWorldOptions
from environments.alfworld.generator import generate
from environments.alfworld.names import mangle
from environments.alfworld.tables import TASK_TYPES
from environments.base import (
    EnvironmentInputError,
    EnvironmentUnavailable,
    EpisodeFinished,
    StepResult,
)

ENV = AlfWorldEnv()


def episode(options: AlfWorldOptions, seed: int, commands: list[str]) -> list[StepResult]:
    state = ENV.reset(seed, options).state
    results = []
    for command in commands:
        result = ENV.step(state, command)
        results.append(result)
        state = result.state
    return results


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_following_the_expert_plan_wins_with_reward_one(task_type: Any) -> None:
    options = AlfWorldOptions(task_type=task_type, expert_plan=True, difficulty="medium")
    first = ENV.reset(4, options)
    assert first.info["task_type"] == task_type and first.info["won"] is False
    assert first.observation.startswith("-= Welcome to TextWorld, ALFRED! =-\n\n")
    assert first.observation.endswith(f"Your task is to: {first.info['task']}.")
    results = episode(options, 4, first.info["expert_plan"])
    assert [r.score.reward for r in results] == [0.0] * (len(results) - 1) + [1.0]
    last = results[-1]
    assert last.terminated and not last.truncated and last.info["won"] is True
    assert last.info["admissible_commands"] and last.info["expert_plan"] == []
    with pytest.raises(EpisodeFinished):
        ENV.step(last.state, "look")


@pytest.mark.parametrize("mode", ["progress", "subgoal"])
def test_process_rewards_sum_to_one_on_a_won_episode(mode: Any) -> None:
    for task_type in TASK_TYPES:
        options = AlfWorldOptions(task_type=task_type, reward=mode, expert_plan=True)
        plan = ENV.reset(9, options).info["expert_plan"]
        detour = [plan[0], "inventory", "go to", *plan[1:]]
        results = episode(options, 9, detour)
        assert math.isclose(sum(r.score.reward or 0 for r in results), 1.0), task_type
        for r in results:
            assert {"won", "subgoal", "progress"} <= set(r.score.components)
            assert {"subgoals", "expert_distance"} <= set(r.score.metrics)
            assert r.score.reward == r.score.components[mode]
        assert results[-1].score.metrics["expert_distance"] == 0.0
        assert results[1].score.components["progress"] == 0.0  # inventory changes nothing


def test_a_detour_costs_progress() -> None:
    options = AlfWorldOptions(task_type="pick_heat_then_place_in_recep", reward="progress",
                              expert_plan=True, difficulty="easy")  # fmt: skip
    first = ENV.reset(2, options)
    wrong = next(c for c in first.info["admissible_commands"] if c.startswith("go to") and
                 c != first.info["expert_plan"][0])  # fmt: skip
    result = ENV.step(first.state, wrong)
    assert result.score.reward is not None
    assert result.score.metrics["expert_distance"] >= len(first.info["expert_plan"]) - 1


def test_unknown_commands_say_nothing_happens_and_count_toward_the_limit() -> None:
    options = AlfWorldOptions(difficulty="easy")
    state = ENV.reset(1, options).state
    for index in range(50):
        result = ENV.step(state, "dance" if index % 2 else "LOOK")
        assert result.observation == NOTHING_HAPPENS
        assert (result.score.status, result.score.reward) == ("invalid", 0.0)
        assert result.info["steps"] == index + 1
        assert result.truncated == (index == 49) and not result.terminated
        state = result.state
    with pytest.raises(EpisodeFinished):
        ENV.step(state, "look")
    short = episode(AlfWorldOptions(difficulty="easy", step_limit=3), 1, ["look"] * 3)
    assert [r.truncated for r in short] == [False, False, True]
    assert short[0].score.status == "ok"


def test_grammar_0_3_end_to_end() -> None:
    options = AlfWorldOptions(grammar="0.3", expert_plan=True, task_type="pick_two_obj_and_place")
    first = ENV.reset(6, options)
    assert "help" not in first.info["admissible_commands"]
    plan = first.info["expert_plan"]
    assert any(c.startswith("put ") and " in/on " in c for c in plan)
    results = episode(options, 6, plan)
    assert results[0].observation.startswith("You arrive at loc ")
    assert results[-1].terminated and results[-1].score.reward == 1.0


@pytest.mark.parametrize(
    "state",
    [
        None,
        [],
        {"engine": "quantum"},
        {"engine": "native"},
        {"engine": "native", "grammar": "0.4", "world": "{", "run": {}, "limit": 50},
        {"engine": "textworld", "commands": 3},
    ],
)
def test_malformed_states_are_input_errors(state: Any) -> None:
    with pytest.raises(EnvironmentInputError):
        ENV.step(state, "look")


def test_tampered_native_states_are_input_errors() -> None:
    state = ENV.reset(5, AlfWorldOptions()).state
    for change in ({"run": {**state["run"], "at": 10_000}}, {"limit": 0}, {"grammar": "9"},
                   {"run": {**state["run"], "held": 0}}):  # fmt: skip
        with pytest.raises(EnvironmentInputError):
            ENV.step({**state, **change}, "look")


V1_NATIVE = {"engine", "game", "world", "run", "grammar", "limit", "reward", "plan", "distance",
             "start_distance", "start_stage"}  # fmt: skip
"""The keys of a native state as ``alfworld@1`` has issued them since its first release."""


def test_states_in_tokens_issued_before_keep_decoding() -> None:
    state = ENV.reset(5, AlfWorldOptions(expert_plan=True)).state
    assert set(state) == V1_NATIVE and isinstance(state["world"], str)
    result = ENV.step(state, ENV.expert_action(state))
    assert result.score.status == "ok" and set(result.state) == V1_NATIVE


def test_a_textworld_state_issued_before_keeps_decoding() -> None:
    pytest.importorskip("textworld")
    options = AlfWorldOptions(
        engine="textworld", difficulty="easy", task_type="pick_and_place_simple"
    )
    state = ENV.reset(2, options).state
    # alfworld@1 wrote no "won" before the first step and no digest in a source.
    old = {key: value for key, value in state.items() if key != "won"}
    old["source"] = {k: v for k, v in state["source"].items() if k != "digest"}
    again = ENV.step(old, "look")
    assert again.observation == ENV.step(state, "look").observation


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({"game_index": 3}, "released"),
        ({"engine": "textworld", "step_limit": 51}, "50 steps"),
        ({"engine": "textworld", "reward": "subgoal"}, "native"),
    ],
)
def test_options_no_game_plays_with_are_refused_when_validated(
    options: dict[str, Any], why: str
) -> None:
    with pytest.raises(ValidationError, match=why):
        AlfWorldOptions(**options)


def test_without_alfworld_data_released_games_are_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ALFWORLD_DATA", raising=False)
    for engine in ("native", "textworld"):
        with pytest.raises(EnvironmentUnavailable) as caught:
            ENV.reset(0, AlfWorldOptions(games="released", engine=engine))
        assert "ALFWORLD_DATA" in caught.value.why.reason
        assert "alfworld-download" in caught.value.why.fix


def test_without_the_extra_the_textworld_engine_is_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "textworld", None)  # as if the extra were not installed
    failure: list[BaseException] = []

    def reset() -> None:  # in a new thread: its engine is created afresh
        try:
            ENV.reset(0, AlfWorldOptions(engine="textworld"))
        except BaseException as exc:  # handed to the test thread
            failure.append(exc)

    thread = threading.Thread(target=reset)
    thread.start()
    thread.join()
    assert isinstance(failure[0], EnvironmentUnavailable)
    assert "textworld is missing" in failure[0].why.reason
    assert "pip install 'envserver[alfworld]'" in failure[0].why.fix


# --- ALFWorld's own engine (the alfworld extra) ------------------------------------------------


def test_the_textworld_backend_plays_generated_games_like_the_native_engine() -> None:
    pytest.importorskip("textworld")
    native = AlfWorldOptions(task_type="pick_clean_then_place_in_recep", difficulty="easy")
    real = native.model_copy(update={"engine": "textworld", "expert_plan": True})
    first_native, first_real = ENV.reset(8, native), ENV.reset(8, real)
    assert first_real.observation == first_native.observation
    assert first_real.info["admissible_commands"] == first_native.info["admissible_commands"]
    plan = first_real.info["expert_plan"]  # ALFWorld's planner (Fast Downward)
    mine, theirs = first_native.state, first_real.state
    for command in [*plan[:2], "take the moon", *plan[2:]]:
        a, b = ENV.step(mine, command), ENV.step(theirs, command)
        assert (a.observation, a.score.status, a.score.reward, a.terminated) == (
            b.observation, b.score.status, b.score.reward, b.terminated
        )  # fmt: skip
        assert a.info["admissible_commands"] == b.info["admissible_commands"]
        mine, theirs = a.state, b.state
    assert b.terminated and b.info["won"] is True
    # A step from an earlier state replays the commands on the worker's engine.
    again = ENV.step(first_real.state, plan[0])
    assert again.observation == ENV.step(first_native.state, plan[0]).observation


@pytest.mark.parametrize("engine", ["native", "textworld"])
def test_released_games_under_alfworld_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    if engine == "textworld":
        pytest.importorskip("textworld")
    games = [generate(s, t, "valid_unseen", "easy") for s, t in enumerate(TASK_TYPES[:3])]
    for game in games:
        write(game, tmp_path, "0.3")  # the released games' phrasing
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))
    options = AlfWorldOptions(games="released", engine=engine, split="valid_unseen",
                              expert_plan=True)  # fmt: skip
    ordered = sorted(games, key=lambda g: g.name)
    for index, game in enumerate(ordered):
        first = ENV.reset(0, options.model_copy(update={"game_index": index}))
        assert first.info["game"] == game.name
        assert first.info["task_type"] == game.goal.task_type
        assert first.observation == intro(game.world, game.run)
        assert first.info["admissible_commands"] == commands(game.world, game.run, "0.3")
        state = first.state
        for command in first.info["expert_plan"]:
            result = ENV.step(state, command)
            state = result.state
        assert result.terminated and result.score.reward == 1.0
    assert ENV.reset(4, options).info["game"] == ordered[4 % 3].name  # seed mod n
    with pytest.raises(EnvironmentInputError, match="out of range"):
        ENV.reset(0, options.model_copy(update={"game_index": 3}))
    with pytest.raises(EnvironmentUnavailable, match="no playable games"):
        ENV.reset(0, options.model_copy(update={"split": "train"}))


def test_a_released_game_is_named_not_carried_and_a_changed_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = generate(7, "pick_heat_then_place_in_recep", "valid_seen", "medium")
    path = write(game, tmp_path)
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))
    options = AlfWorldOptions(games="released", split="valid_seen", reward="subgoal")
    first = ENV.reset(0, options)
    assert first.state["world"]["relative"] == game.name  # the server reads the game
    assert len(json.dumps(first.state)) < len(game.world.text())
    step = ENV.step(first.state, game.walkthrough[0])
    assert step.score.status == "ok" and step.info["steps"] == 1
    # The file rewritten (the same game in the other grammar): the episode began on another.
    path.write_text(json.dumps(game_file(game, "0.3")))
    with pytest.raises(EnvironmentInputError, match="changed on this server"):
        ENV.step(step.state, "look")


def test_a_released_game_outside_the_native_model_is_refused_with_the_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = generate(3, "pick_and_place_simple", "train", "easy")
    path = write(game, tmp_path)
    document = json.loads(path.read_text())
    some = game.scene.objects[0].id
    nested = f"(inReceptacleObject {mangle(some)} {mangle(some)})"
    document["pddl_problem"] = document["pddl_problem"].replace("(:init", f"(:init\n{nested}")
    path.write_text(json.dumps(document))
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))
    with pytest.raises(EnvironmentInputError, match=r"inreceptacleobject.*engine 'textworld'"):
        ENV.reset(0, AlfWorldOptions(games="released"))


def test_alfworlds_own_loader_plays_exported_games(tmp_path: Path) -> None:
    # AlfredTWEnv, configured as ALFWorld's base_config.yaml configures it, collects the games
    # written in the released layout and plays them through textworld.gym to `won`.
    alfred_tw_env = pytest.importorskip("alfworld.agents.environment.alfred_tw_env")
    games = [generate(40 + i, t, "valid_unseen", "easy") for i, t in enumerate(TASK_TYPES)]
    for game in games:
        write(game, tmp_path)
    split = str(tmp_path / "json_2.1.1" / "valid_unseen")
    config = {
        "dataset": {"data_path": split, "eval_id_data_path": split, "eval_ood_data_path": split,
                    "num_train_games": -1, "num_eval_games": -1},
        "env": {"goal_desc_human_anns_prob": 0, "task_types": [1, 2, 3, 4, 5, 6],
                "domain_randomization": False, "expert_type": "handcoded"},
        "general": {"training_method": "dagger"},
        "dagger": {"training": {"max_nb_steps_per_episode": 50}},
    }  # fmt: skip
    env = alfred_tw_env.AlfredTWEnv(config, train_eval="eval_out_of_distribution")
    assert env.num_games == len(games)
    gym_env = env.init_env(batch_size=1)
    by_file = {str(tmp_path / "json_2.1.1" / g.split / g.name / "game.tw-pddl"): g for g in games}
    try:
        for _ in games:
            observations, infos = gym_env.reset()
            game = by_file[infos["extra.gamefile"][0]]
            assert observations[0] == intro(game.world, game.run)
            assert infos["admissible_commands"][0] == commands(game.world, game.run, "0.4")
            for command in game.walkthrough:
                _, scores, dones, infos = gym_env.step([command])
            assert (scores[0], dones[0], infos["won"][0]) == (1, True, True)
    finally:
        gym_env.close()
