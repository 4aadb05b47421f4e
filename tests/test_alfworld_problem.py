"""Reading ALFWorld's game files into the native engine (``problem.py``): exported games read
back as exactly the world and run they were written from, a file's own facts decide what things
can do, and files the engine does not model exactly are refused with the reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

from environments.alfworld.engine import commands, step
from environments.alfworld.export import game_file, traj_data
from environments.alfworld.generator import SPLITS, Game, generate
from environments.alfworld.names import mangle
from environments.alfworld.problem import UnsupportedGame, read, read_text
from environments.alfworld.tables import TASK_TYPES


def _games() -> list[tuple[Game, Any]]:
    return [
        (generate(seed, task_type, SPLITS[seed % 3], ("easy", "medium", "hard")[seed % 3]),
         "0.3" if seed % 2 else "0.4")
        for seed in range(4)
        for task_type in TASK_TYPES
    ]  # fmt: skip


@pytest.mark.parametrize(("game", "grammar"), _games(), ids=lambda v: getattr(v, "name", v))
def test_an_exported_game_reads_back_as_the_world_and_run_it_was_written_from(
    game: Game, grammar: Any
) -> None:
    read_back = read(game_file(game, grammar), traj_data(game))
    assert read_back.grammar == grammar
    assert read_back.world == game.world  # names, kinds, places, task, abilities
    assert read_back.run == game.run
    assert read_back.walkthrough == tuple(game_file(game, grammar)["walkthrough"])


def _edited(game: Game, old: str, new: str) -> dict[str, Any]:
    document = game_file(game)
    assert old in document["pddl_problem"], old
    document["pddl_problem"] = document["pddl_problem"].replace(old, new, 1)
    return document


GAME = generate(11, "pick_clean_then_place_in_recep", "train", "easy")
TARGET = next(o for o in GAME.scene.objects if o.type == GAME.goal.object_type)


def _target() -> tuple[str, str]:
    """The task's first target object: its PDDL id and its receptacle's."""
    return mangle(TARGET.id), mangle(TARGET.receptacle)


def test_what_things_can_do_comes_from_the_file_not_the_tables() -> None:
    target, host = _target()
    fixed = _edited(GAME, f"(pickupable {target})", "")  # the tables say it can be picked up
    fixed["pddl_problem"] = fixed["pddl_problem"].replace(
        "(atLocation agent1", f"(opened {host})\n(atLocation agent1", 1
    )
    world, run = _world_run(fixed)
    name, there = GAME.names[TARGET.id], GAME.names[TARGET.receptacle]
    o = next(i for i, (n, _) in enumerate(world.objects) if n == name)
    r = next(i for i, (n, _, _) in enumerate(world.receptacles) if n == there)
    assert not world.has("pickupable", o) and world.has("cleanable", o)
    assert run.inside[o] == r and run.opened == {r}
    arrived = step(world, run, f"go to {there}", "0.4").run
    assert f"take {name} from {there}" not in commands(world, arrived, "0.4")
    assert f"close {there}" in commands(world, arrived, "0.4") or not world.openable[r]


def _world_run(document: dict[str, Any]) -> tuple[Any, Any]:
    read_back = read(document, traj_data(GAME))
    return read_back.world, read_back.run


def test_a_starting_state_in_the_file_is_the_runs() -> None:
    target, _ = _target()
    document = _edited(GAME, "(atLocation agent1", f"(isHot {target})\n(isClean {target})\n"
                       "(atLocation agent1")  # fmt: skip
    read_back = read(document, traj_data(GAME))
    assert read_back.run.hot and read_back.run.clean == read_back.run.hot


def test_the_metric_line_alfreds_planner_writes_is_read_past() -> None:
    document = _edited(GAME, "(:domain alfred)", "(:domain alfred)\n(:metric minimize (totalCost))")
    assert read(document, traj_data(GAME)).world == GAME.world


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda d: d | {"grammar": d["grammar"].replace("You arrive at", "You reach")},
         "grammar is neither"),
        (lambda d: d | {"pddl_domain": d["pddl_domain"].replace("(isHot ?o)", "(isCool ?o)")},
         "domain is not"),
        (lambda d: d | {"pddl_problem": d["pddl_problem"].replace("(:init", "(:init\n(dirty x)")},
         "does not model dirty"),
        (lambda d: d | {"pddl_problem": d["pddl_problem"].replace("(isClean ?o)", "(isHot ?o)")},
         "goal is not goal_library's"),
        (lambda d: d | {"pddl_problem": d["pddl_problem"][: d["pddl_problem"].index("(:init")]
                        + ")"},
         "no :init"),
        (lambda d: {k: v for k, v in d.items() if k != "pddl_problem"}, "lacks a PDDL problem"),
    ],
)  # fmt: skip
def test_files_the_engine_does_not_model_exactly_are_refused_with_the_reason(
    change: Any, why: str
) -> None:
    with pytest.raises(UnsupportedGame, match=why):
        read(change(game_file(GAME)), traj_data(GAME))


def test_an_object_in_two_receptacles_or_none_is_refused() -> None:
    target, host = _target()
    other = mangle(next(f.id for f in GAME.scene.receptacles if mangle(f.id) != host))
    twice = _edited(GAME, f"(inReceptacle {target} {host})",
                    f"(inReceptacle {target} {host})\n(inReceptacle {target} {other})")  # fmt: skip
    with pytest.raises(UnsupportedGame, match="2 inReceptacle"):
        read(twice, traj_data(GAME))
    with pytest.raises(UnsupportedGame, match="0 inReceptacle"):
        read(_edited(GAME, f"(inReceptacle {target} {host})", ""), traj_data(GAME))


def test_the_task_comes_from_traj_data_and_must_be_one_of_six() -> None:
    with pytest.raises(UnsupportedGame, match="no supported task type"):
        read(game_file(GAME), traj_data(GAME) | {"task_type": "pick_and_place_with_movable_recep"})
    with pytest.raises(UnsupportedGame, match="not JSON"):
        read_text("{", json.dumps(traj_data(GAME)))
