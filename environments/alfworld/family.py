"""The ``alfworld`` environment: ALFWorld's household tasks through stateless state tokens.

Two engines behind one protocol (``engines.py``): ``native`` (default), the pure-Python engine,
and ``textworld``, ALFWorld's own (the ``alfworld`` extra); either plays generated games or
ALFWorld's released games under ``ALFWORLD_DATA``. This module turns what an engine shows into
the step's reward (``won``, or a process reward), its components and info.
"""

from __future__ import annotations

from environments.alfworld.engine import NOTHING_HAPPENS
from environments.alfworld.engines import ENGINES, Moment
from environments.alfworld.generator import MAX_STEPS
from environments.alfworld.options import AlfWorldOptions
from environments.alfworld.rewards import MEASURED
from environments.alfworld.state import dump, read
from environments.base import EnvSpec, JSONValue, ResetResult, StepResult
from verifiers.score import Score

__all__ = ["AlfWorldEnv", "AlfWorldOptions"]

VERSION = "1"
ACTION_FORMAT = (
    "One command exactly as listed in info['admissible_commands'], e.g. 'go to countertop 1', "
    "'take apple 1 from countertop 1', 'heat apple 1 with microwave 1', 'move apple 1 to "
    "diningtable 1' ('put apple 1 in/on diningtable 1' with grammar 0.3); anything else: "
    "'Nothing happens.' (it still counts a step)."
)


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
            "ALFWorld's floor plans and tables, or its released games; ALFWorld's texts, "
            "admissible commands and 50-step limit; reward 1 on reaching the goal, process "
            "rewards as components.",
            kind="multi_turn",
            action_format=ACTION_FORMAT,
            observation_format="text",
            options_model=AlfWorldOptions,
            timeout_s=120.0,
            max_episode_steps=MAX_STEPS,
            actions_key="admissible_commands",
        )

    def reset(self, seed: int, options: AlfWorldOptions) -> ResetResult:
        """The first observation of the game ``(seed, options)`` name (validated at the edge)."""
        opening = ENGINES[options.engine].start(seed, options)
        info = _info(opening.moment, options.expert_plan) | opening.info
        return ResetResult(opening.moment.observation, dump(opening.episode), info)

    def step(self, state: JSONValue, action: str) -> StepResult:
        """Apply one command; raises ``EpisodeFinished`` once the game is won or truncated."""
        episode = read(state)
        after, moment = ENGINES[episode.engine].advance(episode, action)
        # Every reward the options offer is a component; what they are computed from, metrics.
        components = {"won": float(moment.won), **moment.components}
        metrics = {name: components.pop(name) for name in MEASURED if name in components}
        if episode.wants_plan:
            distance = len(moment.plan or [])
            start = episode.start_distance
            components["progress"] = (episode.distance - distance) / start if start else 0.0
            metrics["expert_distance"] = float(distance)
            after = after.model_copy(update={"distance": distance})
        reward = components.get(episode.reward, components["won"])
        score = (
            Score.ok(reward, components, metrics=metrics)
            if moment.valid
            else Score.invalid(f"{NOTHING_HAPPENS} Not an admissible command.", components, metrics)
        )
        truncated = not moment.won and moment.steps >= episode.limit
        info = _info(moment, episode.plan)
        return StepResult(moment.observation, score, moment.won, truncated, dump(after), info)

    def expert_action(self, state: JSONValue) -> str:
        """The expert plan's next command (``look`` when the goal already holds)."""
        episode = read(state)
        plan = ENGINES[episode.engine].expert(episode)
        return plan[0] if plan else "look"


def _info(moment: Moment, shown: bool) -> dict[str, JSONValue]:
    info: dict[str, JSONValue] = {
        "admissible_commands": moment.admissible,
        "task_type": moment.task_type,
        "task": moment.task,
        "won": moment.won,
        "steps": moment.steps,
    }
    if shown:
        info["expert_plan"] = moment.plan or []
    return info
