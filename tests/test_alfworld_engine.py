"""The native ALFWorld engine on a small hand-written game: texts, admissible commands, effects,
goals and malformed states. (Equality with ALFWorld's own engine is
``test_alfworld_differential.py``'s job; these pin the rules it found, in readable form.)"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from environments.alfworld.engine import (
    HELP,
    NOTHING_HAPPENS,
    MalformedGame,
    Run,
    World,
    commands,
    display_list,
    intro,
    look,
    step,
    won,
    world_from_text,
)

GAME: dict[str, Any] = {
    "task_type": "pick_heat_then_place_in_recep",
    "task": "put a hot apple in diningtable",
    "object_type": "Apple",
    "parent_type": "DiningTable",
    "toggle_type": None,
    "locations": ["loc 5", "loc 4", "loc 3", "loc 2", "loc 1"],
    "start": 4,
    "receptacles": [
        ["cabinet 1", "Cabinet", 0],
        ["diningtable 1", "DiningTable", 0],
        ["countertop 1", "CounterTop", 1],
        ["fridge 1", "Fridge", 2],
        ["microwave 1", "Microwave", 3],
    ],
    "objects": [
        ["apple 1", "Apple"],
        ["butterknife 1", "ButterKnife"],
        ["desklamp 1", "DeskLamp"],
        ["mug 1", "Mug"],
    ],
}
APPLE, KNIFE, LAMP, MUG = range(4)


def world() -> World:
    return World.build(GAME)


def at(*locations: int) -> tuple[frozenset[int], ...]:
    return tuple(frozenset({loc}) for loc in locations)


def start() -> Run:
    return Run(at=4, held=None, inside=(2, 2, 2, 0), near=at(1, 1, 1, 0))


def play(run: Run, *commands_: str, grammar: Any = "0.4") -> tuple[Run, str]:
    feedback = ""
    for command in commands_:
        outcome = step(world(), run, command, grammar)
        assert outcome.valid, (command, commands(world(), run, grammar))
        run, feedback = outcome.run, outcome.feedback
    return run, feedback


def test_display_list_is_textworlds() -> None:
    assert display_list([]) == "nothing"
    assert display_list(["a x"]) == "a x"
    assert display_list(["a x", "a y"]) == "a x, and a y"
    assert display_list(["a x", "a y", "a z"]) == "a x, a y, and a z"


def test_intro_lists_every_receptacle_in_order() -> None:
    assert intro(world(), start()) == (
        "-= Welcome to TextWorld, ALFRED! =-\n\n"
        "You are in the middle of a room. Looking quickly around you, you see a cabinet 1, "
        "a diningtable 1, a countertop 1, a fridge 1, and a microwave 1.\n\n"
        "Your task is to: put a hot apple in diningtable."
    )


def test_admissible_commands_at_the_start() -> None:
    assert commands(world(), start(), "0.4") == [
        "go to cabinet 1", "go to countertop 1", "go to diningtable 1", "go to fridge 1",
        "go to microwave 1", "help", "inventory", "look",
    ]  # fmt: skip
    assert "help" not in commands(world(), start(), "0.3")
    assert look(world(), start()) == (
        "You are in the middle of a room. Looking quickly around you, you see nothing."
    )


def test_receptacles_sharing_a_location() -> None:
    run, feedback = play(start(), "go to cabinet 1")
    assert feedback == "You arrive at cabinet 1. The cabinet 1 is closed."
    listed = commands(world(), run, "0.4")
    # Both receptacles stand where the agent is: neither can be "gone to".
    assert "go to cabinet 1" not in listed and "go to diningtable 1" not in listed
    assert {"open cabinet 1", "examine cabinet 1", "examine diningtable 1"} <= set(listed)
    assert look(world(), run) == (
        "You are facing the cabinet 1, and diningtable 1. Next to it, you see nothing."
    )
    run, feedback = play(run, "open cabinet 1")
    assert feedback == "You open the cabinet 1. The cabinet 1 is open. In it, you see a mug 1."
    assert "close cabinet 1" in commands(world(), run, "0.4")
    # Only a held object can be examined (the domain's other disjunct never grounds).
    assert "examine mug 1" not in commands(world(), run, "0.4")
    run, feedback = play(run, "close cabinet 1")
    assert feedback == "You close the cabinet 1."
    assert play(run, "examine cabinet 1")[1] == "The cabinet 1 is closed."


def test_the_heat_task_from_start_to_goal() -> None:
    run, feedback = play(start(), "go to countertop 1")
    assert feedback == (
        "You arrive at countertop 1. On the countertop 1, you see a apple 1, a butterknife 1, "
        "and a desklamp 1."
    )
    run, feedback = play(run, "take apple 1 from countertop 1")
    assert feedback == "You pick up the apple 1 from the countertop 1."
    assert play(run, "inventory")[1] == "You are carrying: a apple 1."
    assert play(run, "examine apple 1")[1] == "There's nothing special about apple 1."
    run, feedback = play(run, "go to microwave 1", "heat apple 1 with microwave 1")
    assert feedback == "You heat the apple 1 using the microwave 1."
    assert play(run, "examine apple 1")[1] == "This is a hot apple 1."
    assert not won(world(), run)
    run, feedback = play(run, "go to diningtable 1")
    assert feedback == "You arrive at diningtable 1. On the diningtable 1, you see nothing."
    assert "move apple 1 to cabinet 1" not in commands(world(), run, "0.4")  # closed, and
    # a cabinet cannot hold an apple (the wheel's VAL_RECEPTACLE_OBJECTS)
    run, feedback = play(run, "move apple 1 to diningtable 1")
    assert feedback == "You move the apple 1 to the diningtable 1."
    assert won(world(), run)
    assert run.steps == 6


def test_grammar_0_3_phrasing() -> None:
    run, feedback = play(start(), "go to countertop 1", grammar="0.3")
    assert feedback.startswith("You arrive at loc 4. On the countertop 1, you see")
    run, _ = play(run, "take apple 1 from countertop 1", "go to diningtable 1", grammar="0.3")
    assert "put apple 1 in/on diningtable 1" in commands(world(), run, "0.3")
    assert "move apple 1 to diningtable 1" not in commands(world(), run, "0.3")
    assert play(run, "put apple 1 in/on diningtable 1", grammar="0.3")[1] == (
        "You put the apple 1 in/on the diningtable 1."
    )


def test_examine_object_states_in_rule_order() -> None:
    run, _ = play(start(), "go to countertop 1", "take apple 1 from countertop 1")
    examined = lambda r: play(r, "examine apple 1")[1]  # noqa: E731
    assert examined(replace(run, cool=frozenset({APPLE}))) == "This is a cold apple 1."
    assert examined(replace(run, clean=frozenset({APPLE}))) == "This is a clean apple 1."
    both = replace(run, clean=frozenset({APPLE}), hot=frozenset({APPLE}))
    assert examined(both) == "This is a hot and clean apple 1."
    assert examined(replace(run, sliced=frozenset({APPLE}))) == "This is a sliced apple 1."
    assert examined(replace(both, sliced=frozenset({APPLE}))) == (
        "This is a hot and clean sliced apple 1."
    )
    # Cooling removes the heat and heating the cold.
    run, _ = play(run, "go to fridge 1", "cool apple 1 with fridge 1")
    assert run.cool == {APPLE} and not run.hot
    run, _ = play(run, "go to microwave 1", "heat apple 1 with microwave 1")
    assert run.hot == {APPLE} and not run.cool
    # A receptacle object always reads as a normal one.
    mug, _ = play(start(), "go to cabinet 1", "open cabinet 1", "take mug 1 from cabinet 1")
    assert play(replace(mug, hot=frozenset({MUG})), "examine mug 1")[1] == (
        "This is a normal mug 1. In it, you see nothing."
    )


def test_lamps_slicing_and_the_floor() -> None:
    run, _ = play(start(), "go to countertop 1")
    assert "take desklamp 1 from countertop 1" not in commands(world(), run, "0.4")
    run, feedback = play(run, "use desklamp 1")
    assert feedback == "You turn on the desklamp 1."
    assert play(run, "use desklamp 1")[1] == "You turn on the desklamp 1."
    run, _ = play(run, "take butterknife 1 from countertop 1")
    assert play(run, "examine butterknife 1")[1] == "There's nothing special about butterknife 1."
    run, feedback = play(run, "slice apple 1 with butterknife 1")
    assert feedback == "You sliced the apple 1 with the butterknife 1."
    # An object left where another receptacle it was taken from stands is "next to it".
    away = replace(start(), at=1, near=at(0, 1, 1, 0), taken=frozenset({(APPLE, 1)}))
    assert look(world(), replace(away, at=0)) == (
        "You are facing the cabinet 1, and diningtable 1. Next to it, you see a apple 1."
    )


@pytest.mark.parametrize(
    "command",
    ["", "LOOK", "go to", "go to cabinet 3", "take apple 1", "go  to cabinet 1", "jump",
     "help me", "\u0000", "x" * 10_000],
)  # fmt: skip
def test_anything_else_is_nothing_happens_and_counts(command: str) -> None:
    outcome = step(world(), start(), command, "0.4")
    assert (outcome.valid, outcome.feedback) == (False, NOTHING_HAPPENS)
    assert outcome.run == replace(start(), steps=1)


def test_surrounding_whitespace_is_stripped_and_help_is_0_4_only() -> None:
    assert step(world(), start(), "  look \t", "0.4").valid
    assert step(world(), start(), "help", "0.4").feedback == HELP
    assert not step(world(), start(), "help", "0.3").valid


@pytest.mark.parametrize(
    ("change", "value"),
    [
        ({"locations": "x"}, None),
        ({"start": 9}, None),
        ({"receptacles": [["a", "Cabinet", 7]]}, None),
        ({"task_type": "fly"}, None),
        ({"objects": [["a"]]}, None),
    ],
)
def test_malformed_worlds_are_refused(change: dict[str, Any], value: None) -> None:
    with pytest.raises(MalformedGame):
        World.build({**GAME, **change})
    with pytest.raises(MalformedGame):
        world_from_text("[1, 2]")


@pytest.mark.parametrize(
    "change",
    [
        {"at": 5},
        {"held": 0},
        {"inside": [2, 2, 2]},
        {"near": [[1], [1], [1], [9]]},
        {"near": [1, 1, 1, 0]},
        {"opened": [True]},
        {"taken": [[0]]},
        {"steps": -1},
        {"hot": ["0"]},
    ],
)
def test_malformed_runs_are_refused(change: dict[str, Any]) -> None:
    raw = {**start().to_json(), **change}
    with pytest.raises(MalformedGame):
        Run.from_json(raw, world())


def test_runs_round_trip() -> None:
    run, _ = play(start(), "go to countertop 1", "take apple 1 from countertop 1")
    assert Run.from_json(run.to_json(), world()) == run
    assert world_from_text(world().text()) == world()
