"""The ``alfworld`` environment: ALFWorld's household tasks through stateless state tokens.

Two engines behind one contract. ``native`` (default) plays generated games on the pure-Python
engine (``engine.py``); the whole game is in the state. ``textworld`` plays them, or ALFWorld's
released games under ``ALFWORLD_DATA``, on ALFWorld's own engine (``textworld_engine.py``, the
``alfworld`` extra); its state is the game's name and the commands so far, replayed on the
worker's engine when it does not already stand there.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field

from environments.alfworld.engine import (
    NOTHING_HAPPENS,
    GrammarVersion,
    MalformedGame,
    Run,
    World,
    commands,
    intro,
    step,
    won,
    world_from_text,
)
from environments.alfworld.export import game_file
from environments.alfworld.generator import MAX_STEPS, Game, Split, generate
from environments.alfworld.loader import DataUnavailable, game_path, released_games
from environments.alfworld.planner import expert_plan
from environments.alfworld.rewards import RewardMode, stage
from environments.alfworld.scenes import Difficulty
from environments.alfworld.tables import TaskType
from environments.alfworld.textworld_engine import MAX_EPISODE_STEPS, Observation, engine
from environments.base import (
    EnvironmentInputError,
    EnvSpec,
    EpisodeFinished,
    JSONValue,
    ResetResult,
    StepResult,
)
from verifiers.numbers import Options
from verifiers.score import Score

VERSION = "1"
TASK_LINE = re.compile(r"Your task is to: (.*)\.$", re.MULTILINE)
ACTION_FORMAT = (
    "One command exactly as listed in info['admissible_commands'], e.g. 'go to countertop 1', "
    "'take apple 1 from countertop 1', 'heat apple 1 with microwave 1', 'move apple 1 to "
    "diningtable 1' ('put apple 1 in/on diningtable 1' with grammar 0.3); anything else: "
    "'Nothing happens.' (it still counts a step)."
)


class AlfWorldOptions(Options):
    """What selects the episode besides the seed."""

    task_type: TaskType | None = Field(
        None, description="One of ALFWorld's six task types; unset: drawn from the seed."
    )
    split: Split = Field(
        "train",
        description="train and valid_seen: the training floor plans; valid_unseen: held-out "
        "floor plans and object-receptacle combinations (as ALFRED's splits).",
    )
    difficulty: Difficulty = Field(
        "hard",
        description="Scene size of generated games: easy (at most 8 receptacles, 4 distractor "
        "types), medium (16, 10), hard (the whole floor plan, as the released games).",
    )
    grammar: GrammarVersion = Field(
        "0.4",
        description="0.4: 'move X to Y' and 'You arrive at {receptacle}' (the alfworld wheel); "
        "0.3: 'put X in/on Y', 'You arrive at loc N', no 'help' (the released 2.1.1 games and "
        "ReAct-style prompts). Generated games only: released games carry their own.",
    )
    engine: Literal["native", "textworld"] = Field(
        "native",
        description="native: the fast engine proven identical to ALFWorld's; textworld: "
        "ALFWorld's own engine (the alfworld extra; about a second to load a game, tens of "
        "milliseconds a step, episodes capped at 50 steps).",
    )
    games: Literal["generated", "released"] = Field(
        "generated",
        description="generated: seeded games; released: ALFWorld's games under ALFWORLD_DATA "
        "(engine textworld).",
    )
    game_index: int | None = Field(
        None, ge=0, description="Released games: the game's index in the split; unset: seed mod n."
    )
    expert_plan: bool = Field(
        False, description="Add info['expert_plan'], the expert's commands to the goal, every step."
    )
    reward: RewardMode = Field(
        "won",
        description="The step's reward: won (1 on reaching the goal, ALFWorld's), progress (the "
        "drop in the expert's distance, over the distance at reset), subgoal (sub-goals "
        "reached, over their number). All are reported as components either way.",
    )
    step_limit: int = Field(
        MAX_STEPS, ge=1, le=1000, description="Steps before truncation (ALFWorld: 50)."
    )


@lru_cache(maxsize=64)
def _generated(seed: int, task_type: TaskType | None, split: Split, difficulty: Difficulty) -> Game:
    return generate(seed, task_type, split, difficulty)


class AlfWorldEnv:
    """ALFWorld (Shridhar et al., ICLR 2021), text mode."""

    @property
    def spec(self) -> EnvSpec:
        """The catalogue entry."""
        return EnvSpec(
            id="alfworld",
            version=VERSION,
            family="alfworld",
            description="ALFWorld (Shridhar et al., 2021): household tasks in text (put, "
            "examine under a lamp, clean, heat, cool, put two) on seeded games generated from "
            "ALFWorld's floor plans and tables; ALFWorld's texts, admissible commands and "
            "50-step limit; reward 1 on reaching the goal, process rewards as components.",
            kind="multi_turn",
            action_format=ACTION_FORMAT,
            observation_format="text",
            options_model=AlfWorldOptions,
            timeout_s=120.0,
            max_episode_steps=MAX_STEPS,
        )

    # --- reset -----------------------------------------------------------------------------------

    def reset(self, seed: int, options: BaseModel) -> ResetResult:
        """The first observation of the game ``(seed, options)`` name."""
        if not isinstance(options, AlfWorldOptions):
            options = AlfWorldOptions.model_validate(options.model_dump())
        if options.games == "released" or options.engine == "textworld":
            return self._reset_textworld(seed, options)
        if options.game_index is not None:
            raise EnvironmentInputError("game_index selects a released game (games='released')")
        game = _generated(seed, options.task_type, options.split, options.difficulty)
        world, run = game.world, game.run
        plan = expert_plan(world, run, options.grammar) or []
        state = {
            "engine": "native",
            "game": game.name,
            "world": world.text(),
            "run": run.to_json(),
            "grammar": options.grammar,
            "limit": options.step_limit,
            "reward": options.reward,
            "plan": options.expert_plan,
            "distance": len(plan),
            "start_distance": len(plan),
            "start_stage": stage(world, run),
        }
        info = self._native_info(world, run, options.grammar, plan if options.expert_plan else None)
        info |= {"game": game.name, "floorplan": game.scene.floorplan}
        return ResetResult(intro(world, run), state, info)

    def _reset_textworld(self, seed: int, options: AlfWorldOptions) -> ResetResult:
        if options.engine != "textworld":
            raise EnvironmentInputError("released games play on engine 'textworld'")
        if options.step_limit > MAX_EPISODE_STEPS:
            raise EnvironmentInputError(
                f"engine 'textworld' caps episodes at ALFWorld's {MAX_EPISODE_STEPS} steps"
            )
        if options.reward == "subgoal":
            raise EnvironmentInputError("reward 'subgoal' needs the native engine")
        if options.games == "released":
            try:
                listed = released_games(options.split, options.task_type)
            except DataUnavailable as exc:
                raise EnvironmentInputError(str(exc)) from None
            if options.game_index is not None and options.game_index >= len(listed):
                raise EnvironmentInputError(
                    f"game_index {options.game_index} is out of range: split "
                    f"{options.split!r} has {len(listed)} games"
                )
            chosen = listed[
                seed % len(listed) if options.game_index is None else options.game_index
            ]
            source: dict[str, Any] = {
                "games": "released",
                "split": options.split,
                "relative": chosen.relative,
            }
            name, task_type = chosen.relative, chosen.task_type
        else:
            if options.game_index is not None:
                raise EnvironmentInputError("game_index selects a released game (games='released')")
            game = _generated(seed, options.task_type, options.split, options.difficulty)
            source = {
                "games": "generated",
                "seed": seed,
                "task_type": options.task_type,
                "split": options.split,
                "difficulty": options.difficulty,
                "grammar": options.grammar,
            }
            name, task_type = game.name, game.goal.task_type
        state: dict[str, Any] = {
            "engine": "textworld",
            "game": name,
            "source": source,
            "task_type": task_type,
            "commands": [],
            "limit": options.step_limit,
            "reward": options.reward,
            "plan": options.expert_plan,
        }
        wants_plan = options.expert_plan or options.reward == "progress"
        observation = _real_play(source, [], wants_plan)
        plan = observation.policy_commands or []
        state["distance"] = state["start_distance"] = len(plan)
        found = TASK_LINE.search(observation.feedback)
        state["task"] = found.group(1) if found else ""
        info = {
            "admissible_commands": observation.admissible_commands,
            "task_type": task_type,
            "task": state["task"],
            "won": observation.won,
            "steps": 0,
            "game": name,
        }
        if options.expert_plan:
            info["expert_plan"] = plan
        return ResetResult(observation.feedback, state, info)

    # --- step ------------------------------------------------------------------------------------

    def step(self, state: JSONValue, action: str) -> StepResult:
        """Apply one command; raises ``EpisodeFinished`` once the game is won or truncated."""
        if not isinstance(state, dict) or state.get("engine") not in ("native", "textworld"):
            raise EnvironmentInputError("malformed alfworld state")
        if state["engine"] == "textworld":
            return self._step_textworld(state, action)
        world, run, grammar = _native(state)
        limit = _limit(state)
        if won(world, run) or run.steps >= limit:
            raise EpisodeFinished("this episode has ended: reset to start another")
        outcome = step(world, run, action, grammar)
        after = outcome.run
        is_won = won(world, after)
        reached, start = stage(world, after), state.get("start_stage")
        if not isinstance(start, (int, float)) or not 0 <= start < 1:
            raise EnvironmentInputError("malformed alfworld state: start_stage")
        components = {
            "won": float(is_won),
            "subgoals": reached,
            "subgoal": (reached - stage(world, run)) / (1 - start),
        }
        plan: list[str] | None = None
        new_state = {**state, "run": after.to_json()}
        if state.get("plan") or state.get("reward") == "progress":
            plan = expert_plan(world, after, grammar) or []
            components |= _progress(state, len(plan))
            new_state["distance"] = len(plan)
        reward = components.get(str(state.get("reward")), components["won"])
        score = (
            Score.ok(reward, components)
            if outcome.valid
            else Score.invalid(f"{NOTHING_HAPPENS} Not an admissible command.", components)
        )
        info = self._native_info(world, after, grammar, plan if state.get("plan") else None)
        truncated = not is_won and after.steps >= limit
        return StepResult(outcome.feedback, score, is_won, truncated, new_state, info)

    def _step_textworld(self, state: dict[str, Any], action: str) -> StepResult:
        try:
            history = [str(c) for c in state["commands"]]
            source = dict(state["source"])
        except (KeyError, TypeError, ValueError) as exc:
            raise EnvironmentInputError(f"malformed alfworld state: {exc!r}") from None
        limit = _limit(state)
        if state.get("won") or len(history) >= limit:
            raise EpisodeFinished("this episode has ended: reset to start another")
        wants_plan = bool(state.get("plan")) or state.get("reward") == "progress"
        observation = _real_play(source, [*history, action], wants_plan)
        steps = len(history) + 1
        components = {"won": float(observation.won)}
        new_state = {**state, "commands": [*history, action], "won": observation.won}
        plan = observation.policy_commands or []
        if wants_plan:
            components |= _progress(state, len(plan))
            new_state["distance"] = len(plan)
        reward = components.get(str(state.get("reward")), components["won"])
        valid = observation.feedback != NOTHING_HAPPENS
        score = (
            Score.ok(reward, components)
            if valid
            else Score.invalid(f"{NOTHING_HAPPENS} Not an admissible command.", components)
        )
        info: dict[str, Any] = {
            "admissible_commands": observation.admissible_commands,
            "task_type": state.get("task_type"),
            "task": state.get("task"),
            "won": observation.won,
            "steps": steps,
        }
        if state.get("plan"):
            info["expert_plan"] = plan
        truncated = not observation.won and steps >= limit
        return StepResult(observation.feedback, score, observation.won, truncated, new_state, info)

    @staticmethod
    def _native_info(
        world: World, run: Run, grammar: GrammarVersion, plan: list[str] | None
    ) -> dict[str, JSONValue]:
        info: dict[str, JSONValue] = {
            "admissible_commands": commands(world, run, grammar),
            "task_type": world.task_type,
            "task": world.task,
            "won": won(world, run),
            "steps": run.steps,
        }
        if plan is not None:
            info["expert_plan"] = plan
        return info

    # --- expert ----------------------------------------------------------------------------------

    def expert_action(self, state: JSONValue) -> str:
        """The expert plan's next command (``look`` when the goal already holds)."""
        if not isinstance(state, dict):
            raise EnvironmentInputError("malformed alfworld state")
        if state.get("engine") == "textworld":
            try:
                source, history = dict(state["source"]), [str(c) for c in state["commands"]]
            except (KeyError, TypeError, ValueError) as exc:
                raise EnvironmentInputError(f"malformed alfworld state: {exc!r}") from None
            plan = _real_play(source, history, True).policy_commands
        else:
            world, run, grammar = _native(state)
            plan = expert_plan(world, run, grammar)
        return plan[0] if plan else "look"


def _native(state: dict[str, Any]) -> tuple[World, Run, GrammarVersion]:
    grammar = state.get("grammar")
    if grammar not in ("0.4", "0.3"):
        raise EnvironmentInputError("malformed alfworld state: grammar")
    try:
        world = world_from_text(state["world"])
        run = Run.from_json(state["run"], world)
    except (KeyError, TypeError, MalformedGame) as exc:
        raise EnvironmentInputError(f"malformed alfworld state: {exc}") from None
    return world, run, grammar


def _limit(state: dict[str, Any]) -> int:
    limit = state.get("limit")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise EnvironmentInputError("malformed alfworld state: limit")
    return limit


def _progress(state: dict[str, Any], distance: int) -> dict[str, float]:
    before, start = state.get("distance"), state.get("start_distance")
    if not isinstance(before, int) or not isinstance(start, int):
        raise EnvironmentInputError("malformed alfworld state: distance")
    return {
        "expert_distance": float(distance),
        "progress": (before - distance) / start if start else 0.0,
    }


def _real_play(source: dict[str, Any], history: list[str], plan: bool) -> Observation:
    """The real engine's observation after ``history`` on the game ``source`` names."""
    try:
        real = engine()
    except ModuleNotFoundError as exc:
        raise EnvironmentInputError(
            f"engine 'textworld' needs ALFWorld's engine ({exc.name} is missing): "
            "pip install 'envserver[alfworld]'"
        ) from None
    if source.get("games") == "released":
        try:
            path = str(game_path(str(source["split"]), str(source["relative"])))
        except DataUnavailable as exc:
            raise EnvironmentInputError(str(exc)) from None
    else:
        game = _generated(
            int(source["seed"]), source["task_type"], source["split"], source["difficulty"]
        )
        path = real.game_path(game_file(game, source.get("grammar", "0.4")))
    real.policy = plan
    return real.play(path, history)
