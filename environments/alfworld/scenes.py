"""Seeded scenes: a floor plan's receptacles (with their AI2-THOR ids and interaction poses)
and objects placed where the wheel's can-contain table allows.

A floor plan's layout file lists its receptacles with the pose the agent takes to interact with
each; receptacles that share a pose share a location, as in ALFWorld's games (drawers stacked
in one chest). Receptacle types the floor plan has but the layout does not list (stove burners,
coffee machines, toasters, most garbage cans) get generated ids and poses. Objects get ids next
to their receptacle's; about one in ten stands at another receptacle's location (ALFRED's
``objectAtLocation`` is the nearest navigation point, not always its receptacle's).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from environments.alfworld.tables import Floorplan, Pose, tables
from environments.alfworld.tasks import LAMPS, Goal

Difficulty = Literal["easy", "medium", "hard"]

GRID = 0.25
"""AI2-THOR's navigation grid (``constants.AGENT_STEP_SIZE``): location ids count grid steps."""
MISPLACED = 0.1
"""Share of objects whose location is another receptacle's."""
LAMP_HOSTS = frozenset(
    {"Desk", "Dresser", "SideTable", "Shelf", "CoffeeTable", "DiningTable", "TVStand", "Ottoman"}
)
"""Where a desk or floor lamp stands (the wheel has no table for it)."""
SYNTHETIC_COUNTS = {"StoveBurner": (2, 4, 4, 4)}
"""Instances of a receptacle type the layout does not list (drawn from the tuple; default 1)."""


@dataclass(frozen=True)
class Size:
    """Scene size of a difficulty: receptacles kept (None: all the floor plan has), distractor
    object types (None: every type the floor plan has), copies of each distractor type."""

    receptacles: int | None
    distractor_types: int | None
    copies: int


SIZES: dict[str, Size] = {
    "easy": Size(receptacles=8, distractor_types=4, copies=1),
    "medium": Size(receptacles=16, distractor_types=10, copies=2),
    "hard": Size(receptacles=None, distractor_types=None, copies=2),
}


@dataclass(frozen=True)
class Fixture:
    """A receptacle: its AI2-THOR id, type and location id."""

    id: str
    type: str
    location: str


@dataclass(frozen=True)
class Thing:
    """An object: its AI2-THOR id, type, the receptacle it is in, and its location id."""

    id: str
    type: str
    receptacle: str
    location: str


@dataclass(frozen=True)
class Scene:
    """A room ready to play: receptacles, objects and the agent's start location."""

    floorplan: int
    room: str
    start: str
    receptacles: tuple[Fixture, ...]
    objects: tuple[Thing, ...]

    @property
    def locations(self) -> tuple[str, ...]:
        """Every location id: the start, then each receptacle's and object's, sorted."""
        found = {self.start}
        found.update(f.location for f in self.receptacles)
        found.update(t.location for t in self.objects)
        return tuple(sorted(found))


def receptacle_type(fixture_id: str) -> str:
    """``Sink|...|SinkBasin`` → SinkBasin; otherwise the id's first field."""
    parts = fixture_id.split("|")
    return parts[4] if len(parts) > 4 else parts[0]


def location_id(pose: Pose) -> str:
    """``loc|x|z|rotation|horizon`` in grid steps and quarter turns, as ALFRED writes it."""
    x, z, rotation, horizon = pose
    return f"loc|{round(x / GRID)}|{round(z / GRID)}|{rotation // 90}|{horizon}"


def _coordinate(value: float) -> str:
    # AI2-THOR's object id format: a sign and two decimals, zero written "00.00".
    return "00.00" if round(value, 2) == 0 else f"{value:+06.2f}"


def thor_id(kind: str, x: float, y: float, z: float, suffix: str = "") -> str:
    """An AI2-THOR object id such as ``Apple|-00.47|+01.15|+00.48``."""
    text = f"{kind}|{_coordinate(x)}|{_coordinate(y)}|{_coordinate(z)}"
    return f"{text}|{suffix}" if suffix else text


def _coordinates(fixture_id: str) -> tuple[float, float, float]:
    parts = fixture_id.split("|")
    return float(parts[1]), float(parts[2]), float(parts[3])


def static_fixtures(plan: Floorplan, rng: random.Random) -> list[Fixture]:
    """Every receptacle of the floor plan: the layout's, then generated ones for the receptacle
    types it has but does not list."""
    fixtures = [
        Fixture(rid, receptacle_type(rid), location_id(pose)) for rid, pose in plan.receptacles
    ]
    listed = {f.type for f in fixtures}
    poses = [pose for _, pose in plan.receptacles] or [(0.0, 0.0, 0, 30)]
    xs, zs = [p[0] for p in poses], [p[1] for p in poses]
    taken = {f.id for f in fixtures}
    for kind in sorted(plan.types & set(tables().receptacle_types) - listed):
        count = rng.choice(SYNTHETIC_COUNTS.get(kind, (1,)))
        pose: Pose = (0.0, 0.0, 0, 30)
        for index in range(count):
            if index % 2 == 0:  # burners come in pairs that share an interaction pose
                pose = (
                    round(rng.uniform(min(xs) - 1, max(xs) + 1) / GRID) * GRID,
                    round(rng.uniform(min(zs) - 1, max(zs) + 1) / GRID) * GRID,
                    rng.choice((0, 90, 180, 270)),
                    30,
                )
            while True:
                x = pose[0] + rng.uniform(-0.6, 0.6)
                y = rng.uniform(0.0, 1.6)
                z = pose[1] + rng.uniform(-0.6, 0.6)
                if kind in ("SinkBasin", "BathtubBasin"):
                    fixture_id = thor_id(kind.removesuffix("Basin"), x, y, z, kind)
                else:
                    fixture_id = thor_id(kind, x, y, z)
                if fixture_id not in taken:
                    break
            taken.add(fixture_id)
            fixtures.append(Fixture(fixture_id, kind, location_id(pose)))
    return fixtures


def pickupable_types() -> frozenset[str]:
    """Object types a scene may hold: everything some receptacle can contain, whole (not
    sliced) and not itself a static receptacle."""
    t = tables()
    contained = set().union(*t.can_contain.values())
    return frozenset(k for k in contained if not k.endswith("Sliced")) - set(t.receptacle_types)


def lamp_hosts(fixtures: list[Fixture]) -> list[Fixture]:
    """Receptacles a lamp may stand on."""
    return [f for f in fixtures if f.type in LAMP_HOSTS]


def _keep(fixtures: list[Fixture], goal: Goal, size: Size, rng: random.Random) -> list[Fixture]:
    """The receptacles a scene of ``size`` keeps: one of each the goal needs, then others."""
    required: list[Fixture] = []

    def need(candidates: list[Fixture]) -> None:
        if candidates and not any(f in required for f in candidates):
            required.append(rng.choice(candidates))

    if goal.parent_type is not None:
        need([f for f in fixtures if f.type == goal.parent_type])
    if goal.spec.appliance is not None:
        need([f for f in fixtures if f.type == goal.spec.appliance])
    if goal.toggle_type is not None:
        need(lamp_hosts(fixtures))
    need(_target_hosts(fixtures, goal))
    others = [f for f in fixtures if f not in required]
    rng.shuffle(others)
    limit = len(fixtures) if size.receptacles is None else max(size.receptacles, len(required))
    kept = required + others[: limit - len(required)]
    return sorted(kept, key=lambda f: f.id)


def _target_hosts(fixtures: list[Fixture], goal: Goal) -> list[Fixture]:
    # Targets never start in a receptacle of the parent type (the goal would hold at reset).
    t = tables()
    return [
        f for f in fixtures if t.contains(f.type, goal.object_type) and f.type != goal.parent_type
    ]


class _Placer:
    """Puts objects on receptacles, with unique ids next to their receptacle's."""

    def __init__(self, kept: list[Fixture], rng: random.Random) -> None:
        self.kept = kept
        self.rng = rng
        self.taken = {f.id for f in kept}
        self.objects: list[Thing] = []

    def place(self, kind: str, hosts: list[Fixture]) -> None:
        rng = self.rng
        host = rng.choice(hosts)
        hx, hy, hz = _coordinates(host.id)
        while True:
            thing_id = thor_id(
                kind,
                hx + rng.uniform(-0.4, 0.4),
                hy + rng.uniform(0.0, 0.3),
                hz + rng.uniform(-0.4, 0.4),
            )
            if thing_id not in self.taken:
                break
        self.taken.add(thing_id)
        location = host.location
        if rng.random() < MISPLACED:
            location = rng.choice(self.kept).location
        self.objects.append(Thing(thing_id, kind, host.id, location))


def _start(plan: Floorplan, occupied: set[str], rng: random.Random) -> str:
    """A start pose inside the floor plan's extent that no receptacle or object has."""
    poses = [p for _, p in plan.receptacles] or [(0.0, 0.0, 0, 30)]
    low_x, high_x = min(p[0] for p in poses), max(p[0] for p in poses)
    low_z, high_z = min(p[1] for p in poses), max(p[1] for p in poses)
    while True:
        x = round(rng.uniform(low_x, high_x) / GRID) * GRID
        z = round(rng.uniform(low_z, high_z) / GRID) * GRID
        start = location_id((x, z, rng.choice((0, 90, 180, 270)), 30))
        if start not in occupied:
            return start


def build(
    plan: Floorplan, fixtures: list[Fixture], goal: Goal, size: Size, rng: random.Random
) -> Scene:
    """Cut the room to ``size`` (keeping what the goal needs), then place the goal's objects,
    its lamp and distractors; the agent starts at a pose no receptacle has."""
    t = tables()
    kept = _keep(fixtures, goal, size, rng)
    plan_types = sorted(plan.types & pickupable_types() - {goal.object_type})
    placeable = [k for k in plan_types if any(t.contains(f.type, k) for f in kept)]
    rng.shuffle(placeable)
    distractors = placeable if size.distractor_types is None else placeable[: size.distractor_types]
    placer = _Placer(kept, rng)
    low = 2 if goal.spec.count == 2 else 1
    for _ in range(rng.randint(low, low + 2)):
        placer.place(goal.object_type, _target_hosts(kept, goal))
    if goal.toggle_type is not None:
        placer.place(goal.toggle_type, lamp_hosts(kept))
    for kind in distractors:
        hosts = [f for f in kept if t.contains(f.type, kind)]
        for _ in range(rng.randint(1, size.copies)):
            placer.place(kind, hosts)
    hosts = lamp_hosts(kept)
    for lamp in LAMPS:
        if lamp in plan.types and lamp != goal.toggle_type and hosts and size.copies > 1:
            placer.place(lamp, hosts)
    occupied = {f.location for f in kept} | {o.location for o in placer.objects}
    return Scene(
        floorplan=plan.number,
        room=plan.room,
        start=_start(plan, occupied, rng),
        receptacles=tuple(kept),
        objects=tuple(sorted(placer.objects, key=lambda o: o.id)),
    )
