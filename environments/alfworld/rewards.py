"""Rewards: ALFWorld's sparse success reward, and two process rewards as components.

- ``won``: 1 on the step that reaches the goal, as ALFWorld scores (the only reward it has).
- ``progress``: the drop in the expert's distance to the goal (the length of its plan from
  the state) over the step, divided by the distance at reset. A shortest-path potential, so
  an episode's progress rewards sum to 1 when it is won, less otherwise; a detour is negative.
- ``subgoal``: the change in the fraction of sub-goals reached (the highest that holds, over
  their number), divided by what was left to reach at reset; the last sub-goal is the goal
  itself, so these too sum to 1 on a won episode. Sub-goals per task type: hold a target
  object; then (clean/heat/cool) a target carries the change (a target already in a fridge
  starts cool, as ALFRED writes it), (look) hold it where a lamp of the asked type stands,
  (pick two) one target is in a receptacle of the asked type; then the goal.

Which one is the step's reward is the ``reward`` option (``won`` by default); the others are
reported as components, and what they are computed from as metrics: ``subgoals`` (the fraction
reached) and ``expert_distance``.
"""

from __future__ import annotations

from typing import Literal

from environments.alfworld.engine import Run, World, won

RewardMode = Literal["won", "progress", "subgoal"]
MEASURED = ("subgoals",)
"""What an engine reports beside the rewards: a step's metrics, not its components."""


def needs_plan(shown: bool, reward: RewardMode) -> bool:
    """Whether every step needs the expert's plan: shown as info, or the progress reward's."""
    return shown or reward == "progress"


def subgoals(world: World, run: Run) -> list[bool]:
    """Which sub-goals of the task hold in ``run`` (the last one is the goal)."""
    kinds = world.objects
    targets = {o for o, (_, kind) in enumerate(kinds) if kind == world.object_type}
    holding = run.held is not None and run.held in targets
    steps = [holding]
    task = world.task_type
    if task == "look_at_obj_in_light":
        lamps_here = any(
            kinds[o][1] == world.toggle_type and run.inside[o] in world.here(run.at)
            for o in world.properties["toggleable"]
        )
        steps.append(holding and lamps_here)
    elif task == "pick_two_obj_and_place":
        parents = {
            r for r, (_, kind, _) in enumerate(world.receptacles) if kind == world.parent_type
        }
        steps.append(any(run.inside[o] in parents for o in targets))
    elif task != "pick_and_place_simple":
        flag = {
            "pick_clean_then_place_in_recep": run.clean,
            "pick_heat_then_place_in_recep": run.hot,
            "pick_cool_then_place_in_recep": run.cool,
        }[task]
        steps.append(any(o in flag for o in targets))
    steps.append(won(world, run))
    return steps


def stage(world: World, run: Run) -> float:
    """The fraction of sub-goals reached: the highest one that holds, over their number."""
    reached = subgoals(world, run)
    highest = max((i + 1 for i, ok in enumerate(reached) if ok), default=0)
    return highest / len(reached)
