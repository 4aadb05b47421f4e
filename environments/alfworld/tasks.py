"""The six task types: what each needs from a scene, its goal sentence, and the held-out
object-receptacle combinations of the ``valid_unseen`` split."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from environments.alfworld.tables import TASK_TYPES, TaskType, tables

Change = Literal["clean", "hot", "cool"]

LAMPS = ("DeskLamp", "FloorLamp")
"""The toggle targets of ``look_at_obj_in_light`` (the wheel's Toggleable set)."""


@dataclass(frozen=True)
class TaskSpec:
    """What a task type asks: the object's change (and the appliance that makes it), how many
    objects end in the receptacle, and ReAct's short name for it."""

    name: TaskType
    short: str
    change: Change | None = None
    appliance: str | None = None
    ability: str | None = None
    count: int = 1


SPECS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec("pick_and_place_simple", "put"),
        TaskSpec("look_at_obj_in_light", "examine", count=0),
        TaskSpec("pick_clean_then_place_in_recep", "clean", "clean", "SinkBasin", "Cleanable"),
        TaskSpec("pick_heat_then_place_in_recep", "heat", "hot", "Microwave", "Heatable"),
        TaskSpec("pick_cool_then_place_in_recep", "cool", "cool", "Fridge", "Coolable"),
        TaskSpec("pick_two_obj_and_place", "puttwo", count=2),
    )
}
assert tuple(SPECS) == TASK_TYPES


@dataclass(frozen=True)
class Goal:
    """A task: its type, ALFRED's ``pddl_params`` targets, and which of the two templates
    phrases it."""

    task_type: TaskType
    object_type: str
    parent_type: str | None
    toggle_type: str | None
    template: int

    @property
    def spec(self) -> TaskSpec:
        """The task type's spec."""
        return SPECS[self.task_type]

    @property
    def text(self) -> str:
        """``get_templated_task_desc``: the template filled with the lower-cased targets."""
        template = tables().goals[self.task_type].templates[self.template]
        return template.format(
            obj=self.object_type.lower(),
            recep=(self.parent_type or "").lower(),
            toggle=(self.toggle_type or "").lower(),
        )

    @property
    def combination(self) -> tuple[str, str, str]:
        """The object-receptacle combination the splits hold out (the lamp for examine)."""
        return (self.task_type, self.object_type, self.parent_type or self.toggle_type or "")


UNSEEN_PERCENT = 20
"""About this share of object-receptacle combinations appears only in ``valid_unseen``."""


def held_out(goal: Goal) -> bool:
    """Whether the goal's combination is reserved for ``valid_unseen`` (a stable hash, so the
    same on every machine)."""
    digest = hashlib.sha256("/".join(goal.combination).encode()).digest()
    return int.from_bytes(digest[:4], "big") % 100 < UNSEEN_PERCENT
