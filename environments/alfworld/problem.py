"""ALFWorld's game files read into the native engine: a ``game.tw-pddl`` (PDDL domain, grammar
with the task sentence, PDDL problem) and its ``traj_data.json`` become a ``World`` and its
starting ``Run``.

The engine plays a file only when its rules are the ones the engine implements, so nothing is
approximated: the domain and the grammar (task sentence aside) must be the wheel's (0.4) or the
2.1.1 games' (0.3) text exactly, the goal must be ``goal_library``'s for the task
``traj_data.json`` names, and every fact must belong to a family the engine models. What each
thing can do is read from the facts (``openable``, ``canContain``, ``pickupable``,
``cleanable``, ...), not from the wheel's tables, so a file that departs from the tables plays as
it is written. Anything else is an ``UnsupportedGame`` naming what the engine does not model;
ALFWorld's own engine (``engine: textworld``) plays those.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from typing import Any

from environments.alfworld.engine import (
    KNIVES,
    Abilities,
    GrammarVersion,
    MalformedGame,
    Run,
    World,
)
from environments.alfworld.export import domain, grammar
from environments.alfworld.names import demangle, mangle
from environments.alfworld.tables import TASK_TYPES, tables

GOAL_SLOT = "UNKNOWN GOAL"
ABILITIES = {
    "pickupable": "pickupable",
    "cleanable": "cleanable",
    "heatable": "heatable",
    "coolable": "coolable",
    "toggleable": "toggleable",
    "sliceable": "sliceable",
    "isreceptacleobject": "receptacle_object",
}
"""Facts that say what an object can do, and the engine's name for each."""
FLAGS = {"isclean": "clean", "ishot": "hot", "iscool": "cool", "issliced": "sliced",
         "istoggled": "toggled"}  # fmt: skip
"""Facts that say an object's state, and the ``Run`` field each fills."""
IGNORED = frozenset({
    "wasinreceptacle", "checked", "examined", "ison", "moveable", "full", "holdsany",
    "holdsanyreceptacleobject", "isreceptacleobjectfull",
})  # fmt: skip
"""Facts no active action's precondition, no goal and no text of the grammar reads (``isOn`` is
only flipped by ``use``, whose text reads ``isToggled``)."""
MODELLED = frozenset({"atlocation", "receptacleatlocation", "objectatlocation", "inreceptacle",
                      "receptacletype", "objecttype", "cancontain", "openable", "opened",
                      "holds"}) | set(ABILITIES) | set(FLAGS) | IGNORED  # fmt: skip


class UnsupportedGame(ValueError):
    """A game file whose rules or facts the native engine does not model exactly."""


@dataclass(frozen=True)
class GameFile:
    """A game file as the native engine plays it."""

    world: World
    run: Run
    grammar: GrammarVersion
    walkthrough: tuple[str, ...]


Sexp = str | list["Sexp"]


def _parse(text: str) -> list[Sexp]:
    """The s-expressions of a PDDL text (comments dropped)."""
    tokens = re.findall(r"[()]|[^\s()]+", re.sub(r";[^\n]*", "", text))
    stack: list[list[Sexp]] = [[]]
    for token in tokens:
        if token == "(":  # noqa: S105 - a parenthesis, not a password
            stack.append([])
        elif token == ")":  # noqa: S105
            if len(stack) == 1:
                raise UnsupportedGame("the PDDL problem has an unbalanced ')'")
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(token.lower())  # Fast Downward reads PDDL case-insensitively
    if len(stack) != 1:
        raise UnsupportedGame("the PDDL problem has an unclosed '('")
    return stack[0]


def _sections(
    problem: str, needed: tuple[str, ...] = (":objects", ":init", ":goal")
) -> dict[str, list[Sexp]]:
    parsed = _parse(problem)
    if not parsed or not isinstance(parsed[0], list) or parsed[0][:1] != ["define"]:
        raise UnsupportedGame("the PDDL problem is not a (define ...)")
    sections: dict[str, list[Sexp]] = {}
    for part in parsed[0][1:]:
        if isinstance(part, list) and part and isinstance(part[0], str):
            sections[part[0]] = part[1:]
    for section in needed:
        if section not in sections:
            raise UnsupportedGame(f"the PDDL problem has no {section} section")
    return sections


def _typed(objects: list[Sexp]) -> dict[str, str]:
    """``name - type`` entries of the ``:objects`` section, by name."""
    entities: dict[str, str] = {}
    pending: list[str] = []
    items = iter(objects)
    for item in items:
        if not isinstance(item, str):
            raise UnsupportedGame("the :objects section holds a list")
        if item != "-":
            pending.append(item)
            continue
        kind = next(items, None)
        if not isinstance(kind, str):
            raise UnsupportedGame("the :objects section ends after '-'")
        entities.update(dict.fromkeys(pending, kind))
        pending = []
    if pending:
        raise UnsupportedGame(f"untyped entities in :objects: {pending[:3]}")
    return entities


def _version(document: dict[str, Any]) -> tuple[GrammarVersion, str]:
    """The grammar version whose domain and grammar the file holds, and its task sentence."""
    text, rules = document.get("grammar"), document.get("pddl_domain")
    if not isinstance(text, str) or not isinstance(rules, str):
        raise UnsupportedGame("the game file lacks a grammar or a PDDL domain")
    for version in ("0.4", "0.3"):
        head, slot, tail = grammar(version, GOAL_SLOT).partition(GOAL_SLOT)
        if not (slot and text.startswith(head) and text.endswith(tail)):
            continue
        sentence = text[len(head) : len(text) - len(tail)]
        if rules.strip() != domain(version).strip():
            raise UnsupportedGame(f"the PDDL domain is not the {version} grammar's domain")
        return version, sentence
    raise UnsupportedGame("the grammar is neither the wheel's (0.4) nor the 2.1.1 games' (0.3)")


def _one(pairs: dict[str, list[str]], key: str, what: str) -> str:
    found = pairs.get(key, [])
    if len(found) != 1:
        raise UnsupportedGame(f"{key} has {len(found)} {what} facts; the engine models one")
    return found[0]


@cache
def _canonical() -> dict[str, str]:
    t = tables()
    return {k.lower(): k for k in (*t.object_constants, *t.receptacle_types, *t.can_contain)}


def _kind(type_constant: str) -> str:
    """A type constant (``appletype``) as the tables spell the type (``Apple``)."""
    if not type_constant.endswith("type"):
        raise UnsupportedGame(f"{type_constant!r} is not a type constant")
    bare = type_constant[: -len("type")]
    return _canonical().get(bare, bare)


def _goal(task_type: str, params: dict[str, Any]) -> list[Sexp]:
    """``goal_library``'s goal for the task, parsed as the file's is (the library's text also
    closes the ``define``)."""
    text = (
        tables()
        .goals[task_type]
        .pddl.format(
            obj=params.get("object_target") or "",
            recep=params.get("parent_target") or "",
            toggle=params.get("toggle_target") or "",
        )
    )
    return _sections(f"(define {mangle(text)}", (":goal",))[":goal"]


def read(document: dict[str, Any], traj: dict[str, Any]) -> GameFile:
    """The native game of a ``game.tw-pddl`` document and its ``traj_data.json``; raises
    UnsupportedGame for a file the engine does not model exactly."""
    version, sentence = _version(document)
    problem = document.get("pddl_problem")
    if not isinstance(problem, str):
        raise UnsupportedGame("the game file lacks a PDDL problem")
    task_type = traj.get("task_type")
    params = traj.get("pddl_params")
    if task_type not in TASK_TYPES or not isinstance(params, dict):
        raise UnsupportedGame(f"traj_data.json names no supported task type ({task_type!r})")
    sections = _sections(problem)
    if sections[":goal"] != _goal(task_type, params):
        raise UnsupportedGame(f"the goal is not goal_library's for {task_type} and its targets")
    entities = _typed(sections[":objects"])
    facts: dict[str, list[list[str]]] = defaultdict(list)
    for fact in sections[":init"]:
        if not isinstance(fact, list) or not fact or not isinstance(fact[0], str):
            raise UnsupportedGame("an :init entry is not a fact")
        if fact[0] == "=":  # costs and distances: the planner's, not the game's
            continue
        if not all(isinstance(a, str) for a in fact):
            raise UnsupportedGame(f"a {fact[0]} fact has a nested argument")
        if fact[0] not in MODELLED:
            raise UnsupportedGame(f"the engine does not model {fact[0]} facts")
        facts[fact[0]].append([str(a) for a in fact[1:]])
    by_first: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for name, rows in facts.items():
        for row in rows:
            if row:
                by_first[name][row[0]].append(row[1] if len(row) > 1 else "")
    try:
        return _build(version, sentence, task_type, params, entities, facts=facts,
                      by_first=by_first, document=document)  # fmt: skip
    except KeyError as exc:  # a fact naming an entity of the wrong kind
        raise UnsupportedGame(f"a fact names {exc} where the domain wants another kind") from None


def _build(
    version: GrammarVersion,
    sentence: str,
    task_type: str,
    params: dict[str, Any],
    entities: dict[str, str],
    *,
    facts: dict[str, list[list[str]]],
    by_first: dict[str, dict[str, list[str]]],
    document: dict[str, Any],
) -> GameFile:
    locations = sorted(e for e, t in entities.items() if t == "location")
    receptacles = sorted(e for e, t in entities.items() if t == "receptacle")
    # Objects without a type are the type constants (``Apple - object``): no fact names them.
    typed = by_first["objecttype"]
    objects = sorted(e for e, t in entities.items() if t == "object" and e in typed)
    agents = [e for e, t in entities.items() if t == "agent"]
    if len(agents) != 1:
        raise UnsupportedGame(f"the problem has {len(agents)} agents; the engine models one")
    names = demangle(entities)
    where = {loc: i for i, loc in enumerate(locations)}
    rindex = {r: i for i, r in enumerate(receptacles)}
    oindex = {o: i for i, o in enumerate(objects)}
    rkinds = [_kind(_one(by_first["receptacletype"], r, "receptacleType"))
              if r in by_first["receptacletype"] else "" for r in receptacles]  # fmt: skip
    okinds = [_kind(_one(by_first["objecttype"], o, "objectType")) for o in objects]
    rlocs = [_one(by_first["receptacleatlocation"], r, "receptacleAtLocation") for r in receptacles]
    start = _one(by_first["atlocation"], agents[0], "atLocation")
    held = by_first["holds"].get(agents[0], [])
    if len(held) > 1:
        raise UnsupportedGame("the agent holds more than one object")
    known = {*objects, *receptacles, *locations, *agents}
    for name, rows in facts.items():
        for row in rows:
            stray = [a for a in row if a not in known and not a.endswith("type")]
            if stray:
                raise UnsupportedGame(f"a {name} fact names {stray[0]!r}, which is not declared")
    inside: list[int] = []
    for o in objects:
        hosts = by_first["inreceptacle"].get(o, [])
        if o in held:
            if hosts:
                raise UnsupportedGame(f"{o} is held and in a receptacle")
            inside.append(-1)
        else:
            inside.append(rindex[_one(by_first["inreceptacle"], o, "inReceptacle")])
    contains = {(rt, ot) for rt, ot in facts["cancontain"]}

    def holds(receptacle_kind: str) -> frozenset[int]:
        rt = f"{receptacle_kind.lower()}type"
        return frozenset(i for i, k in enumerate(okinds) if (rt, f"{k.lower()}type") in contains)

    def having(fact: str) -> frozenset[int]:
        return frozenset(oindex[row[0]] for row in facts[fact] if row[0] in oindex)

    properties = {engine_name: having(fact) for fact, engine_name in ABILITIES.items()}
    properties["knife"] = frozenset(i for i, k in enumerate(okinds) if k in KNIVES)
    openable = {row[0] for row in facts["openable"]}
    abilities = Abilities(
        openable=tuple(r in openable for r in receptacles),
        holds=tuple(holds(kind) for kind in rkinds),
        properties=properties,
    )

    def target(key: str) -> str | None:
        value = params.get(key)
        return _kind(f"{str(value).lower()}type") if value else None

    placed = zip(receptacles, rkinds, rlocs, strict=True)
    try:
        world = World.build(
            {
                "task_type": task_type,
                "task": sentence,
                "object_type": target("object_target"),
                "parent_type": target("parent_target"),
                "toggle_type": target("toggle_target"),
                "locations": [names[loc] for loc in locations],
                "start": where[start],
                "receptacles": [[names[r], k, where[loc]] for r, k, loc in placed],
                "objects": [[names[o], k] for o, k in zip(objects, okinds, strict=True)],
            },
            abilities,
        )
        flags = {field: having(fact) for fact, field in FLAGS.items()}
        run = Run.from_json(
            {
                "at": where[start],
                "held": oindex[held[0]] if held else None,
                "inside": inside,
                "near": [
                    sorted(where[loc] for loc in by_first["objectatlocation"].get(o, []))
                    for o in objects
                ],
                "opened": sorted(rindex[row[0]] for row in facts["opened"]),
                "taken": [],
                "steps": 0,
                **{field: sorted(found) for field, found in flags.items()},
            },
            world,
        )
    except MalformedGame as exc:
        raise UnsupportedGame(f"the problem does not fit the engine: {exc}") from None
    walkthrough = document.get("walkthrough") or []
    return GameFile(world, run, version, tuple(str(c) for c in walkthrough))


def read_text(game: str, traj: str) -> GameFile:
    """``read`` from the two files' texts."""
    try:
        document, trajectory = json.loads(game), json.loads(traj)
    except ValueError as exc:
        raise UnsupportedGame(f"the game files are not JSON: {exc}") from None
    if not isinstance(document, dict) or not isinstance(trajectory, dict):
        raise UnsupportedGame("the game files are not JSON objects")
    return read(document, trajectory)
