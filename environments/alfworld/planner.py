"""The expert: a shortest plan to the goal from any state of a game.

Every task is "bring a target object (cleaned, heated or cooled on the way) to a receptacle of
the parent type" (twice for pick-two), or "hold the target at a switched-on lamp". The planner
tries every choice that matters (which target instance, which appliance, which destination,
which lamp; where to put down something already in hand) and keeps the cheapest plan, counting
the steps the domain really needs: a ``go to`` unless already there, an ``open`` for a closed
openable receptacle (it stays open), ``take``/``move``, the change itself, ``use``. Ties go to
the earliest choice in list order, so the plan is a pure function of the state.

It is used for the solvability proof of every generated game, as ``info.expert_plan``, as
``expert_action``, and for the expert-distance process reward.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from environments.alfworld.engine import GrammarVersion, Run, World, won
from environments.alfworld.tasks import SPECS

VERBS = {"hot": "heat", "clean": "clean", "cool": "cool"}
"""The command that makes the change a task asks for."""


@dataclass(frozen=True)
class Mind:
    """The planner's view of a state: where the agent is, what it holds, what is open, where
    each object is and which objects already carry the task's change."""

    at: int
    held: int | None
    opened: frozenset[int]
    inside: tuple[int, ...]
    changed: frozenset[int]
    toggled: frozenset[int]


@dataclass(frozen=True)
class Plan:
    """Commands and the state they lead to."""

    commands: tuple[str, ...]
    mind: Mind

    def then(self, other: Plan) -> Plan:
        """This plan followed by ``other`` (which starts from this plan's end)."""
        return Plan(self.commands + other.commands, other.mind)


class Planner:
    """Plans for one world in one grammar."""

    def __init__(self, world: World, grammar: GrammarVersion = "0.4") -> None:
        self.world = world
        self.grammar = grammar
        spec = SPECS[world.task_type]
        self.change = spec.change
        kinds = [kind for _, kind, _ in world.receptacles]
        self.targets = [o for o, (_, k) in enumerate(world.objects) if k == world.object_type]
        self.parents = [r for r, k in enumerate(kinds) if k == world.parent_type]
        self.appliances = [r for r, k in enumerate(kinds) if k == spec.appliance]
        self.lamps = [o for o, (_, k) in enumerate(world.objects) if k == world.toggle_type]

    # --- primitive moves ------------------------------------------------------------------------

    def _goto(self, mind: Mind, r: int) -> Plan:
        loc = self.world.receptacles[r][2]
        if loc == mind.at:
            return Plan((), mind)
        return Plan((f"go to {self.world.rname(r)}",), replace(mind, at=loc))

    def _reach(self, mind: Mind, r: int) -> Plan:
        """Be at ``r`` with it open if it opens."""
        plan = self._goto(mind, r)
        if self.world.openable[r] and r not in plan.mind.opened:
            opened = replace(plan.mind, opened=plan.mind.opened | {r})
            plan = plan.then(Plan((f"open {self.world.rname(r)}",), opened))
        return plan

    def _put(self, mind: Mind, r: int) -> Plan:
        held = mind.held
        assert held is not None
        plan = self._reach(mind, r)
        inside = list(plan.mind.inside)
        inside[held] = r
        verb = "move {} to {}" if self.grammar == "0.4" else "put {} in/on {}"
        command = verb.format(self.world.oname(held), self.world.rname(r))
        return plan.then(Plan((command,), replace(plan.mind, held=None, inside=tuple(inside))))

    def _free_hands(self, mind: Mind, towards: int) -> Iterator[Plan]:
        """Ways to put down what is held (nothing to do when the hands are empty): here or at
        location ``towards``, where the agent goes next (anywhere else costs one more step)."""
        if mind.held is None:
            yield Plan((), mind)
            return
        world = self.world
        fits = [r for r in range(len(world.receptacles)) if mind.held in world.holds[r]]
        near = [r for r in fits if world.receptacles[r][2] in (mind.at, towards)]
        for r in near or fits:
            yield self._put(mind, r)

    def _fetch(self, mind: Mind, o: int) -> Iterator[Plan]:
        """Ways to end up holding ``o``."""
        if mind.held == o:
            yield Plan((), mind)
            return
        for free in self._free_hands(mind, self.world.receptacles[mind.inside[o]][2]):
            r = free.mind.inside[o]
            plan = free.then(self._reach(free.mind, r))
            inside = list(plan.mind.inside)
            inside[o] = -1
            command = f"take {self.world.oname(o)} from {self.world.rname(r)}"
            yield plan.then(Plan((command,), replace(plan.mind, held=o, inside=tuple(inside))))

    def _change(self, mind: Mind, o: int) -> Iterator[Plan]:
        """Ways to give the held ``o`` the task's change (nothing if it has it)."""
        if self.change is None or o in mind.changed:
            yield Plan((), mind)
            return
        verb = VERBS[self.change]
        for a in self.appliances:
            plan = self._goto(mind, a)
            command = f"{verb} {self.world.oname(o)} with {self.world.rname(a)}"
            yield plan.then(Plan((command,), replace(plan.mind, changed=plan.mind.changed | {o})))

    def _deliver(self, mind: Mind, o: int, r: int) -> Iterator[Plan]:
        """Ways to bring ``o`` (changed as the task asks) into ``r``."""
        for fetch in self._fetch(mind, o):
            for change in self._change(fetch.mind, o):
                got = fetch.then(change)
                yield got.then(self._put(got.mind, r))

    # --- tasks ----------------------------------------------------------------------------------

    def _look(self, mind: Mind) -> Iterator[Plan]:
        """Hold a target where a lamp of the asked type stands, switched on."""
        for o in self.targets:
            for fetch in self._fetch(mind, o):
                for lamp in self.lamps:
                    host = fetch.mind.inside[lamp]
                    if host < 0:
                        continue
                    plan = fetch.then(self._goto(fetch.mind, host))
                    if lamp not in plan.mind.toggled:
                        toggled = replace(plan.mind, toggled=plan.mind.toggled | {lamp})
                        plan = plan.then(Plan((f"use {self.world.oname(lamp)}",), toggled))
                    yield plan

    def _two(self, mind: Mind) -> Iterator[Plan]:
        """Two targets in one receptacle of the parent type."""
        for r in self.parents:
            there = [o for o in self.targets if mind.inside[o] == r]
            others = [o for o in self.targets if o not in there]
            if len(there) >= 2:
                yield Plan((), mind)
            elif len(there) == 1:
                for o in others:
                    yield from self._deliver(mind, o, r)
            else:
                for first in others:
                    for one in self._deliver(mind, first, r):
                        for second in (o for o in others if o != first):
                            for two in self._deliver(one.mind, second, r):
                                yield one.then(two)

    def _candidates(self, mind: Mind) -> Iterator[Plan]:
        if self.world.task_type == "look_at_obj_in_light":
            yield from self._look(mind)
        elif self.world.task_type == "pick_two_obj_and_place":
            yield from self._two(mind)
        else:
            for o in self.targets:
                for r in self.parents:
                    yield from self._deliver(mind, o, r)

    def plan(self, run: Run) -> list[str] | None:
        """The shortest plan (first in choice order among equals) from ``run``; [] when the
        goal already holds, None when no choice reaches it."""
        if won(self.world, run):
            return []
        flag = {"clean": run.clean, "hot": run.hot, "cool": run.cool}.get(self.change or "")
        mind = Mind(
            at=run.at,
            held=run.held,
            opened=run.opened,
            inside=run.inside,
            changed=frozenset(flag or ()),
            toggled=run.toggled,
        )
        best: Plan | None = None
        for candidate in self._candidates(mind):
            if best is None or len(candidate.commands) < len(best.commands):
                best = candidate
        return None if best is None else list(best.commands)


def expert_plan(world: World, run: Run, grammar: GrammarVersion = "0.4") -> list[str] | None:
    """A shortest plan from ``run`` (see ``Planner.plan``)."""
    return Planner(world, grammar).plan(run)
