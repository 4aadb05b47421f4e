"""A small multi-turn family with its own playground renderer, loaded only by test servers.

A counter: each action ``add <k>`` adds k; the episode ends at the target. Its options use
every kind of control the playground's form draws, and its renderer draws the count as an SVG
(built in the worker, escaped there, as a diagram-drawing family would) with a text box for the
next action. ``add 13`` makes the renderer raise; ``add 14`` makes it sleep past its time.
"""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import Any, Literal

from markupsafe import Markup
from pydantic import BaseModel, ConfigDict, Field

from environments.base import (
    EnvironmentInputError,
    EnvSpec,
    EpisodeFinished,
    JSONValue,
    ResetResult,
    StepResult,
)
from environments.family import Contents, Family
from environments.renderer import Turn
from verifiers.score import Score


class CounterOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    target: int = Field(3, ge=1, le=50, description="The count that ends the episode.")
    shape: Literal["circle", "square"] = Field("circle", description="How a unit is drawn.")
    filled: bool = Field(True, description="Whether units are filled.")
    scale: float | None = Field(None, gt=0, le=10, description="Drawing scale; unset: 1.")
    label: str = Field("count", max_length=40, description="The diagram's caption.")
    note: str = Field("", max_length=2000, description="Free text shown under the diagram.")
    weights: list[int] = Field(default_factory=list, description="Ignored; a list option.")


class CounterEnv:
    spec = EnvSpec(
        id="test.counter",
        version="1",
        family="test.counter",
        description="Count up to a target with 'add <k>' actions (a test family).",
        kind="multi_turn",
        action_format="add <k>",
        observation_format="text",
        options_model=CounterOptions,
        timeout_s=2.0,
    )

    def reset(self, seed: int, options: BaseModel) -> ResetResult:
        assert isinstance(options, CounterOptions)
        state = {"n": 0, **options.model_dump(mode="json")}
        return ResetResult(f"count 0 of {options.target}", state, {"valid_actions": ["add 1"]})

    def step(self, state: JSONValue, action: str) -> StepResult:
        if not isinstance(state, dict) or "n" not in state:
            raise EnvironmentInputError("not a counter state")
        if state["n"] >= state["target"]:
            raise EpisodeFinished("the count is complete")
        word, _, amount = action.partition(" ")
        if word != "add" or not amount.isdigit():
            return StepResult(
                f"count {state['n']} of {state['target']}",
                Score.invalid(f"not an action: {action}"),
                False,
                False,
                state,
                {"valid_actions": ["add 1"]},
            )
        after = {**state, "n": state["n"] + int(amount), "last": int(amount)}
        done = after["n"] >= state["target"]
        reward = 1.0 if after["n"] == state["target"] else 0.0
        score = Score.ok(reward if done else 0.0, components={"exact": reward})
        info = {"valid_actions": [] if done else ["add 1", "add 2"]}
        return StepResult(
            f"count {after['n']} of {state['target']}", score, done, False, after, info
        )

    def expert_action(self, state: JSONValue) -> str:
        return f"add {state['target'] - state['n']}"


class CounterRenderer:
    templates = Path(__file__).parent / "templates"
    template = "drawn/counter.html"

    def context(self, state: JSONValue, turn: Turn) -> dict[str, Any]:
        if state.get("last") == 13:
            raise RuntimeError("this renderer is broken for 13")
        if state.get("last") == 14:
            time.sleep(5)
        scale = state.get("scale") or 1.0
        size = int(10 * scale)
        units = "".join(
            f'<rect x="{i * size * 2}" y="0" width="{size}" height="{size}"/>'
            if state["shape"] == "square"
            else f'<circle cx="{i * size * 2 + size}" cy="{size}" r="{size}"/>'
            for i in range(min(state["n"], 50))
        )
        width, height = max(1, state["n"]) * size * 2 + 80, size * 2 + 20
        fill = "black" if state["filled"] else "none"
        svg = Markup(  # every value in it is a number or escaped here
            f'<svg id="diagram" xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{height}" fill="{fill}" stroke="black">{units}'
            f'<text x="0" y="{height - 5}">{html.escape(state["label"])}</text></svg>'
        )
        return {"svg": svg, "n": state["n"], "note": state["note"]}


FAMILY = Family(
    name="test.counter",
    load=lambda: Contents(
        environments=(CounterEnv(),), renderers={"test.counter": CounterRenderer()}
    ),
    suite=Path(__file__).with_suffix(".redteam.toml"),
)
