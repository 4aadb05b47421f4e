"""The store's state machine (``SimServer.receive``), over a small JSON episode state.

The state holds what the original keeps in a session (goal, page, keywords, page number, ASIN,
chosen options, visited ASINs) plus the step count; search results are recomputed from the
keywords (search is deterministic), so the state stays small enough for a state token.

The goal travels as its index in the shop's goal list, never as its text: the shop regenerates
it (``Shop.goals``), and the sealed token's length then depends only on what the client chose
or was shown (options, keywords, clicks), not on the goal's hidden name, attributes or options
(a goal in the state made tokens of equal-length instructions 1,077 to 1,157 bytes long).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from environments.base import EnvironmentInputError
from environments.webshop import pages
from environments.webshop.bm25 import RESULTS_PER_PAGE
from environments.webshop.catalogue import Product
from environments.webshop.goals import Goal
from environments.webshop.pages import OBSERVATION_MODES, ObservationMode, Page
from environments.webshop.shop import Shop

PAGE_NAMES = ("search", "results", "item", "description", "features", "reviews", "done")
SUB_PAGES = ("description", "features", "reviews")
_ACTION = re.compile(r"(.+)\[(.+)\]")


def parse_action(action: str) -> tuple[str, str | None]:
    """``parse_action``: ``re.match(r'(.+)\\[(.+)\\]')`` -> (name, lower-cased argument); no
    match -> (action, None)."""
    match = _ACTION.match(action)
    if match is None:
        return action, None
    return match.group(1), match.group(2).lower()


@dataclass(frozen=True)
class EpisodeState:
    """One episode's state; ``to_json``/``from_json`` carry it through state tokens."""

    catalogue: str
    goal_index: int
    goal: Goal
    mode: ObservationMode
    step_limit: int
    page: str = "search"
    keywords: tuple[str, ...] | None = None
    page_num: int | None = None
    asin: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    visited: tuple[str, ...] = ()
    steps: int = 0
    reward: float | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON object (lists for tuples)."""
        return {
            "catalogue": self.catalogue,
            "goal_index": self.goal_index,
            "mode": self.mode,
            "step_limit": self.step_limit,
            "page": self.page,
            "keywords": None if self.keywords is None else list(self.keywords),
            "page_num": self.page_num,
            "asin": self.asin,
            "options": dict(self.options),
            "visited": list(self.visited),
            "steps": self.steps,
            "reward": self.reward,
        }

    @classmethod
    def from_json(cls, raw: Any, shop: Shop) -> EpisodeState:
        """Validate a state read from a token; raises ``EnvironmentInputError`` (HTTP 400) when it
        is malformed or belongs to another shop (catalogue and goal list)."""
        try:
            catalogue = _typed(raw["catalogue"], str)
            goal_index = _typed(raw["goal_index"], int)
        except (KeyError, TypeError) as exc:
            raise EnvironmentInputError(f"malformed webshop state: {exc!r}") from exc
        if catalogue != shop.fingerprint:
            raise EnvironmentInputError(
                f"this state belongs to shop {catalogue!r}, the server serves "
                f"{shop.fingerprint!r}: start a new episode"
            )
        if not 0 <= goal_index < len(shop.goals):
            raise EnvironmentInputError(f"inconsistent webshop state: no goal {goal_index}")
        try:
            state = cls(
                catalogue=catalogue,
                goal_index=goal_index,
                goal=shop.goals[goal_index],
                mode=raw["mode"],
                step_limit=_typed(raw["step_limit"], int),
                page=_typed(raw["page"], str),
                keywords=None if raw["keywords"] is None else tuple(_strings(raw["keywords"])),
                page_num=None if raw["page_num"] is None else _typed(raw["page_num"], int),
                asin=None if raw["asin"] is None else _typed(raw["asin"], str),
                options=dict(
                    zip(_strings(raw["options"]), _strings(raw["options"].values()), strict=True)
                ),
                visited=tuple(_strings(raw["visited"])),
                steps=_typed(raw["steps"], int),
                reward=None if raw["reward"] is None else float(raw["reward"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise EnvironmentInputError(f"malformed webshop state: {exc!r}") from exc
        problems = [
            state.mode not in OBSERVATION_MODES and "mode",
            state.page not in PAGE_NAMES and "page",
            state.page == "results"
            and (state.keywords is None or state.page_num is None)
            and "results page without a search",
            state.page in ("item", *SUB_PAGES, "done")
            and (state.asin is None or shop.product(state.asin) is None)
            and "item page without a product",
            state.page != "search" and state.page_num is None and "page number",
        ]
        if any(problems):
            raise EnvironmentInputError(
                f"inconsistent webshop state: {', '.join(p for p in problems if p)}"
            )
        return state


def _typed(value: Any, kind: type) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def _strings(values: Any) -> list[str]:
    items = list(values)
    for item in items:
        _typed(item, str)
    return items


@dataclass(frozen=True)
class Transition:
    """The next state; ``valid`` is False for actions the page does not accept (state
    unchanged but for the step count); ``purchased`` is set when Buy Now was clicked."""

    state: EpisodeState
    valid: bool
    detail: str
    purchased: Product | None = None


class Engine:
    """Pages, clickables and transitions of one shop."""

    def __init__(self, shop: Shop) -> None:
        self.shop = shop

    def _product(self, asin: str | None) -> Product:
        product = None if asin is None else self.shop.product(asin)
        if product is None:
            raise EnvironmentInputError(f"unknown product {asin!r}")
        return product

    def results(self, state: EpisodeState) -> tuple[str, ...]:
        """The top-50 ASINs of the state's search."""
        return self.shop.search(state.keywords or ())

    def page(self, state: EpisodeState) -> Page:
        """The page the state shows."""
        instruction = str(state.goal["instruction_text"])
        if state.page == "search":
            return pages.search_page(instruction)
        if state.page == "results":
            found = self.results(state)
            start = ((state.page_num or 1) - 1) * RESULTS_PER_PAGE
            shown = []
            for asin in found[max(start, 0) : start + RESULTS_PER_PAGE] if start >= 0 else ():
                product = self._product(asin)
                shown.append((asin, product.title, product.price_tag))
            return pages.results_page(
                instruction, state.page_num or 1, len(found), shown, state.visited
            )
        if state.page == "done":
            return pages.done_page(state.reward or 0.0)
        product = self._product(state.asin)
        if state.page == "item":
            return pages.item_page(
                instruction, product.title, product.price_tag, product.options, state.options
            )
        contents: tuple[str, ...] = ()
        if state.page == "description":
            contents = (product.description,)
        elif state.page == "features":
            contents = product.bullet_points
        return pages.sub_page(state.page, instruction, contents)

    def clickables(self, state: EpisodeState) -> dict[str, str | None]:
        """Clickable name -> option name (None for buttons and product links), in the
        original's order (buttons, product links, then option values; a repeated option value
        belongs to its last group, as the original's dict keeps it)."""
        nodes = self.page(state).nodes
        found: dict[str, str | None] = {}
        for node in nodes:
            if node.key is not None and node.kind in ("button", "search_box", "link"):
                found[node.key] = None
        for node in nodes:
            if node.kind == "option" and node.key is not None:
                found[node.key] = node.group
        return found

    def step(self, state: EpisodeState, action: str) -> Transition:
        """Apply ``action`` (``search[...]`` or ``click[...]``)."""
        counted = replace(state, steps=state.steps + 1)
        name, arg = parse_action(action)
        if name == "search" and arg:
            return Transition(
                replace(
                    counted,
                    page="results",
                    keywords=tuple(arg.split(" ")),
                    page_num=1,
                    asin=None,
                    options={},
                ),
                True,
                "searched",
            )
        if name != "click" or arg is None:
            return Transition(counted, False, "not an action: use search[...] or click[...]")
        clickables = self.clickables(state)
        if arg not in clickables or arg == "search":
            return Transition(counted, False, f"nothing clickable named {arg!r} on this page")
        return self._click(counted, arg, clickables[arg])

    def _click(  # noqa: PLR0911 - one branch per button, as the original's receive()
        self, state: EpisodeState, key: str, option: str | None
    ) -> Transition:
        if key == "buy now":
            return Transition(
                replace(state, page="done"), True, "bought", self._product(state.asin)
            )
        if key == "back to search":
            return Transition(
                replace(
                    state, page="search", keywords=None, page_num=None, asin=None,
                    options={}, visited=(),
                ),
                True,
                "back to search",
            )  # fmt: skip
        page_num = state.page_num or 1
        if key == "next >" and state.page == "results":
            return Transition(replace(state, page_num=page_num + 1), True, "next page")
        if key == "< prev":
            if state.page == "results":
                return Transition(replace(state, page_num=page_num - 1), True, "previous page")
            if state.page in SUB_PAGES:
                return Transition(replace(state, page="item"), True, "back to the item")
            return Transition(
                replace(state, page="results", asin=None, options={}), True, "back to results"
            )
        if key in SUB_PAGES:
            return Transition(replace(state, page=key), True, f"opened {key}")
        if option is not None:
            chosen = {**state.options, option: key}
            return Transition(replace(state, options=chosen), True, f"chose {option}: {key}")
        asin = key.upper()
        visited = state.visited if asin in state.visited else (*state.visited, asin)
        return Transition(
            replace(state, page="item", asin=asin, options={}, visited=visited), True, "opened item"
        )

    def valid_actions(self, state: EpisodeState) -> list[str]:
        """Every action the page accepts: ``search[<query>]`` and ``click[x]`` for each
        clickable (the original's text env accepts a search on any page)."""
        if state.page == "done":
            return []
        clicks = [f"click[{k}]" for k in self.clickables(state) if k != "search"]
        return ["search[<query>]", *clicks]

    def available_actions(self, state: EpisodeState) -> dict[str, Any]:
        """``{has_search_bar, clickables}`` as the original's ``get_available_actions``."""
        if state.page == "done":
            return {"has_search_bar": False, "clickables": []}
        return {
            "has_search_bar": state.page == "search",
            "clickables": list(self.clickables(state)),
        }
