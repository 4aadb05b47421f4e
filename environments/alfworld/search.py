"""The alfworld family's search space for ``envserver audit --search`` (issue 38).

Probes are episodes of ``alfworld`` on generated games, played on the native engine (the
default): a seed, options (task type, split, difficulty, grammar) and commands.

- **Seeds**: the expert's plan (a shortest plan to the goal) of random games, played to the
  goal.
- **Moves**: the generic episode moves (``environments.mutators.episode_moves``: truncate,
  repeat, insert, swap, hostile arguments, another game's plan) and ALFWorld's ``rename``: a
  command of the plan aimed at another instance of the same object or receptacle type (``mug
  2`` for ``mug 1``), the near miss of a policy that confuses instances.
- **Judge**: the commands are played on the engine's own step function, outside the
  environment's episode, state token and reward code: an episode that never reaches the goal
  within its step limit there deserves 0. One that does is played again on ALFWorld's own
  engine (TextWorld's PDDL engine with ALFWorld's wrappers, the ``alfworld`` extra), on the
  same game exported as ALFWorld's ``game.tw-pddl``, which decides: 1 when the goal holds after
  the same commands, else 0. So a reward paid where ALFWorld would not pay is found whether the
  fault is in the episode's code (the step function says no) or in the native engine (ALFWorld
  says no), and ALFWorld's engine, seconds a game, runs only for the episodes that may win.
  Without the extra the step function decides alone.

Only the default ``won`` reward is searched: the process rewards (``progress``, ``subgoal``)
are the native engine's own.
"""

from __future__ import annotations

import importlib.util
import random
import re
from collections.abc import Iterator, Sequence
from functools import cache, lru_cache
from typing import Any, get_args

from pydantic import ValidationError

from environments.alfworld.engine import GrammarVersion, step, won
from environments.alfworld.engines import generated
from environments.alfworld.export import game_file
from environments.alfworld.family import AlfWorldEnv
from environments.alfworld.generator import MAX_STEPS, SPLITS
from environments.alfworld.options import AlfWorldOptions
from environments.alfworld.scenes import Difficulty
from environments.alfworld.tables import TaskType
from environments.mutators import episode_moves
from environments.search import Move, Mutant, Probe, SearchSpace

ENV = "alfworld"
SEEDS_PER_DRAW = 3
_INSTANCE = re.compile(r"\b([a-z]+) (\d+)\b")
"""An object or receptacle in a command: its type and instance number (``mug 1``)."""


@cache
def _env() -> AlfWorldEnv:
    return AlfWorldEnv()


# --- seeds -----------------------------------------------------------------------------------


def _random_options(rng: random.Random) -> dict[str, Any]:
    options: dict[str, Any] = {
        "split": rng.choice(SPLITS),
        "difficulty": rng.choice(get_args(Difficulty)),
        "grammar": rng.choice(get_args(GrammarVersion)),
    }
    if rng.random() < 0.7:
        options["task_type"] = rng.choice(get_args(TaskType))
    return options


@lru_cache(maxsize=256)
def expert_commands(seed: int, options: tuple[tuple[str, Any], ...]) -> tuple[str, ...] | None:
    """The expert's commands for the game ``(seed, options)`` names, to the goal; None where
    those options name no game (a held-out combination)."""
    env = _env()
    try:
        state = env.reset(seed, AlfWorldOptions.model_validate(dict(options))).state
    except (ValidationError, ValueError):
        return None
    commands: list[str] = []
    for _ in range(MAX_STEPS):
        commands.append(env.expert_action(state))
        result = env.step(state, commands[-1])
        if result.terminated or result.truncated:
            return tuple(commands) if result.terminated else None
        state = result.state
    return None


def seeds(rng: random.Random) -> Iterator[Mutant]:
    """The expert's plans of random games; the judge decides what they deserve (the goal: 1)."""
    for _ in range(SEEDS_PER_DRAW):
        seed, options = rng.randrange(1_000_000), _random_options(rng)
        commands = expert_commands(seed, tuple(sorted(options.items())))
        if commands is not None:
            yield Mutant(
                Probe(env=ENV, seed=seed, options=options, actions=commands, origin="expert")
            )


def elsewhere(probe: Probe, rng: random.Random) -> Sequence[str]:
    """Another game's expert plan (its objects and receptacles are not this game's)."""
    for _ in range(5):
        options = _random_options(rng)
        found = expert_commands(rng.randrange(1_000_000), tuple(sorted(options.items())))
        if found:
            return found
    return ()


# --- ALFWorld's move: another instance of the same type --------------------------------------


def _rename(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """A command of the episode aimed at another instance (``mug 2`` for ``mug 1``)."""
    probe = parent.probe
    if probe.env != ENV or not probe.actions:
        return
    named = [(i, m) for i, a in enumerate(probe.actions) for m in _INSTANCE.finditer(a)]
    if not named:
        return
    at, found = rng.choice(named)
    other = int(found[2]) + rng.choice((-1, 1, 2))
    if other < 1:
        other = int(found[2]) + 1
    command = probe.actions[at]
    changed = f"{command[: found.start()]}{found[1]} {other}{command[found.end() :]}"
    actions = [*probe.actions[:at], changed, *probe.actions[at + 1 :]]
    yield Mutant(probe.played(actions, "rename"))


# --- the judge -------------------------------------------------------------------------------


def _native_win(probe: Probe, options: AlfWorldOptions) -> tuple[str, ...] | None:
    """The commands that did something, up to the one that reaches the goal, on the engine's
    own step function (outside the environment's state, token and reward code); None when the
    goal is not reached within the step limit. Commands that did nothing ("Nothing happens.")
    change nothing on either engine but the step count, which is checked here: leaving them
    out lets mutants that differ only in junk share one run of ALFWorld's engine."""
    made = generated(probe.seed or 0, options.task_type, options.split, options.difficulty)
    world, run = made.world, made.run
    effective: list[str] = []
    for command in tuple(probe.actions or ())[: options.step_limit]:
        outcome = step(world, run, command, options.grammar)
        run = outcome.run
        if outcome.valid:
            effective.append(command)
        if won(world, run):
            return tuple(effective)
    return None


@lru_cache(maxsize=1024)
def alfworld_wins(seed: int, options: AlfWorldOptions, commands: tuple[str, ...]) -> bool:
    """Whether ALFWorld's own engine reaches the goal of the game with ``commands``."""
    from environments.alfworld.textworld_engine import engine  # noqa: PLC0415

    made = generated(seed, options.task_type, options.split, options.difficulty)
    real = engine()
    real.policy = False
    return real.play(real.game_path(game_file(made, options.grammar)), list(commands)).won


def deserves(probe: Probe) -> float | None:
    """0 when the engine's step function never reaches the goal with ``probe``'s commands within
    the step limit; else ALFWorld's own engine decides (1 when it reaches the goal with the same
    commands, 0 when not), or without it the step function (1). None on released games, other
    rewards, or past ALFWorld's 50 steps."""
    if probe.env != ENV or probe.actions is None or probe.seed is None:
        return None
    options = AlfWorldOptions.model_validate(dict(probe.options))
    if options.games != "generated" or options.reward != "won" or options.step_limit > MAX_STEPS:
        return None
    reached = _native_win(probe, options)
    if reached is None:
        return 0.0
    if any(importlib.util.find_spec(name) is None for name in ("alfworld", "textworld")):
        return 1.0
    if any("\x00" in command for command in reached):
        return None  # ALFWorld's engine cannot take a NUL
    return 1.0 if alfworld_wins(probe.seed, options, reached) else 0.0


SEARCH = SearchSpace(
    seeds=seeds,
    mutators=(*episode_moves(elsewhere), Move("rename", _rename)),
    deserves=deserves,
)
