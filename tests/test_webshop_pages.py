"""Golden observations: every page type in the three modes, and the engine's pages."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from environments.webshop import pages
from environments.webshop.engine import EpisodeState
from environments.webshop.family import WebShopOptions
from environments.webshop.pages import OBSERVATION_MODES, Page
from tests.webshop_support import small_env

GOLDEN = Path(__file__).parent / "golden" / "webshop_pages.json"
INSTRUCTION = "i want a red shirt, and price lower than 30.00 dollars"


def sample_pages() -> dict[str, Page]:
    return {
        "search": pages.search_page(INSTRUCTION),
        "results": pages.results_page(
            INSTRUCTION,
            2,
            12,
            [("B0AAAAAAAA", "Red Shirt", "$12.5"), ("B0BBBBBBBB", "Blue Shirt", "$10.0 to $15.0")],
            ["B0BBBBBBBB"],
        ),
        "item": pages.item_page(
            INSTRUCTION,
            "Red Shirt",
            "$12.5",
            {"color": ["red", "navy blue"], "size": ["small", "large"]},
            {"color": "red"},
        ),
        "description": pages.sub_page("description", INSTRUCTION, ["Soft cotton."]),
        "features": pages.sub_page("features", INSTRUCTION, ["Machine wash", "Slim fit"]),
        "reviews": pages.sub_page("reviews", INSTRUCTION, []),
        "done": pages.done_page(0.75),
    }


def rendered() -> dict[str, dict[str, str]]:
    return {
        name: {mode: pages.render(page, mode) for mode in OBSERVATION_MODES}
        for name, page in sample_pages().items()
    }


def test_golden_observations_of_every_page_in_every_mode() -> None:
    if os.environ.get("WEBSHOP_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(rendered(), indent=1, ensure_ascii=False) + "\n")
    assert rendered() == json.loads(GOLDEN.read_text())


def test_text_mode_matches_the_originals_simple_form() -> None:
    page = sample_pages()
    assert pages.render_text(page["search"]) == (
        f"WebShop [SEP] Instruction: [SEP] {INSTRUCTION} [SEP] Search"
    )
    assert pages.render_text(page["item"]) == (
        f"Instruction: [SEP] {INSTRUCTION} [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] "
        "red [SEP] navy blue [SEP] size [SEP] small [SEP] large [SEP] Red Shirt [SEP] Price: "
        "$12.5 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now"
    )
    results = pages.render_text(page["results"])
    assert (
        "Back to Search [SEP] Page 2 (Total results: 12) [SEP] < Prev [SEP] Next > [SEP] B0A"
        in (results)
    )


def test_text_rich_marks_buttons_options_and_visited_products() -> None:
    page = sample_pages()
    item = pages.render_text_rich(page["item"])
    assert item.startswith("You have clicked red.\n")
    assert "  [clicked button] red [clicked button_]\n  [button] navy blue [button_]\n" in item
    assert "[button] Buy Now [button_]\n" in item
    results = pages.render_text_rich(page["results"])
    assert "\n\n[button] B0AAAAAAAA [button_]\n" in results
    assert "\n\n[clicked button] B0BBBBBBBB [clicked button_]\n" in results


@pytest.mark.parametrize("mode", OBSERVATION_MODES)
def test_the_engine_shows_every_page_type(mode: str) -> None:
    env = small_env()
    first = env.reset(5, WebShopOptions(observation_mode=mode))  # type: ignore[arg-type]
    seen = {first.info["page"]: first.observation}
    state = first.state
    path = []
    while True:
        action = env.expert_action(state)
        if action == "click[buy now]":
            path = ["click[description]", "click[< prev]", "click[features]", "click[< prev]",
                    "click[reviews]", "click[< prev]", "click[buy now]"]  # fmt: skip
            break
        state = env.step(state, action).state
        seen[env.engine.page(env_state(state)).name] = ""
    for action in path:
        result = env.step(state, action)
        state = result.state
        seen[str(result.info["page"])] = str(result.observation)
        assert result.score.status == "ok", (action, result.score)
    assert set(seen) == {"search", "results", "item", "description", "features", "reviews", "done"}
    if mode == "text":
        assert seen["search"].startswith("WebShop [SEP] Instruction: [SEP] ")
        assert seen["reviews"].endswith("Back to Search [SEP] < Prev")
        assert seen["done"].startswith("Thank you for shopping with us! [SEP] Your score")
    elif mode == "text_rich":
        assert seen["features"].count("[button]") == 2
    else:
        assert seen["description"].startswith("<!DOCTYPE html>")
        assert 'data-page="done"' in seen["done"]


def env_state(state: object) -> EpisodeState:
    return EpisodeState.from_json(state, small_env().shop)
