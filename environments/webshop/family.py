"""The ``webshop`` environment: WebShop episodes through stateless state tokens."""

from __future__ import annotations

import bisect
import itertools
import random
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field

from environments.base import (
    EnvironmentInputError,
    EnvSpec,
    EpisodeFinished,
    JSONValue,
    ResetResult,
    StepResult,
)
from environments.webshop.engine import SUB_PAGES, Engine, EpisodeState
from environments.webshop.goals import SPLITS, Goal
from environments.webshop.pages import ObservationMode, render
from environments.webshop.shop import Shop, get_shop
from verifiers.numbers import Options
from verifiers.score import Score
from verifiers.webshop import score_purchase
from verifiers.webshop.reward import MalformedPurchase

VERSION = "2"
"""2: the state carries the goal's index, not the goal (a token's length told of the goal)."""
ACTION_FORMAT = (
    "search[<keywords>] or click[<clickable>], where the clickable is a button label, a product "
    "ASIN or an option value shown on the page (lower case); info['valid_actions'] lists them."
)


class WebShopOptions(Options):
    """What selects the episode besides the seed."""

    observation_mode: ObservationMode = Field(
        "text",
        description="text: nodes joined by ' [SEP] ' (the original's simple mode); text_rich: "
        "[button] ... [button_] lines; html: the page.",
    )
    split: Literal["all", "train", "eval", "test"] = Field(
        "all",
        description="Goals to draw from: the original's index splits of its shuffled goal list "
        "(test 0-499, eval 500-1499, train 1500+) or all of them.",
    )
    goal_index: int | None = Field(
        None,
        ge=0,
        description="A goal's index within the split; unset: a weighted draw seeded by the seed "
        "(as the original samples goals by weight).",
    )
    step_limit: int = Field(100, ge=1, le=1000, description="Steps before truncation.")


class WebShopEnv:
    """WebShop: search a catalogue, open items, choose options, buy; the reward scores the
    purchase against the goal (the original formula, ``verifiers.webshop``)."""

    def __init__(self, shop: Shop | None = None) -> None:
        self._shop = shop

    @property
    def shop(self) -> Shop:
        """The shop this environment serves (the process's configured one by default)."""
        return self._shop or get_shop()

    @property
    def engine(self) -> Engine:
        """The state machine over the shop."""
        return _engine(self.shop)

    @property
    def spec(self) -> EnvSpec:
        """The catalogue entry."""
        return EnvSpec(
            id="webshop",
            version=VERSION,
            family="webshop",
            description="WebShop (Yao et al., 2022): follow a shopping instruction in a simulated "
            "store (BM25 search, results pages, item pages with options, Buy Now); the reward "
            "matches the purchase's attributes, options, price and type against the goal.",
            kind="multi_turn",
            action_format=ACTION_FORMAT,
            observation_format="text",
            options_model=WebShopOptions,
            verifier="webshop",
            timeout_s=60.0,
            max_episode_steps=100,
            actions_key="valid_actions",
        )

    def pick_goal(self, seed: int, options: WebShopOptions) -> int:
        """The index (in the full shuffled goal list) of the goal ``(seed, options)`` name."""
        split = SPLITS[options.split]
        goals = self.shop.split(options.split)
        if not goals:
            raise EnvironmentInputError(f"split {options.split!r} has no goals in this catalogue")
        if options.goal_index is not None:
            if options.goal_index >= len(goals):
                raise EnvironmentInputError(
                    f"goal_index {options.goal_index} is out of range: split "
                    f"{options.split!r} has {len(goals)} goals"
                )
            return (split.start or 0) + options.goal_index
        cumulative = _cumulative_weights(self.shop, options.split)
        draw = random.Random(seed).random() * cumulative[-1]
        position = min(bisect.bisect_right(cumulative, draw), len(goals) - 1)
        return (split.start or 0) + position

    def reset(self, seed: int, options: WebShopOptions) -> ResetResult:
        """The search page of the goal ``(seed, options)`` name."""
        index = self.pick_goal(seed, options)
        state = EpisodeState(
            catalogue=self.shop.fingerprint,
            goal_index=index,
            goal=self.shop.goals[index],
            mode=options.observation_mode,
            step_limit=options.step_limit,
        )
        return ResetResult(self._observe(state), state.to_json(), self._info(state))

    def step(self, state: JSONValue, action: str) -> StepResult:
        """Apply one action; raises ``EpisodeFinished`` after Buy Now or the step limit."""
        current = EpisodeState.from_json(state, self.shop)
        if current.page == "done" or current.steps >= current.step_limit:
            raise EpisodeFinished("this episode has ended: reset to start another")
        move = self.engine.step(current, action)
        after = move.state
        if move.purchased is not None:
            score = self._score(after, move.purchased)
            after = EpisodeState(**{**after.__dict__, "reward": score.reward})
        elif move.valid:
            score = Score.ok(0.0, detail=move.detail)
        else:
            score = Score.invalid(move.detail)
        terminated = after.page == "done"
        truncated = not terminated and after.steps >= after.step_limit
        info = self._info(after)
        if move.purchased is not None:
            info["purchase"] = {
                "asin": move.purchased.asin,
                "options": dict(after.options),
                "price": move.purchased.price,
            }
        return StepResult(self._observe(after), score, terminated, truncated, after.to_json(), info)

    def _score(self, state: EpisodeState, product: Any) -> Score:
        try:
            return score_purchase(product.record(), state.goal, product.price, state.options)
        except MalformedPurchase as exc:
            # Our own catalogue and goals are well formed; a failure here is ours, not the agent's.
            return Score.error(f"could not score the purchase: {exc}")

    def _observe(self, state: EpisodeState) -> str:
        return render(self.engine.page(state), state.mode)

    def _info(self, state: EpisodeState) -> dict[str, JSONValue]:
        return {
            "page": state.page,
            "instruction": state.goal["instruction_text"],
            "valid_actions": self.engine.valid_actions(state),
            "available_actions": self.engine.available_actions(state),
            "steps": state.steps,
        }

    def expert_action(self, state: JSONValue) -> str:  # noqa: PLR0911 - one answer per page
        """A perfect shopper: search the goal product's title (its full text if the title does
        not surface it), page to it, open it, choose the goal options, buy."""
        current = EpisodeState.from_json(state, self.shop)
        goal = current.goal
        target = str(goal["asin"])
        title_query = str(goal["name"]).lower()
        if current.page == "search":
            return f"search[{title_query}]"
        if current.page == "results":
            found = self.engine.results(current)
            if target not in found:
                product = self.shop.product(target)
                return f"search[{product.search_text() if product else title_query}]"
            wanted_page = found.index(target) // 10 + 1
            page_num = current.page_num or 1
            if wanted_page == page_num:
                return f"click[{target.lower()}]"
            return "click[next >]" if wanted_page > page_num else "click[< prev]"
        if current.page in SUB_PAGES or current.asin != target:
            return "click[< prev]"
        for value in _goal_values(goal):
            if value not in current.options.values():
                return f"click[{value}]"
        return "click[buy now]"


def _goal_values(goal: Goal) -> list[str]:
    options = goal["goal_options"]
    return [str(v) for v in (options.values() if isinstance(options, dict) else options)]


@lru_cache(maxsize=16)
def _engine(shop: Shop) -> Engine:
    return Engine(shop)


@lru_cache(maxsize=16)
def _cumulative_weights(shop: Shop, split: str) -> list[float]:
    return list(itertools.accumulate(float(g["weight"]) for g in shop.split(split)))
