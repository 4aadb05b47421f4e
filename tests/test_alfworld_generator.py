"""The ALFWorld game generator: every task type, split and size is solvable by the expert within
50 steps; splits hold out floor plans and combinations; names follow ALFWorld's Demangler; the
shipped tables are the wheel's; games export in the released layout and load back."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from environments.alfworld import tables as tables_module
from environments.alfworld.engine import step, won
from environments.alfworld.export import as_version, game_file, grammar, traj_data, write
from environments.alfworld.generator import MAX_STEPS, SPLITS, generate
from environments.alfworld.loader import DataUnavailable, game_path, released_games
from environments.alfworld.names import demangle, pddl_id
from environments.alfworld.planner import expert_plan
from environments.alfworld.scenes import SIZES
from environments.alfworld.tables import TASK_TYPES, tables
from environments.alfworld.tasks import held_out
from tests.server import ROOT


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_the_expert_wins_every_generated_game_within_50_steps(task_type: str) -> None:
    for split in SPLITS:
        for difficulty in SIZES:
            for seed in range(8):
                game = generate(seed, task_type, split, difficulty)  # type: ignore[arg-type]
                world, run = game.world, game.run
                assert game.goal.task_type == task_type
                assert not won(world, run)
                assert 0 < len(game.walkthrough) <= MAX_STEPS
                assert list(game.walkthrough) == expert_plan(world, run)
                for command in game.walkthrough:
                    outcome = step(world, run, command, "0.4")
                    assert outcome.valid, (game.name, command)
                    run = outcome.run
                assert won(world, run), game.name


def test_splits_hold_out_floor_plans_and_combinations() -> None:
    t = tables()
    for seed in range(40):
        seen = generate(seed, None, "train", "easy")
        assert seen.scene.floorplan in t.train_scenes and not held_out(seen.goal)
        also_seen = generate(seed, None, "valid_seen", "easy")
        assert also_seen.scene.floorplan in t.train_scenes and not held_out(also_seen.goal)
        unseen = generate(seed, None, "valid_unseen", "easy")
        assert unseen.scene.floorplan in t.test_scenes and held_out(unseen.goal)
        assert seen.scene.room in t.goal_rooms[seen.goal.task_type]


def test_sizes_and_rooms() -> None:
    counts = {d: [len(generate(s, None, "train", d).scene.receptacles) for s in range(20)]
              for d in SIZES}  # fmt: skip
    assert max(counts["easy"]) <= 8 < max(counts["hard"])
    assert max(counts["medium"]) <= 16
    kinds = {generate(s, "pick_heat_then_place_in_recep").scene.room for s in range(10)}
    assert kinds == {"Kitchen"}  # heat tasks are generated in kitchens only, as in ALFRED


def test_regeneration_is_byte_identical_in_another_process() -> None:
    code = (
        "from environments.alfworld.generator import generate\n"
        "from environments.alfworld.export import problem\n"
        "g = generate(77, 'look_at_obj_in_light', 'valid_unseen', 'medium')\n"
        "print(g.world.text()); print(problem(g))\n"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "4321", "PATH": "/usr/bin:/bin"},
    ).stdout
    from environments.alfworld.export import problem

    game = generate(77, "look_at_obj_in_light", "valid_unseen", "medium")
    assert other == f"{game.world.text()}\n{problem(game)}\n"


def test_names_follow_the_demangler() -> None:
    raw = [
        "Cabinet|+00.68|+00.50|-02.20",
        "Cabinet|-01.18|+00.50|-02.20",
        "Sink|-01.90|+00.97|-01.50|SinkBasin",
        "loc|0|-5|2|30",
        "Apple|-00.47|+01.15|+00.48",
    ]
    ids = [pddl_id(r) for r in raw]
    assert ids[0] == "cabinet_bar__plus_00_dot_68_bar__plus_00_dot_50_bar__minus_02_dot_20"
    names = demangle([*ids, "agent1"])
    # Sorted ids take numbers from the top: "_minus_" sorts before "_plus_".
    assert [names[i] for i in ids] == ["cabinet 1", "cabinet 2", "sinkbasin 1", "loc 1", "apple 1"]
    assert names["agent1"] == "agent1 "
    alfworld = pytest.importorskip("alfworld.agents.utils.misc")
    infos = {i: SimpleNamespace(id=i) for i in [*ids, "agent1"]}
    theirs = alfworld.Demangler(game_infos=infos)
    assert {i: theirs.demangle_alfred_name(i) for i in infos} == names


def test_lists_read_in_descending_numbers() -> None:
    game = generate(3, "pick_and_place_simple", "train", "hard")
    names = [name for name, _, _ in game.world.receptacles]
    cabinets = [n for n in names if n.startswith("cabinet ")]
    assert cabinets == sorted(cabinets, key=lambda n: -int(n.split()[1]))


def test_shipped_tables_are_the_wheels() -> None:
    pytest.importorskip("alfworld")
    assert tables_module.sync() == 0


def test_grammar_0_3_undoes_alfworlds_patch() -> None:
    text = grammar("0.3", "put a apple in fridge")
    assert "put {o} in/on {r}" in text and "move {o} to {r}" not in text
    assert "You arrive at {lend.name}." in text and "action help" not in text
    assert "Your task is to: put a apple in fridge." in text
    assert as_version("move apple 1 to fridge 1", "0.3") == "put apple 1 in/on fridge 1"
    assert as_version("move apple 1 to fridge 1", "0.4") == "move apple 1 to fridge 1"


def test_export_writes_the_released_layout_and_the_loader_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = [generate(s, t, "valid_seen", "easy") for s, t in enumerate(TASK_TYPES)]
    for game in games:
        path = write(game, tmp_path)
        document = json.loads(path.read_text())
        assert document == game_file(game)
        assert set(document) == {
            "pddl_domain", "grammar", "pddl_problem", "solvable", "walkthrough"
        }  # fmt: skip
        assert json.loads((path.parent / "traj_data.json").read_text()) == traj_data(game)
    # What ALFWorld's collector skips: movable/sliced paths, unsolvable or missing games.
    skipped = tmp_path / "json_2.1.1" / "valid_seen"
    for name, solvable in (("pick_and_place_with_movable_recep-X/trial_1", True),
                           ("pick_and_place_simple-Sliced-X/trial_1", True),
                           ("pick_and_place_simple-Y/trial_1", False)):  # fmt: skip
        folder = skipped / name
        folder.mkdir(parents=True)
        (folder / "traj_data.json").write_text(json.dumps({"task_type": "pick_and_place_simple"}))
        (folder / "game.tw-pddl").write_text(json.dumps({"solvable": solvable}))
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))
    found = released_games("valid_seen")
    assert sorted(g.relative for g in found) == sorted(g.name for g in games)
    assert [g.task_type for g in released_games("valid_seen", "look_at_obj_in_light")] == [
        "look_at_obj_in_light"
    ]
    assert game_path("valid_seen", found[0].relative).is_file()
    with pytest.raises(DataUnavailable):
        game_path("valid_seen", "../../../etc")
    with pytest.raises(DataUnavailable):
        released_games("train")
    monkeypatch.delenv("ALFWORLD_DATA")
    with pytest.raises(DataUnavailable, match="ALFWORLD_DATA"):
        released_games("valid_seen")


def _shortest(world: Any, run: Any, limit: int) -> int | None:
    """Breadth-first search over the native engine's states (actions that change nothing left
    out): the length of a shortest winning command sequence, if one of at most ``limit``."""
    from environments.alfworld.engine import admissible, apply

    frontier, seen = [run], {replace(run, steps=0)}
    for depth in range(1, limit + 1):
        following = []
        for state in frontier:
            for action in admissible(world, state, "0.4").values():
                if action[0] in ("look", "inventory", "help", "examine_r", "examine_o"):
                    continue
                after = replace(apply(world, state, action, "0.4")[0], steps=0)
                if after in seen:
                    continue
                if won(world, after):
                    return depth
                seen.add(after)
                following.append(after)
        frontier = following
    return None


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_the_expert_plan_is_a_shortest_plan(task_type: str) -> None:
    for seed in range(3):
        game = generate(300 + seed, task_type, "train", "easy")  # type: ignore[arg-type]
        plan = len(game.walkthrough)
        assert _shortest(game.world, game.run, plan) == plan, game.name
