"""Seeded ALFWorld games: a floor plan of the split, a goal of the task type, a scene sized by
difficulty, and the proof that the expert's plan wins it within ALFWorld's 50 steps.

``generate(seed, task_type, split, difficulty)`` is a pure function: the private RNG is seeded
with a string naming all four, so every machine regenerates the same game byte for byte.
Splits follow ALFRED's: ``train`` and ``valid_seen`` use the training floor plans (distinct
games: the split is part of the seed string), ``valid_unseen`` the held-out ones
(``constants.TEST_SCENE_NUMBERS``); object-receptacle combinations are split the same way
(``tasks.held_out``): ``valid_unseen`` draws only held-out ones, the other splits never do.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from environments.alfworld.engine import Run, World, step, won
from environments.alfworld.names import demangle, pddl_id
from environments.alfworld.planner import expert_plan
from environments.alfworld.scenes import (
    SIZES,
    Difficulty,
    Fixture,
    Scene,
    build,
    lamp_hosts,
    pickupable_types,
    static_fixtures,
)
from environments.alfworld.tables import TASK_TYPES, Floorplan, TaskType, tables
from environments.alfworld.tasks import LAMPS, SPECS, Goal, held_out

GENERATOR_VERSION = "1"
Split = Literal["train", "valid_seen", "valid_unseen"]
SPLITS: tuple[Split, ...] = ("train", "valid_seen", "valid_unseen")
MAX_STEPS = 50
"""ALFWorld's episode cap (``max_nb_steps_per_episode``); every game's expert plan fits in it."""
ATTEMPTS = 100


class GenerationFailed(RuntimeError):
    """No solvable game was found for these arguments (a bug: every combination is covered)."""


@dataclass(frozen=True)
class Game:
    """A generated game: the scene, the goal and the expert's winning plan (0.4 grammar)."""

    seed: int
    split: Split
    difficulty: Difficulty
    scene: Scene
    goal: Goal
    walkthrough: tuple[str, ...]

    @property
    def name(self) -> str:
        """The game's folder in ALFWorld's layout: ``<type>-<obj>-None-<recep>-<scene>/trial``."""
        last = self.goal.parent_type or self.goal.toggle_type
        task = f"{self.goal.task_type}-{self.goal.object_type}-None-{last}-{self.scene.floorplan}"
        return f"{task}/trial_S{self.seed}_{self.difficulty}"

    @cached_property
    def names(self) -> dict[str, str]:
        """Display name of every receptacle, object and location id (ALFWorld's Demangler)."""
        raw = [f.id for f in self.scene.receptacles] + [o.id for o in self.scene.objects]
        raw += list(self.scene.locations)
        entities = {r: pddl_id(r) for r in raw}
        named = demangle([*entities.values(), "agent1"])
        return {r: named[e] for r, e in entities.items()}

    @cached_property
    def world(self) -> World:
        """The native engine's world: entities in sorted PDDL-id order, as lists show them."""
        scene = self.scene
        locations = sorted(scene.locations, key=pddl_id)
        where = {loc: i for i, loc in enumerate(locations)}
        receptacles = sorted(scene.receptacles, key=lambda f: pddl_id(f.id))
        objects = sorted(scene.objects, key=lambda o: pddl_id(o.id))
        return World.build(
            {
                "task_type": self.goal.task_type,
                "task": self.goal.text,
                "object_type": self.goal.object_type,
                "parent_type": self.goal.parent_type,
                "toggle_type": self.goal.toggle_type,
                "locations": [self.names[loc] for loc in locations],
                "start": where[scene.start],
                "receptacles": [[self.names[f.id], f.type, where[f.location]] for f in receptacles],
                "objects": [[self.names[o.id], o.type] for o in objects],
            }
        )

    @cached_property
    def run(self) -> Run:
        """The initial run: the agent at its start, hands empty, nothing open, and (as ALFRED's
        ``state_to_pddl`` writes it) every object of the target type in a fridge already cool."""
        scene = self.scene
        locations = sorted(scene.locations, key=pddl_id)
        where = {loc: i for i, loc in enumerate(locations)}
        receptacles = sorted(scene.receptacles, key=lambda f: pddl_id(f.id))
        index = {f.id: i for i, f in enumerate(receptacles)}
        kinds = {f.id: f.type for f in receptacles}
        objects = sorted(scene.objects, key=lambda o: pddl_id(o.id))
        cool = {
            i
            for i, o in enumerate(objects)
            if o.type == self.goal.object_type and kinds[o.receptacle] == "Fridge"
        }
        return Run(
            at=where[scene.start],
            held=None,
            inside=tuple(index[o.receptacle] for o in objects),
            near=tuple(frozenset({where[o.location]}) for o in objects),
            cool=frozenset(cool),
        )


def _scenes(task_type: TaskType, split: Split) -> list[Floorplan]:
    t = tables()
    numbers = t.test_scenes if split == "valid_unseen" else t.train_scenes
    rooms = t.goal_rooms[task_type]
    return [t.floorplans[n] for n in sorted(numbers) if t.floorplans[n].room in rooms]


def goal_choices(
    plan: Floorplan, fixtures: list[Fixture], task_type: TaskType
) -> list[tuple[str, str | None, str | None]]:
    """``(object, parent, toggle)`` targets the scene allows for ``task_type``: the object is
    in the floor plan and has the ability the task needs, the parent can contain it (and is not
    the task's appliance), and some other receptacle can hold the object to start with."""
    t = tables()
    spec = SPECS[task_type]
    kinds = sorted({f.type for f in fixtures})
    objects = sorted(plan.types & pickupable_types())
    choices: list[tuple[str, str | None, str | None]] = []
    if task_type == "look_at_obj_in_light":
        if not lamp_hosts(fixtures):
            return []
        for obj in objects:
            if any(t.contains(k, obj) for k in kinds):
                choices += [(obj, None, lamp) for lamp in LAMPS if lamp in plan.types]
        return choices
    if spec.appliance is not None and spec.appliance not in kinds:
        return []
    for obj in objects:
        if spec.ability is not None and not t.has(spec.ability, obj):
            continue
        for parent in kinds:
            if parent == spec.appliance or not t.contains(parent, obj):
                continue
            if any(t.contains(k, obj) for k in kinds if k != parent):
                choices.append((obj, parent, None))
    return choices


def _attempt(
    seed: int, task_type: TaskType | None, split: Split, difficulty: Difficulty, attempt: int
) -> Game | None:
    rng = random.Random(
        f"alfworld@{GENERATOR_VERSION}/{seed}/{split}/{task_type or 'any'}/{difficulty}/{attempt}"
    )
    kind = task_type if task_type is not None else rng.choice(TASK_TYPES)
    plan = rng.choice(_scenes(kind, split))
    fixtures = static_fixtures(plan, rng)
    unseen = split == "valid_unseen"
    choices = [
        (obj, parent, toggle)
        for obj, parent, toggle in goal_choices(plan, fixtures, kind)
        if held_out(Goal(kind, obj, parent, toggle, 0)) == unseen
    ]
    if not choices:
        return None
    obj, parent, toggle = rng.choice(choices)
    goal = Goal(kind, obj, parent, toggle, rng.randint(0, 1))
    scene = build(plan, fixtures, goal, SIZES[difficulty], rng)
    game = Game(seed, split, difficulty, scene, goal, ())
    walkthrough = prove(game.world, game.run)
    if walkthrough is None:
        return None
    return Game(seed, split, difficulty, scene, goal, tuple(walkthrough))


def prove(world: World, run: Run) -> list[str] | None:
    """The expert's plan if replaying it on the native engine wins within ``MAX_STEPS`` and the
    game is not won before the first step; None otherwise."""
    if won(world, run):
        return None
    plan = expert_plan(world, run)
    if plan is None or not 0 < len(plan) <= MAX_STEPS:
        return None
    for command in plan:
        outcome = step(world, run, command, "0.4")
        if not outcome.valid:
            return None
        run = outcome.run
    return plan if won(world, run) else None


def generate(
    seed: int,
    task_type: TaskType | None = None,
    split: Split = "train",
    difficulty: Difficulty = "hard",
) -> Game:
    """The game ``(seed, task_type, split, difficulty)`` name; a random task type when None."""
    for attempt in range(ATTEMPTS):
        game = _attempt(seed, task_type, split, difficulty, attempt)
        if game is not None:
            return game
    raise GenerationFailed(f"no solvable game for {(seed, task_type, split, difficulty)}")
