"""The native engine: ALFWorld's PDDL domain and text grammar as a small state machine.

It reproduces what TextWorld's ``PddlEnv`` (with ALFWorld's ``AlfredDemangler``) does with
``alfred.pddl`` and ``alfred.twl2``: the same preconditions and effects, the same admissible
commands (every applicable grounded action rendered through the grammar, de-duplicated and
sorted), the same feedback texts, and "Nothing happens." for anything else. Lists follow the
real engine's order, which is the sorted PDDL ids: a game keeps its receptacles, objects and
locations in that order, so an index is all the state needs.

The whole game is two JSON values: the ``World`` (what never changes: names, types, where the
receptacles are, the goal), carried as one compact JSON text so a worker can cache its parsed
form by that text, and the ``Run`` (where the agent is, what it holds, what is where, open,
hot, clean, cool, sliced or switched on, and the step count).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal

from environments.alfworld.tables import TaskType, tables
from environments.alfworld.tasks import SPECS

GrammarVersion = Literal["0.4", "0.3"]
"""0.4: ``move X to Y``, "You arrive at {receptacle}.", ``help`` (the wheel's grammar).
0.3 and earlier (the released 2.1.1 games, ReAct's prompts): ``put X in/on Y``, "You arrive at
loc N.", no ``help``."""

NOTHING_HAPPENS = "Nothing happens."
WELCOME = "-= Welcome to TextWorld, ALFRED! =-"
HELP = (
    "Available commands:\n"
    "  look:                             look around your current location\n"
    "  inventory:                        check your current inventory\n"
    "  go to (receptacle):               move to a receptacle\n"
    "  open (receptacle):                open a receptacle\n"
    "  close (receptacle):               close a receptacle\n"
    "  take (object) from (receptacle):  take an object from a receptacle\n"
    "  move (object) to (receptacle):  place an object in or on a receptacle\n"
    "  examine (something):              examine a receptacle or an object\n"
    "  use (object):                     use an object\n"
    "  heat (object) with (receptacle):  heat an object using a receptacle\n"
    "  clean (object) with (receptacle): clean an object using a receptacle\n"
    "  cool (object) with (receptacle):  cool an object using a receptacle\n"
    "  slice (object) with (object):     slice an object using a sharp object\n"
)
KNIVES = frozenset({"Knife", "ButterKnife"})


class MalformedGame(ValueError):
    """A world or run value that is not one this engine wrote."""


def display_list(items: Sequence[str]) -> str:
    """TextWorld's ``display_list``: "nothing", "x", or "x, y, and z" (also "x, and y")."""
    if not items:
        return "nothing"
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + ", and " + items[-1]


PROPERTIES = ("pickupable", "cleanable", "heatable", "coolable", "toggleable", "sliceable",
              "knife", "receptacle_object")  # fmt: skip
"""The object properties the domain's preconditions and texts read (``knife``: its
``objectType`` is a knife or butter knife; ``receptacle_object``: ``isReceptacleObject``)."""


@dataclass(frozen=True)
class Abilities:
    """What a world's things can do: which receptacles open, which objects each receptacle can
    hold (``canContain`` over the types), and which objects have each of ``PROPERTIES``."""

    openable: tuple[bool, ...]
    holds: tuple[frozenset[int], ...]
    properties: dict[str, frozenset[int]]


@dataclass(frozen=True)
class World:
    """The parts of a game that never change, with the look-ups the engine needs."""

    task_type: TaskType
    task: str
    object_type: str
    parent_type: str | None
    toggle_type: str | None
    locations: tuple[str, ...]
    start: int
    receptacles: tuple[tuple[str, str, int], ...]
    objects: tuple[tuple[str, str], ...]
    # Derived (not serialised).
    openable: tuple[bool, ...] = field(default=(), repr=False)
    at_location: dict[int, tuple[int, ...]] = field(default_factory=dict, repr=False)
    holds: tuple[frozenset[int], ...] = field(default=(), repr=False)
    properties: dict[str, frozenset[int]] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, raw: dict[str, Any], abilities: Abilities | None = None) -> World:
        """Parse and check a world value; raises MalformedGame. Its things can do what
        ``abilities`` says (a game file's facts), by default what the wheel's tables say."""
        try:
            locations = tuple(_strings(raw["locations"]))
            receptacles = tuple((str(n), str(k), int(loc)) for n, k, loc in raw["receptacles"])
            objects = tuple((str(n), str(k)) for n, k in raw["objects"])
            task_type = raw["task_type"]
            world = cls(
                task_type=task_type,
                task=str(raw["task"]),
                object_type=str(raw["object_type"]),
                parent_type=_optional(raw["parent_type"]),
                toggle_type=_optional(raw["toggle_type"]),
                locations=locations,
                start=int(raw["start"]),
                receptacles=receptacles,
                objects=objects,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedGame(f"malformed alfworld game: {exc!r}") from exc
        if task_type not in SPECS:
            raise MalformedGame(f"unknown task type {task_type!r}")
        if not 0 <= world.start < len(locations) or any(
            not 0 <= loc < len(locations) for _, _, loc in receptacles
        ):
            raise MalformedGame("a location index is out of range")
        return world.with_abilities(abilities or world._tabled())

    def _tabled(self) -> Abilities:
        """What the wheel's tables say the world's things can do (a generated game's facts)."""
        t = tables()
        kinds = [k for _, k in self.objects]

        def having(test: Any) -> frozenset[int]:
            return frozenset(i for i, k in enumerate(kinds) if test(k))

        lamps = t.actions["Toggleable"]
        pickupable = set().union(*t.can_contain.values())
        properties = {
            "pickupable": having(lambda k: k in pickupable and k not in lamps),
            "cleanable": having(t.actions["Cleanable"].__contains__),
            "heatable": having(t.actions["Heatable"].__contains__),
            "coolable": having(t.actions["Coolable"].__contains__),
            "toggleable": having(lamps.__contains__),
            "sliceable": having(t.actions["Sliceable"].__contains__),
            "knife": having(KNIVES.__contains__),
            "receptacle_object": having(t.movable_receptacles.__contains__),
        }
        by_type = {
            kind: frozenset(i for i, k in enumerate(kinds) if t.contains(kind, k))
            for kind in {kind for _, kind, _ in self.receptacles}
        }
        return Abilities(
            openable=tuple(kind in t.openable for _, kind, _ in self.receptacles),
            holds=tuple(by_type[kind] for _, kind, _ in self.receptacles),
            properties=properties,
        )

    def with_abilities(self, abilities: Abilities) -> World:
        """This world with its look-ups: the abilities given, receptacles by location."""
        if len(abilities.openable) != len(self.receptacles) or len(abilities.holds) != len(
            self.receptacles
        ):
            raise MalformedGame("abilities must name every receptacle")
        at: dict[int, list[int]] = {}
        for index, (_, _, loc) in enumerate(self.receptacles):
            at.setdefault(loc, []).append(index)
        return replace(
            self,
            openable=abilities.openable,
            at_location={loc: tuple(rs) for loc, rs in at.items()},
            holds=abilities.holds,
            properties={name: abilities.properties.get(name, frozenset()) for name in PROPERTIES},
        )

    def to_json(self) -> dict[str, Any]:
        """The world value (the derived look-ups are rebuilt on reading)."""
        return {
            "task_type": self.task_type,
            "task": self.task,
            "object_type": self.object_type,
            "parent_type": self.parent_type,
            "toggle_type": self.toggle_type,
            "locations": list(self.locations),
            "start": self.start,
            "receptacles": [list(r) for r in self.receptacles],
            "objects": [list(o) for o in self.objects],
        }

    def text(self) -> str:
        """The compact JSON text a state carries."""
        return json.dumps(self.to_json(), separators=(",", ":"), ensure_ascii=False)

    def rname(self, index: int) -> str:
        """A receptacle's display name."""
        return self.receptacles[index][0]

    def oname(self, index: int) -> str:
        """An object's display name."""
        return self.objects[index][0]

    def here(self, location: int) -> tuple[int, ...]:
        """The receptacles at ``location`` (in list order)."""
        return self.at_location.get(location, ())

    def has(self, prop: str, obj: int) -> bool:
        """Whether object ``obj`` has ``prop`` (pickupable, heatable, knife, ...)."""
        return obj in self.properties[prop]


@lru_cache(maxsize=512)
def world_from_text(text: str) -> World:
    """A world from its JSON text; cached by the text, so a worker parses each game once."""
    try:
        raw = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise MalformedGame(f"malformed alfworld game: {exc}") from exc
    if not isinstance(raw, dict):
        raise MalformedGame("malformed alfworld game: not an object")
    return World.build(raw)


@dataclass(frozen=True)
class Run:
    """Everything that changes: the agent's location and hands, each object's receptacle
    (-1 held) and its ``objectAtLocation`` locations (a set: putting an object down adds the
    agent's location, picking it up removes only that one, so an object can stand "at" several
    places or none), open receptacles, object flags, the ``not_inreceptacle`` facts pickups
    leave, and the steps."""

    at: int
    held: int | None
    inside: tuple[int, ...]
    near: tuple[frozenset[int], ...]
    opened: frozenset[int] = frozenset()
    clean: frozenset[int] = frozenset()
    hot: frozenset[int] = frozenset()
    cool: frozenset[int] = frozenset()
    sliced: frozenset[int] = frozenset()
    toggled: frozenset[int] = frozenset()
    taken: frozenset[tuple[int, int]] = frozenset()
    steps: int = 0

    def to_json(self) -> dict[str, Any]:
        """The run value (sorted lists, so equal runs serialise identically)."""
        return {
            "at": self.at,
            "held": self.held,
            "inside": list(self.inside),
            "near": [sorted(locations) for locations in self.near],
            "opened": sorted(self.opened),
            "clean": sorted(self.clean),
            "hot": sorted(self.hot),
            "cool": sorted(self.cool),
            "sliced": sorted(self.sliced),
            "toggled": sorted(self.toggled),
            "taken": [list(p) for p in sorted(self.taken)],
            "steps": self.steps,
        }

    @classmethod
    def from_json(cls, raw: Any, world: World) -> Run:
        """Parse and check a run value against its world; raises MalformedGame."""
        try:
            n_obj, n_rec, n_loc = len(world.objects), len(world.receptacles), len(world.locations)
            run = cls(
                at=_index(raw["at"], n_loc),
                held=None if raw["held"] is None else _index(raw["held"], n_obj),
                inside=tuple(_index(i, n_rec, -1) for i in raw["inside"]),
                near=tuple(frozenset(_index(i, n_loc) for i in locs) for locs in raw["near"]),
                opened=frozenset(_index(i, n_rec) for i in raw["opened"]),
                clean=frozenset(_index(i, n_obj) for i in raw["clean"]),
                hot=frozenset(_index(i, n_obj) for i in raw["hot"]),
                cool=frozenset(_index(i, n_obj) for i in raw["cool"]),
                sliced=frozenset(_index(i, n_obj) for i in raw["sliced"]),
                toggled=frozenset(_index(i, n_obj) for i in raw["toggled"]),
                taken=frozenset((_index(o, n_obj), _index(r, n_rec)) for o, r in raw["taken"]),
                steps=_index(raw["steps"], 1 << 30),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedGame(f"malformed alfworld run: {exc!r}") from exc
        if len(run.inside) != n_obj or len(run.near) != n_obj:
            raise MalformedGame("malformed alfworld run: one entry per object expected")
        held_here = [i for i, r in enumerate(run.inside) if r == -1]
        if held_here != ([] if run.held is None else [run.held]):
            raise MalformedGame("malformed alfworld run: the held object is not the one in hand")
        return run


def _index(value: Any, size: int, low: int = 0) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value < size:
        raise ValueError(f"index {value!r} out of range")
    return value


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)


def _strings(values: Iterable[Any]) -> list[str]:
    items = list(values)
    if not all(isinstance(v, str) for v in items):
        raise TypeError("expected strings")
    return items


# --- actions -------------------------------------------------------------------------------------

Action = tuple[Any, ...]
"""``(kind, *indices)``: goto r, open r, close r, take o r, put o r, heat o r, clean o r,
cool o r, use o, slice co ko, examine_r r, examine_o o, look, inventory, help."""


def admissible(world: World, run: Run, grammar: GrammarVersion) -> dict[str, Action]:
    """Every applicable grounded action by its command, as ``PddlEnv`` lists them."""
    found: dict[str, Action] = {"look": ("look",), "inventory": ("inventory",)}
    if grammar == "0.4":
        found["help"] = ("help",)
    for r, (name, _, loc) in enumerate(world.receptacles):
        if loc != run.at:  # Fast Downward drops the no-op "go to" where the agent stands
            found[f"go to {name}"] = ("goto", r)
    for r in world.here(run.at):
        _receptacle_actions(world, run, r, grammar, found)
    if run.held is not None:
        _hand_actions(world, run, run.held, found)
    return found


APPLIANCES = (("heat", "Microwave", "heatable"), ("clean", "SinkBasin", "cleanable"),
              ("cool", "Fridge", "coolable"))  # fmt: skip


def _receptacle_actions(
    world: World, run: Run, r: int, grammar: GrammarVersion, found: dict[str, Action]
) -> None:
    name, kind, _ = world.receptacles[r]
    found[f"examine {name}"] = ("examine_r", r)
    accessible = not world.openable[r] or r in run.opened
    if world.openable[r]:
        found[f"{'close' if r in run.opened else 'open'} {name}"] = (
            "close" if r in run.opened else "open",
            r,
        )
    held = run.held
    for o, inside in enumerate(run.inside):
        if inside != r:
            continue
        # examineObject's first disjunct (an object in an open receptacle here) never grounds
        # in Fast Downward: only a held object can be examined.
        if accessible and held is None and world.has("pickupable", o):
            found[f"take {world.oname(o)} from {name}"] = ("take", o, r)
        if world.has("toggleable", o):
            found[f"use {world.oname(o)}"] = ("use", o)
    if held is None:
        return
    if accessible and held in world.holds[r]:
        verb = "move {} to {}" if grammar == "0.4" else "put {} in/on {}"
        found[verb.format(world.oname(held), name)] = ("put", held, r)
    for change, appliance, ability in APPLIANCES:
        if kind == appliance and world.has(ability, held):
            found[f"{change} {world.oname(held)} with {name}"] = (change, held, r)


def _hand_actions(world: World, run: Run, held: int, found: dict[str, Action]) -> None:
    found[f"examine {world.oname(held)}"] = ("examine_o", held)
    if world.has("knife", held):
        for o, near in enumerate(run.near):
            if run.at in near and world.has("sliceable", o) and o != held:
                found[f"slice {world.oname(o)} with {world.oname(held)}"] = ("slice", o, held)


def commands(world: World, run: Run, grammar: GrammarVersion) -> list[str]:
    """The admissible commands, sorted as ``PddlEnv`` sorts them."""
    return sorted(admissible(world, run, grammar))


Effect = Callable[[World, Run, Action, GrammarVersion], tuple[Run, str]]


def _goto(world: World, run: Run, action: Action, grammar: GrammarVersion) -> tuple[Run, str]:
    r = action[1]
    after = replace(run, at=world.receptacles[r][2])
    arrived = world.rname(r) if grammar == "0.4" else world.locations[after.at]
    return after, f"You arrive at {arrived}. {examine_receptacle(world, after, r)}"


def _open(world: World, run: Run, action: Action, grammar: GrammarVersion) -> tuple[Run, str]:
    r = action[1]
    after = replace(run, opened=run.opened | {r})
    return after, f"You open the {world.rname(r)}. {examine_receptacle(world, after, r)}"


def _close(world: World, run: Run, action: Action, grammar: GrammarVersion) -> tuple[Run, str]:
    return replace(run, opened=run.opened - {action[1]}), f"You close the {world.rname(action[1])}."


def _take(world: World, run: Run, action: Action, grammar: GrammarVersion) -> tuple[Run, str]:
    o, r = action[1], action[2]
    inside, near = list(run.inside), list(run.near)
    inside[o] = -1
    near[o] = near[o] - {run.at}  # PickupObject deletes objectAtLocation where the agent is only
    after = replace(run, held=o, inside=tuple(inside), near=tuple(near), taken=run.taken | {(o, r)})
    return after, f"You pick up the {world.oname(o)} from the {world.rname(r)}."


def _put(world: World, run: Run, action: Action, grammar: GrammarVersion) -> tuple[Run, str]:
    o, r = action[1], action[2]
    inside, near = list(run.inside), list(run.near)
    inside[o], near[o] = r, near[o] | {run.at}  # added: other objectAtLocation facts stay
    after = replace(
        run, held=None, inside=tuple(inside), near=tuple(near), taken=run.taken - {(o, r)}
    )
    if grammar == "0.4":
        return after, f"You move the {world.oname(o)} to the {world.rname(r)}."
    return after, f"You put the {world.oname(o)} in/on the {world.rname(r)}."


def _change(world: World, run: Run, action: Action, grammar: GrammarVersion) -> tuple[Run, str]:
    kind, o, r = action
    if kind == "heat":
        after = replace(run, hot=run.hot | {o}, cool=run.cool - {o})
    elif kind == "cool":
        after = replace(run, cool=run.cool | {o}, hot=run.hot - {o})
    else:
        after = replace(run, clean=run.clean | {o})
    return after, f"You {kind} the {world.oname(o)} using the {world.rname(r)}."


def _use(world: World, run: Run, action: Action, grammar: GrammarVersion) -> tuple[Run, str]:
    # ToggleObject sets isToggled; the grammar's first rule then always says "turn on".
    return replace(
        run, toggled=run.toggled | {action[1]}
    ), f"You turn on the {world.oname(action[1])}."


def _slice(world: World, run: Run, action: Action, grammar: GrammarVersion) -> tuple[Run, str]:
    co, ko = action[1], action[2]
    after = replace(run, sliced=run.sliced | {co})
    return after, f"You sliced the {world.oname(co)} with the {world.oname(ko)}."


def _inventory(world: World, run: Run, action: Action, grammar: GrammarVersion) -> tuple[Run, str]:
    if run.held is None:
        return run, "You are not carrying anything."
    return run, f"You are carrying: a {world.oname(run.held)}."


EFFECTS: dict[str, Effect] = {
    "goto": _goto,
    "open": _open,
    "close": _close,
    "take": _take,
    "put": _put,
    "heat": _change,
    "clean": _change,
    "cool": _change,
    "use": _use,
    "slice": _slice,
    "inventory": _inventory,
    "examine_r": lambda world, run, action, _: (run, examine_receptacle(world, run, action[1])),
    "examine_o": lambda world, run, action, _: (run, examine_object(world, run, action[1])),
    "help": lambda world, run, action, _: (run, HELP),
    "look": lambda world, run, action, _: (run, look(world, run)),
}


def apply(world: World, run: Run, action: Action, grammar: GrammarVersion) -> tuple[Run, str]:
    """The state after ``action`` and the feedback the grammar gives for it."""
    return EFFECTS[action[0]](world, run, action, grammar)


def examine_receptacle(world: World, run: Run, r: int) -> str:
    """``examineReceptacle.feedback``."""
    name = world.rname(r)
    if world.openable[r] and r not in run.opened:
        return f"The {name} is closed."
    contents = display_list([f"a {world.oname(o)}" for o, i in enumerate(run.inside) if i == r])
    if world.openable[r]:
        return f"The {name} is open. In it, you see {contents}."
    return f"On the {name}, you see {contents}."


def examine_object(world: World, run: Run, o: int) -> str:
    """``examineObject.feedback``: the first rule whose condition holds."""
    name = world.oname(o)
    if world.has("receptacle_object", o):
        return f"This is a normal {name}. In it, you see nothing."
    clean, hot, cool, sliced = o in run.clean, o in run.hot, o in run.cool, o in run.sliced
    for holds, text in (
        (clean and hot and sliced, f"This is a hot and clean sliced {name}."),
        (clean and cool and sliced, f"This is a cool and clean sliced {name}."),
        (clean and sliced, f"This is a clean sliced {name}."),
        (hot and sliced, f"This is a hot sliced {name}."),
        (cool and sliced, f"This is a cool sliced {name}."),
        (clean and hot, f"This is a hot and clean {name}."),
        (clean and cool, f"This is a cool and clean {name}."),
        (hot, f"This is a hot {name}."),
        (clean, f"This is a clean {name}."),
        (cool, f"This is a cold {name}."),
        (world.has("toggleable", o) and o in run.toggled, f"This {name} is on."),
        (world.has("sliceable", o) and sliced, f"This is a sliced {name}."),
    ):
        if holds:
            return text
    # "This {o} is off." needs a not_istoggled fact, which nothing ever adds.
    return f"There's nothing special about {name}."


def look(world: World, run: Run) -> str:
    """``look.feedback`` at the agent's location."""
    here = world.here(run.at)
    if not here:
        return "You are in the middle of a room. Looking quickly around you, you see nothing."
    facing = display_list([world.rname(r) for r in here])
    floor = [
        f"a {world.oname(o)}"
        for o, near in enumerate(run.near)
        if run.at in near
        for r in here
        if (o, r) in run.taken
    ]
    return f"You are facing the {facing}. Next to it, you see {display_list(floor)}."


def intro(world: World, run: Run) -> str:
    """The reset text: welcome line, the room at a glance, the task."""
    if world.here(run.at):
        glance = look(world, run)
    else:
        everything = display_list([f"a {name}" for name, _, _ in world.receptacles])
        glance = (
            f"You are in the middle of a room. Looking quickly around you, you see {everything}."
        )
    return f"{WELCOME}\n\n{glance}\n\nYour task is to: {world.task}."


def won(world: World, run: Run) -> bool:
    """Whether the task's PDDL goal holds (goal_library's conditions)."""
    kinds = world.objects
    rtype = [kind for _, kind, _ in world.receptacles]
    targets = [o for o, (_, kind) in enumerate(kinds) if kind == world.object_type]
    if world.task_type == "look_at_obj_in_light":
        if run.held is None or run.held not in targets:
            return False
        here = world.here(run.at)
        return any(
            kinds[o][1] == world.toggle_type and o in run.toggled and run.inside[o] in here
            for o in world.properties["toggleable"]
        )
    parents = {r for r, kind in enumerate(rtype) if kind == world.parent_type}
    if world.task_type == "pick_two_obj_and_place":
        placed = [run.inside[o] for o in targets if run.inside[o] in parents]
        return len(placed) != len(set(placed))
    spec = SPECS[world.task_type]
    flag = {"clean": run.clean, "hot": run.hot, "cool": run.cool}.get(spec.change or "")
    # The goal asks for the ability too ("(cleanable ?o) ... (isClean ?o)"): a game file may
    # start an object clean that cannot be cleaned.
    able = world.properties[spec.ability.lower()] if spec.ability else None
    return any(
        run.inside[o] in parents and (flag is None or o in flag) and (able is None or o in able)
        for o in targets
    )


@dataclass(frozen=True)
class Outcome:
    """One command's effect: the new run, the feedback, and whether the command was valid."""

    run: Run
    feedback: str
    valid: bool


def step(world: World, run: Run, command: str, grammar: GrammarVersion) -> Outcome:
    """``PddlEnv.step``: the command, stripped, must equal an admissible one; anything else is
    "Nothing happens." Either way the step counts."""
    action = admissible(world, run, grammar).get(command.strip())
    counted = replace(run, steps=run.steps + 1)
    if action is None:
        return Outcome(counted, NOTHING_HAPPENS, False)
    after, feedback = apply(world, counted, action, grammar)
    return Outcome(after, feedback, True)
