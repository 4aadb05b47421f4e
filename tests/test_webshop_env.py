"""The WebShop engine: transitions, invalid actions, limits, states, goals, search, data."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from environments.base import EnvironmentInputError, EpisodeFinished
from environments.webshop.bm25 import Analyzer, SearchIndex
from environments.webshop.catalogue import SyntheticCatalogue, parse_price, to_product
from environments.webshop.engine import parse_action
from environments.webshop.family import WebShopEnv, WebShopOptions
from environments.webshop.goals import PRICE_RANGE, split_goals
from environments.webshop.loader import FileCatalogue
from environments.webshop.shop import Shop, ShopConfig
from tests.webshop_support import small_env, small_shop

OPTIONS = WebShopOptions()


def run(env: WebShopEnv, state: Any, *actions: str) -> Any:
    for action in actions:
        result = env.step(state, action)
        assert result.score.status == "ok", (action, result.score)
        state = result.state
    return state


def search_and_open(env: WebShopEnv, seed: int = 1) -> Any:
    state = env.reset(seed, OPTIONS).state
    state = run(env, state, env.expert_action(state))
    return run(env, state, env.expert_action(state))


def test_parse_action_is_the_originals_regex() -> None:
    assert parse_action("search[Red Shoes]") == ("search", "red shoes")
    assert parse_action("click[< Prev]") == ("click", "< prev")
    assert parse_action("click[]") == ("click[]", None)
    assert parse_action("lorem ipsum") == ("lorem ipsum", None)
    assert parse_action("search[a] [b]") == ("search[a] ", "b")


def test_expert_scores_one_on_test_split_goals() -> None:
    env = small_env()
    for index in range(0, 500, 25):
        state = env.reset(0, WebShopOptions(split="test", goal_index=index)).state
        for _ in range(20):
            result = env.step(state, env.expert_action(state))
            state = result.state
            if result.terminated:
                break
        assert result.terminated and result.score.reward == 1.0, (index, result.score)
        assert result.info["purchase"]["asin"] == env.shop.goals[state["goal_index"]]["asin"]


@pytest.mark.parametrize(
    "action",
    ["", "lorem ipsum dolor", "search[]", "click[search]", "click[nothing here]", "click[buy now]",
     "click[next >]", "click[< prev]", "Search[shoes]", "click [back to search]"],
)  # fmt: skip
def test_invalid_actions_change_nothing_but_the_step_count(action: str) -> None:
    env = small_env()
    first = env.reset(3, OPTIONS)
    result = env.step(first.state, action)
    assert (result.score.status, result.score.reward, result.terminated) == ("invalid", 0.0, False)
    assert result.observation == first.observation
    assert {**result.state, "steps": 0} == first.state


def test_clicks_on_the_wrong_page_are_invalid() -> None:
    env = small_env()
    item = search_and_open(env)
    assert item["page"] == "item"
    for action in ("click[next >]", f"click[{item['visited'][0].lower()}x]", "click[search]"):
        result = env.step(item, action)
        assert result.score.status == "invalid"
        assert {**result.state, "steps": item["steps"]} == item


def test_paging_back_and_prev() -> None:
    env = small_env()
    state = env.reset(2, OPTIONS).state
    state = run(env, state, "search[shoes]")
    assert "< prev" not in env.step(state, "click[back to search]").info["available_actions"]
    page2 = run(env, state, "click[next >]")
    assert page2["page_num"] == 2
    assert "click[< prev]" in env.step(page2, "click[next >]").info["valid_actions"]
    beyond = run(env, page2, "click[next >]", "click[next >]", "click[next >]", "click[next >]")
    # "Next >" stays past the last page, which is empty.
    assert env.step(beyond, "click[next >]").info["valid_actions"] == [
        "search[<query>]", "click[back to search]", "click[< prev]", "click[next >]"
    ]  # fmt: skip
    back = run(env, page2, "click[< prev]")
    assert back["page_num"] == 1
    product = env.engine.results(env_state(back))[0].lower()
    item = run(env, back, f"click[{product}]")
    assert item["visited"] == [product.upper()]
    sub = run(env, item, "click[features]", "click[< prev]")
    assert sub["page"] == "item"
    results = run(env, item, "click[< prev]")
    assert (results["page"], results["page_num"], results["asin"]) == ("results", 1, None)
    home = run(env, item, "click[back to search]")
    assert (home["page"], home["keywords"], home["visited"]) == ("search", None, [])


def test_option_choice_and_search_reset_options() -> None:
    env = small_env()
    item = search_and_open(env, 4)
    product = env.shop.product(item["asin"])
    assert product is not None and product.options
    name, values = next(iter(product.options.items()))
    chosen = run(env, item, f"click[{values[-1]}]")
    assert chosen["options"] == {name: values[-1]}
    again = run(env, chosen, f"click[{values[0]}]")
    assert again["options"] == {name: values[0]}
    assert run(env, again, "search[anything]")["options"] == {}


def test_buy_ends_the_episode_and_a_finished_episode_refuses_steps() -> None:
    env = small_env()
    item = search_and_open(env, 6)
    done = env.step(item, "click[buy now]")
    assert done.terminated and done.score.status == "ok"
    assert 0.0 <= (done.score.reward or 0.0) <= 1.0
    assert {"r_type", "r_att", "r_price"} <= set(done.score.components)
    assert "title_score" in done.score.metrics
    assert done.info["valid_actions"] == []
    with pytest.raises(EpisodeFinished):
        env.step(done.state, "search[more]")


def test_step_limit_truncates() -> None:
    env = small_env()
    state = env.reset(0, WebShopOptions(step_limit=3)).state
    for step in range(3):
        result = env.step(state, "search[lamp]")
        state = result.state
        assert result.truncated == (step == 2)
    with pytest.raises(EpisodeFinished):
        env.step(state, "search[lamp]")


@pytest.mark.parametrize(
    "change",
    [
        {"catalogue": "synthetic-g1-s9-n5"},
        {"page": "nowhere"},
        {"page": "item"},
        {"asin": "B0ZZZZZZZZ", "page": "item", "page_num": 1},
        {"steps": "many"},
        {"options": {"color": 3}},
        {"goal_index": 10**9},
        {"goal_index": -1},
        {"goal_index": "7"},
        {"keywords": None, "page": "results", "page_num": 1},
        {"mode": "pdf"},
    ],
)
def test_malformed_or_stale_states_are_input_errors(change: dict[str, Any]) -> None:
    env = small_env()
    state = env.reset(0, OPTIONS).state
    with pytest.raises(EnvironmentInputError):
        env.step({**state, **change}, "search[shoes]")
    with pytest.raises(EnvironmentInputError):
        env.step("not a state", "search[shoes]")


def test_huge_and_odd_queries_are_searched_safely() -> None:
    env = small_env()
    state = env.reset(0, OPTIONS).state
    for query in ("x" * 10_000, "shoe " * 2000, "!!! ???", "\u00e7a\u00ef \u2603", "the and of"):
        result = env.step(state, f"search[{query}]")
        assert result.score.status == "ok"
        assert result.info["page"] == "results"


def test_goal_selection_and_splits() -> None:
    env = small_env()
    shop = env.shop
    assert len(split_goals(shop.goals, "test")) == 500
    assert len(split_goals(shop.goals, "eval")) == 1000
    assert split_goals(shop.goals, "train")[0] is shop.goals[1500]
    picked = env.reset(0, WebShopOptions(split="eval", goal_index=7)).state
    assert picked["goal_index"] == 507
    with pytest.raises(EnvironmentInputError):
        env.reset(0, WebShopOptions(split="test", goal_index=500))
    drawn = {env.reset(s, OPTIONS).state["goal_index"] for s in range(50)}
    assert len(drawn) > 40
    for g in shop.goals[:200]:
        assert g["instruction_text"].startswith(g["instruction_text"].split(" with ")[0])
        assert g["price_upper"] in PRICE_RANGE or g["price_upper"] == 1_000_000.0
        assert g["weight"] > 0


def test_synthetic_goal_text_is_built_as_the_original() -> None:
    shop = small_shop()
    goal = next(g for g in shop.goals if len(g["goal_options"]) == 2)
    product = shop.product(goal["asin"])
    assert product is not None and product.instruction is not None
    (k1, v1), (k2, v2) = sorted(goal["goal_options"].items())
    price = f", and price lower than {goal['price_upper']:.2f} dollars"
    if goal["price_upper"] == 1_000_000.0:
        price = ""
    expected = f"{product.instruction} with {k1}: {v1}, and {k2}: {v2}{price}"
    assert goal["instruction_text"] == expected


def test_reset_is_deterministic_and_json() -> None:
    env = small_env()
    for mode in ("text", "text_rich", "html"):
        options = WebShopOptions(observation_mode=mode)  # type: ignore[arg-type]
        a, b = env.reset(99, options), env.reset(99, options)
        assert json.dumps(asdict(a), sort_keys=True) == json.dumps(asdict(b), sort_keys=True)


def test_catalogue_is_lazy_stable_and_in_the_raw_schema() -> None:
    catalogue = SyntheticCatalogue(1_180_000)
    last = catalogue.product_at(1_179_999)
    assert catalogue.product(last.asin) == last
    assert catalogue.index_of(last.asin) == 1_179_999
    assert len({catalogue.asin_at(i) for i in range(0, 1_180_000, 997)}) == 1184
    raw, ins = catalogue.raw_item(3)
    schema = {"asin", "name", "full_description", "small_description", "pricing", "images",
              "product_category", "query", "category", "customization_options"}  # fmt: skip
    assert schema <= set(raw)
    assert set(ins) == {"attributes", "instruction", "instruction_attributes"}
    assert raw["category"] in ("beauty", "food", "fashion", "furniture", "electronics")
    assert to_product(raw, ins) == catalogue.product_at(3)
    assert to_product({**raw, "asin": "nan"}, ins) is None


def test_parse_price_as_load_products() -> None:
    assert parse_price("$12.99") == ((12.99,), "$12.99")
    assert parse_price("$10.99 - $15.99") == ((10.99, 15.99), "$10.99 to $15.99")
    assert parse_price(None) == ((100.0,), "$100.0")
    assert parse_price("$1,299.00") == ((1299.0,), "$1299.0")


def test_the_loader_reads_the_original_files(tmp_path: Path) -> None:
    catalogue = SyntheticCatalogue(60, seed=5)
    items = [catalogue.raw_item(i) for i in range(60)]
    (tmp_path / "items_shuffle_1000.json").write_text(json.dumps([r for r, _ in items]))
    (tmp_path / "items_ins_v2_1000.json").write_text(json.dumps({r["asin"]: i for r, i in items}))
    human = {items[0][0]["asin"]: [{"instruction": "i want this thing.",
             "instruction_attributes": ["x"], "instruction_options": ["y"]}]}  # fmt: skip
    (tmp_path / "items_human_ins.json").write_text(json.dumps(human))
    files = FileCatalogue(tmp_path)
    assert list(files.products()) == list(catalogue.products())
    shop = Shop(ShopConfig(data_dir=tmp_path, cache_dir=tmp_path / "cache"))
    assert [g["instruction_text"].split(",")[0] for g in shop.goals] == ["i want this thing"]
    assert shop.goals[0]["goal_options"] == ["y"]
    synthetic = Shop(ShopConfig(data_dir=tmp_path, human_goals=False, cache_dir=tmp_path / "c"))
    assert len(synthetic.goals) > 1
    assert shop.search(["the", items[1][0]["name"].lower()])


def test_the_index_is_persisted_and_reloaded(tmp_path: Path) -> None:
    catalogue = SyntheticCatalogue(300, seed=1)
    built = SearchIndex.open(catalogue, tmp_path)
    files = sorted(p.name for p in built.directory.iterdir())
    assert "catalogue.json" in files
    reopened = SearchIndex.open(catalogue, tmp_path)
    title = catalogue.product_at(17).title.lower().split(" ")
    assert reopened.search(title) == built.search(title)
    assert 17 in built.search(title)[:5]
    assert built.search(["zzzzqqq"]) == []


def test_the_analyzer_follows_lucene_english() -> None:
    analyze = Analyzer()
    assert analyze("The Women's Running Shoes, and a 4K cable") == [
        "women", "run", "shoe", "4k", "cabl"
    ]  # fmt: skip


def env_state(state: Any) -> Any:
    from environments.webshop.engine import EpisodeState

    return EpisodeState.from_json(state, small_env().shop)
