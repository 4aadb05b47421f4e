"""A generated game as ALFWorld's own files: ``game.tw-pddl`` and ``traj_data.json``, in the
released layout ``json_2.1.1/<split>/<task>/<trial>/``, ready for ``AlfredTWEnv`` or
TextWorld's ``PddlEnv``.

``game.tw-pddl`` is ``{"pddl_domain", "grammar", "pddl_problem", "solvable", "walkthrough"}``:
the wheel's domain, its grammar with ``UNKNOWN GOAL`` replaced by the task sentence
(``add_task_to_grammar``), and a problem written as ALFRED's ``state_to_pddl`` writes one (the
same object sections, fact families and id mangling), plus the facts the domain reads that
``state_to_pddl`` leaves to the scene (``canContain``, ``pickupable``, ``objectAtLocation``,
``isReceptacleObject``, ``sliceable``, ``toggleable``).

Grammar 0.3 (the released 2.1.1 games, ReAct's prompts) is the wheel's grammar and domain with
ALFWorld's own 2.1.1 → 2.1.2 patch (``scripts/patch_tw-pddl.py``) undone: ``put {o} in/on {r}``,
"You put the ... in/on the ...", "You arrive at {lend.name}." and no ``help`` action.

    envserver alfworld export OUT --seeds 0-9 [--task-type T] [--split S]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from environments.alfworld.engine import GrammarVersion
from environments.alfworld.generator import Game, Split, generate
from environments.alfworld.names import mangle
from environments.alfworld.scenes import Difficulty
from environments.alfworld.tables import TaskType, domain_text, grammar_text, tables

RELEASE = "json_2.1.1"


def domain(version: GrammarVersion) -> str:
    """The PDDL domain: the wheel's, or without the ``help`` action for 0.3."""
    text = domain_text()
    if version == "0.4":
        return text
    start = text.index("(:action help")
    end = text.index("\n)\n", start) + len("\n)\n")
    return text[:start] + text[end:]


def grammar(version: GrammarVersion, task: str) -> str:
    """The grammar with the task sentence in place of ``UNKNOWN GOAL``."""
    text = grammar_text()
    if version == "0.3":
        text = text[: text.index("\naction help {")] + "\n"
        for new, old in (
            ("You arrive at {r.name}.", "You arrive at {lend.name}."),
            ("move {o} to {r}", "put {o} in/on {r}"),
            ("You move the {o.name} to the {r.name}.", "You put the {o.name} in/on the {r.name}."),
        ):
            if new not in text:
                raise ValueError(f"the wheel's grammar lacks {new!r}")
            text = text.replace(new, old)
    return text.replace("UNKNOWN GOAL", task)


def as_version(command: str, version: GrammarVersion) -> str:
    """A 0.4 command in ``version``'s phrasing (``move X to Y`` → ``put X in/on Y``)."""
    if version == "0.3" and command.startswith("move ") and " to " in command:
        head, _, target = command[len("move ") :].rpartition(" to ")
        return f"put {head} in/on {target}"
    return command


def _grid(location: str) -> tuple[int, int]:
    parts = location.split("|")
    return int(parts[1]), int(parts[2])


def problem(game: Game) -> str:
    """The PDDL problem, as ``PlannedGameState.state_to_pddl`` lays it out."""
    t = tables()
    scene, goal = game.scene, game.goal
    static = t.receptacle_types
    objects = sorted(t.object_constants)
    receptacles = sorted(scene.receptacles, key=lambda f: f.id)
    things = sorted(scene.objects, key=lambda o: o.id)
    locations = sorted(scene.locations)
    kinds = {f.id: f.type for f in receptacles}
    otypes = sorted({o.type for o in things})
    rtypes = sorted({f.type for f in receptacles})

    def lines(items: list[str]) -> str:
        return "\n        ".join(items)

    def having(ability: str) -> list[str]:
        return [o.id for o in things if t.has(ability, o.type)]

    start = f"""
(define (problem plan_{game.name.replace("/", "_")})
    (:domain alfred)
    (:objects
        agent1 # agent
        {lines([f"{o} # object" for o in objects])}
        {lines([f"{o}Type # otype" for o in objects])}
        {lines([f"{r}Type # rtype" for r in static])}
"""
    mid_start = f"""
        {lines([f"{o.id} # object" for o in things])}
        {lines([f"{f.id} # receptacle" for f in receptacles])}
        {lines([f"{loc} # location" for loc in locations])}
        )
"""
    init = """
    (:init
        (= (totalCost) 0)
"""
    target = [o for o in things if o.type == goal.object_type]
    cool = [o.id for o in target if kinds[o.receptacle] == "Fridge"]
    pickupable = set().union(*t.can_contain.values()) - t.actions["Toggleable"]
    distances = []
    for i, a in enumerate(locations):
        for b in locations[i + 1 :]:
            (ax, az), (bx, bz) = _grid(a), _grid(b)
            d = abs(ax - bx) + abs(az - bz) + 1
            distances += [f"(= (distance {a} {b}) {d})", f"(= (distance {b} {a}) {d})"]
    facts = [
        [f"(receptacleType {f.id} {f.type}Type)" for f in receptacles],
        [f"(objectType {o.id} {o.type}Type)" for o in things],
        [f"(canContain {r}Type {o}Type)" for r in rtypes for o in otypes if t.contains(r, o)],
        [f"(pickupable {o.id})" for o in things if o.type in pickupable],
        [f"(isReceptacleObject {o.id})" for o in things if o.type in t.movable_receptacles],
        [f"(openable {f.id})" for f in receptacles if f.type in t.openable],
        [f"(atLocation agent1 {scene.start})"],
        [f"(cleanable {o})" for o in having("Cleanable")],
        [f"(heatable {o})" for o in having("Heatable")],
        [f"(coolable {o})" for o in having("Coolable")],
        [f"(isCool {o})" for o in cool],
        [f"(toggleable {o})" for o in having("Toggleable")],
        [f"(sliceable {o})" for o in having("Sliceable")],
        [f"(inReceptacle {o.id} {o.receptacle})" for o in things],
        [f"(wasInReceptacle  {o.id} {o.receptacle})" for o in target],
        distances,
        [f"(receptacleAtLocation {f.id} {f.location})" for f in receptacles],
        [f"(objectAtLocation {o.id} {o.location})" for o in things],
    ]
    mid_init = "\n".join(f"        {lines(group)}" for group in facts) + "\n        )\n"
    pddl_goal = t.goals[goal.task_type].pddl.format(
        obj=goal.object_type, recep=goal.parent_type or "", toggle=goal.toggle_type or ""
    )
    return "\n".join(
        [mangle(start), mangle(mid_start), mangle(init), mangle(mid_init), mangle(pddl_goal)]
    )


def game_file(game: Game, version: GrammarVersion = "0.4") -> dict[str, Any]:
    """The ``game.tw-pddl`` document."""
    return {
        "pddl_domain": domain(version),
        "grammar": grammar(version, game.goal.text),
        "pddl_problem": problem(game),
        "solvable": True,
        "walkthrough": [as_version(c, version) for c in game.walkthrough],
    }


def traj_data(game: Game) -> dict[str, Any]:
    """The ``traj_data.json`` fields ALFWorld's loaders read (``task_type``, ``pddl_params``,
    the scene, and the task sentence as the one annotation)."""
    goal = game.goal
    return {
        "task_id": game.name.split("/")[-1],
        "task_type": goal.task_type,
        "pddl_params": {
            "object_target": goal.object_type,
            "parent_target": goal.parent_type or "",
            "toggle_target": goal.toggle_type or "",
            "mrecep_target": "",
            "object_sliced": False,
        },
        "scene": {
            "floor_plan": f"FloorPlan{game.scene.floorplan}",
            "scene_num": game.scene.floorplan,
        },
        "turk_annotations": {"anns": [{"task_desc": goal.text, "votes": [1]}]},
        "split": game.split,
    }


def write(game: Game, root: Path, version: GrammarVersion = "0.4") -> Path:
    """Write the game under ``root/json_2.1.1/<split>/<name>/``; returns its ``game.tw-pddl``."""
    folder = root / RELEASE / game.split / game.name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "traj_data.json").write_text(json.dumps(traj_data(game), indent=2))
    path = folder / "game.tw-pddl"
    path.write_text(json.dumps(game_file(game, version)))
    return path


def write_games(
    out: Path,
    seeds: range,
    *,
    task_type: TaskType | None = None,
    split: Split = "train",
    difficulty: Difficulty = "hard",
    version: GrammarVersion = "0.4",
) -> list[Path]:
    """Write the games of ``seeds`` in the released layout under ``out``."""
    return [write(generate(seed, task_type, split, difficulty), out, version) for seed in seeds]
