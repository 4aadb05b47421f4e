"""The ``alfworld`` environment's options: one model, validated once where the request enters
(the combinations a game cannot be played with included), then passed on as the model."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from environments.alfworld.engine import GrammarVersion
from environments.alfworld.generator import MAX_STEPS, Split
from environments.alfworld.rewards import RewardMode, needs_plan
from environments.alfworld.scenes import Difficulty
from environments.alfworld.tables import TaskType
from environments.alfworld.textworld_engine import MAX_EPISODE_STEPS
from verifiers.numbers import Options

EngineName = Literal["native", "textworld"]
Games = Literal["generated", "released"]


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
    engine: EngineName = Field(
        "native",
        description="native: the fast engine proven identical to ALFWorld's; textworld: "
        "ALFWorld's own engine (the alfworld extra; about a second to load a game, tens of "
        "milliseconds a step, episodes capped at 50 steps).",
    )
    games: Games = Field(
        "generated",
        description="generated: seeded games; released: ALFWorld's games under ALFWORLD_DATA "
        "(either engine).",
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
        "reached, over their number; native engine). All are reported as components.",
    )
    step_limit: int = Field(
        MAX_STEPS, ge=1, le=1000, description="Steps before truncation (ALFWorld: 50)."
    )

    @model_validator(mode="after")
    def _playable(self) -> Self:
        if self.game_index is not None and self.games != "released":
            raise ValueError("game_index selects a released game (games='released')")
        if self.engine == "textworld" and self.step_limit > MAX_EPISODE_STEPS:
            raise ValueError(
                f"engine 'textworld' caps episodes at ALFWorld's {MAX_EPISODE_STEPS} steps"
            )
        if self.engine == "textworld" and self.reward == "subgoal":
            raise ValueError("reward 'subgoal' needs the native engine")
        return self

    @property
    def wants_plan(self) -> bool:
        """Whether every step needs the expert's plan (shown, or the progress reward's)."""
        return needs_plan(self.expert_plan, self.reward)
