"""ALFWorld's tables, as the ``alfworld`` 0.4.2 wheel ships them (MIT; ``data/LICENSE``).

``data/tables.json`` is derived from the wheel's ``alfworld/gen/constants.py`` (object and
receptacle types, what each receptacle can contain, the heatable/coolable/cleanable/toggleable/
sliceable sets, the openable classes, the train/test scene numbers and the rooms each task type
is generated in), ``alfworld/gen/goal_library.py`` (the six task types' goal templates and PDDL
goals) and ``alfworld/gen/layouts/FloorPlan*-{objects,openable}.json`` (the types present in each
of the 120 floor plans and its receptacles with their interaction poses). ``data/alfred.pddl``
and ``data/alfred.twl2`` are the wheel's domain and grammar, byte for byte.

The copy ships so that the generator and the native engine run without the heavy ``alfworld``
extra; ``envserver alfworld tables`` (and a test, where the extra is
installed) re-derives it from the wheel and compares.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args

DATA = Path(__file__).parent / "data"
TABLES = DATA / "tables.json"
DOMAIN = DATA / "alfred.pddl"
GRAMMAR = DATA / "alfred.twl2"

TaskType = Literal[
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
]
TASK_TYPES: tuple[TaskType, ...] = get_args(TaskType)
"""ALFWorld's six task types, in its numbering order (``TASK_TYPES`` 1-6 of alfred_tw_env)."""

Pose = tuple[float, float, int, int]
"""An interaction pose: x and z in metres, rotation and camera horizon in degrees."""


@dataclass(frozen=True)
class Floorplan:
    """One AI2-THOR floor plan: the types present and its receptacles' ids and poses."""

    number: int
    room: str
    types: frozenset[str]
    receptacles: tuple[tuple[str, Pose], ...]


@dataclass(frozen=True)
class GoalSpec:
    """A task type's two goal templates and its PDDL goal (``#`` stands for ``-``)."""

    templates: tuple[str, str]
    pddl: str


@dataclass(frozen=True)
class Tables:
    """Everything the generator, the engine and the exporter read from the wheel."""

    object_constants: tuple[str, ...]
    receptacle_types: tuple[str, ...]
    movable_receptacles: frozenset[str]
    can_contain: Mapping[str, frozenset[str]]
    actions: Mapping[str, frozenset[str]]
    openable: frozenset[str]
    goals: Mapping[str, GoalSpec]
    goal_rooms: Mapping[str, frozenset[str]]
    train_scenes: frozenset[int]
    test_scenes: frozenset[int]
    floorplans: Mapping[int, Floorplan]

    def contains(self, receptacle_type: str, object_type: str) -> bool:
        """``canContain``: whether ``receptacle_type`` can hold ``object_type``."""
        return object_type in self.can_contain.get(receptacle_type, frozenset())

    def has(self, action: str, object_type: str) -> bool:
        """Whether ``object_type`` is in ``VAL_ACTION_OBJECTS[action]`` (Heatable, ...)."""
        return object_type in self.actions[action]


@cache
def tables() -> Tables:
    """The shipped tables, read once per process."""
    raw = json.loads(TABLES.read_text())
    return Tables(
        object_constants=tuple(raw["object_constants"]),
        receptacle_types=tuple(raw["receptacle_types"]),
        movable_receptacles=frozenset(raw["movable_receptacles"]),
        can_contain={k: frozenset(v) for k, v in raw["can_contain"].items()},
        actions={k: frozenset(v) for k, v in raw["actions"].items()},
        openable=frozenset(raw["openable"]),
        goals={
            k: GoalSpec(templates=(v["templates"][0], v["templates"][1]), pddl=v["pddl"])
            for k, v in raw["goals"].items()
        },
        goal_rooms={k: frozenset(v) for k, v in raw["goal_rooms"].items()},
        train_scenes=frozenset(raw["train_scenes"]),
        test_scenes=frozenset(raw["test_scenes"]),
        floorplans={
            int(number): Floorplan(
                number=int(number),
                room=plan["room"],
                types=frozenset(plan["types"]),
                receptacles=tuple(
                    (rid, (float(p[0]), float(p[1]), int(p[2]), int(p[3])))
                    for rid, p in plan["receptacles"]
                ),
            )
            for number, plan in raw["floorplans"].items()
        },
    )


@cache
def domain_text() -> str:
    """The wheel's ``alfred.pddl``."""
    return DOMAIN.read_text()


@cache
def grammar_text() -> str:
    """The wheel's ``alfred.twl2`` (0.4 phrasing, with ``UNKNOWN GOAL`` in the task rule)."""
    return GRAMMAR.read_text()


# --- derivation from the installed wheel (needs the ``alfworld`` extra) -------------------------


def derive() -> dict[str, Any]:
    """The ``tables.json`` document, read from the installed ``alfworld`` wheel."""
    from alfworld.gen import constants, goal_library  # noqa: PLC0415 - only with the extra

    layouts = Path(constants.__file__).parent / "layouts"
    static = constants.RECEPTACLES - set(constants.MOVABLE_RECEPTACLES)
    rooms = {room: list(numbers) for room, numbers in constants.SCENE_TYPE.items()}
    floorplans: dict[str, Any] = {}
    for numbers in rooms.values():
        for number in numbers:
            types = json.loads((layouts / f"FloorPlan{number}-objects.json").read_text())
            poses = json.loads((layouts / f"FloorPlan{number}-openable.json").read_text())
            floorplans[str(number)] = {
                "room": next(r for r, ns in rooms.items() if number in ns),
                "types": sorted(types),
                "receptacles": [[rid, poses[rid]] for rid in sorted(poses)],
            }
    return {
        "source": "alfworld 0.4.2 (MIT): gen/constants.py, gen/goal_library.py, gen/layouts",
        "object_constants": sorted(constants.OBJECTS_SET - static),
        "receptacle_types": sorted(static),
        "movable_receptacles": sorted(constants.MOVABLE_RECEPTACLES),
        "can_contain": {k: sorted(v) for k, v in sorted(constants.VAL_RECEPTACLE_OBJECTS.items())},
        "actions": {k: sorted(v) for k, v in sorted(constants.VAL_ACTION_OBJECTS.items())},
        "openable": list(constants.OPENABLE_CLASS_LIST),
        "goals": {
            t: {
                "templates": goal_library.gdict[t]["templates"],
                "pddl": goal_library.gdict[t]["pddl"],
            }
            for t in TASK_TYPES
        },
        "goal_rooms": {t: sorted(constants.GOALS_VALID[t]) for t in TASK_TYPES},
        "train_scenes": sorted(constants.TRAIN_SCENE_NUMBERS),
        "test_scenes": sorted(constants.TEST_SCENE_NUMBERS),
        "floorplans": floorplans,
    }


def wheel_files() -> dict[str, str]:
    """The wheel's domain and grammar texts, by the name they ship under in ``data/``."""
    import alfworld  # noqa: PLC0415 - only with the extra

    folder = Path(alfworld.__file__).parent / "data"
    return {name: (folder / name).read_text() for name in ("alfred.pddl", "alfred.twl2")}


def _serialise(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=0, sort_keys=True, separators=(",", ":")) + "\n"


def sync(write: bool = False) -> int:
    """Compare ``data/`` with the installed wheel (exit status 1 when out of date), or, with
    ``write``, regenerate it from the wheel."""
    expected = {TABLES.name: _serialise(derive()), **wheel_files()}
    if write:
        for name, text in expected.items():
            (DATA / name).write_text(text)
        print(f"wrote {', '.join(expected)} to {DATA}")
        return 0
    stale = [name for name, text in expected.items() if (DATA / name).read_text() != text]
    if stale:
        print(f"out of date with the installed wheel: {', '.join(stale)}", file=sys.stderr)
        return 1
    print("data/ matches the installed alfworld wheel")
    return 0
