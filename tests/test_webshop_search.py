"""The webshop family's search space (issue 38): the expert's episodes deserve and earn the
win, the judge's reward (the original formula on thefuzz and spaCy's whole pipeline) equals the
verifier's, its reading of an episode is generous, and a search finds a planted loophole."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from environments.search import Mutant, Probe
from environments.webshop import search as webshop_search
from environments.webshop.engine import Engine, EpisodeState
from envserver.config import Settings
from envserver.registry import Registry, discover
from tests.search_support import last_reward, paid_classes
from verifiers.webshop.reward import get_reward


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with discover().opened(Settings(data_dir=tmp_path_factory.mktemp("data"))) as opened:
        yield opened


def _play(probe: Probe) -> float:
    env = webshop_search._env()
    state = env.reset(probe.seed or 0, webshop_search._options(probe)).state
    return last_reward(env, state, probe.actions or ())


def test_the_experts_episodes_deserve_the_win_and_earn_it() -> None:
    rng = random.Random(4)
    drawn = [m for _ in range(3) for m in webshop_search.seeds(rng)]
    assert {m.probe.options.get("split", "all") for m in drawn} >= {"all", "test"}
    for mutant in drawn:
        assert webshop_search.deserves(mutant.probe) == 1.0
        assert _play(mutant.probe) == 1.0


def test_an_episode_that_never_buys_deserves_nothing() -> None:
    expert = next(webshop_search.seeds(random.Random(5))).probe
    assert expert.actions is not None and expert.actions[-1] == "click[buy now]"
    assert webshop_search.deserves(expert.played(expert.actions[:-1], "truncate")) == 0.0
    # Buy Now past the step limit buys nothing either.
    limited = Probe(
        env="webshop",
        seed=expert.seed,
        options={**expert.options, "step_limit": len(expert.actions) - 1},
        actions=expert.actions,
    )
    assert webshop_search.deserves(limited) == 0.0
    assert webshop_search.deserves(expert.played(["search[x]", "click[buy now]"], "decoy")) == 0.0


def test_the_judge_reads_a_product_click_as_maybe_taken() -> None:
    # On an item page another product's ASIN is not clickable: the store keeps the first
    # product. The judge does not follow pages, so it keeps both possibilities; a product the
    # last search did not find is not clickable anywhere.
    shop = webshop_search._env().shop
    found = shop.search(("writing", "desk"))
    products = [p for p in map(shop.product, found) if p is not None]
    first = next(p for p in products if p.options)
    second = next(p for p in products if p is not first)
    value = next(v for vs in first.options.values() for v in vs)
    actions = ["search[writing desk]", f"click[{first.asin.lower()}]",
               f"click[{second.asin.lower()}]", f"click[{value}]", "click[buy now]"]  # fmt: skip
    bought = webshop_search.purchases(actions, 100)
    assert (first.asin, frozenset({value})) in bought
    assert any(asin == second.asin for asin, _ in bought)
    put_down = [*actions[:2], "search[y]", "click[buy now]"]
    assert webshop_search.purchases(put_down, 9) == set()
    unseen = next(a for a in (shop.catalogue.asin_at(i) for i in range(100)) if a not in found)
    assert webshop_search.purchases(["search[writing desk]", f"click[{unseen}]",
                                     "click[buy now]"], 9) == set()  # fmt: skip


def test_the_judges_reward_is_the_verifiers() -> None:
    shop = webshop_search._env().shop
    rng = random.Random(6)
    compared = 0
    for _ in range(20):
        goal = shop.goals[rng.randrange(len(shop.goals))]
        for asin in shop.search(str(goal["name"]).lower().split(" "))[:3]:
            product = shop.product(asin)
            assert product is not None
            chosen = [rng.choice(vs) for vs in product.options.values() if vs]
            mine = webshop_search.original_reward(product.record(), goal, product.price, chosen)
            options = {str(i): v for i, v in enumerate(chosen)}
            theirs = get_reward(product.record(), goal, product.price, options).total
            assert mine == pytest.approx(theirs, abs=1e-12), (asin, goal["name"])
            compared += 1
    assert compared == 60


def test_decoys_buy_what_is_not_the_goal() -> None:
    rng = random.Random(7)
    expert = Mutant(next(webshop_search.seeds(rng)).probe)
    decoy = next(m for m in webshop_search.SEARCH.mutators if m.name == "decoy")
    made = [m for _ in range(5) for m in decoy(expert, rng)]
    assert len({m.probe.actions for m in made}) >= 3
    for mutant in made:
        deserved = webshop_search.deserves(mutant.probe)
        assert deserved is not None and _play(mutant.probe) <= deserved + 1e-9


def _paid(registry: Registry, tries: int) -> set[str]:
    return paid_classes(
        "webshop", webshop_search.SEARCH, registry, tries=tries, seed=3, budget_s=300
    )


def test_a_search_finds_a_planted_purchase_from_the_results_page_and_nothing_on_main(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _paid(registry, 200) == set()
    # Planted: Buy Now on a results page buys the goal, as if its options were chosen.
    clickables, click = Engine.clickables, Engine._click

    def with_buy_now(self: Engine, state: EpisodeState) -> dict[str, str | None]:
        found = clickables(self, state)
        return {**found, "buy now": None} if state.page == "results" else found

    def buy_the_goal(self: Engine, state: EpisodeState, key: str, option: str | None) -> Any:
        if key == "buy now" and state.asin is None:
            wanted = state.goal["goal_options"]
            values = wanted.values() if isinstance(wanted, dict) else wanted
            chosen = {str(i): str(v) for i, v in enumerate(values)}
            state = replace(state, asin=str(state.goal["asin"]), options=chosen)
        return click(self, state, key, option)

    monkeypatch.setattr(Engine, "clickables", with_buy_now)
    monkeypatch.setattr(Engine, "_click", buy_the_goal)
    assert "decoy" in _paid(registry, 200)
