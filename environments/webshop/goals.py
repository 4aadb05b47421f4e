"""Goals as the original builds them (``engine/goal.py``), its fixed shuffle and index splits."""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from environments.webshop.catalogue import Product

PRICE_RANGE = [10.0 * i for i in range(1, 100)]
SHUFFLE_SEED = 233
Split = Literal["all", "train", "eval", "test"]
SPLITS: dict[str, slice] = {
    "test": slice(0, 500),
    "eval": slice(500, 1500),
    "train": slice(1500, None),
    "all": slice(0, None),
}
"""The baselines' index splits of the shuffled goal list."""

Goal = dict[str, Any]
"""asin, category, query, name, product_category, instruction_text, attributes, goal_options
(dict for synthetic goals, list for human ones), price_upper, weight: JSON, as in the original."""


def price_clause(product: Product) -> tuple[float, str]:
    """``(price_upper, text)``: grid values above the price, first four; two sampled, the larger
    kept; fewer than two -> 1e6 and no clause. The sample is seeded by the ASIN (the original
    uses the unseeded global RNG)."""
    above = [p for p in PRICE_RANGE if p > product.price][:4]
    if len(above) < 2:
        return 1_000_000.0, ""
    _, upper = sorted(random.Random(f"goal-price/{product.asin}").sample(above, 2))
    return upper, f", and price lower than {upper:.2f} dollars"


def synthetic_goals(products: Iterable[Product]) -> list[Goal]:
    """One goal per option combination of every product with an instruction; weight = mean over
    its attributes of 1 / (how many goals name that attribute)."""
    goals: list[Goal] = []
    counts: dict[str, int] = defaultdict(int)
    for product in products:
        if product.instruction is None or not product.instruction_attributes:
            continue
        upper, price_text = price_clause(product)
        names = sorted(product.options)
        for combination in itertools.product(*(product.options[n] for n in names)):
            goal_options = dict(zip(names, combination, strict=True))
            option_text = ", and ".join(f"{k}: {v}" for k, v in goal_options.items())
            option_text = f" with {option_text}" if option_text else ""
            goals.append(
                {
                    **_about(product),
                    "instruction_text": f"{product.instruction}{option_text}{price_text}",
                    "attributes": list(product.instruction_attributes),
                    "price_upper": upper,
                    "goal_options": goal_options,
                }
            )
            for attribute in product.instruction_attributes:
                counts[attribute] += 1
    for goal in goals:
        goal["weight"] = sum(1.0 / counts[a] for a in goal["attributes"]) / len(goal["attributes"])
    return goals


def _about(product: Product) -> dict[str, Any]:
    """The product's fields every goal carries, synthetic or human."""
    return {
        "asin": product.asin,
        "category": product.category,
        "query": product.query,
        "name": product.title,
        "product_category": product.product_category,
    }


def human_goals(
    products: Iterable[Product], instructions: dict[str, list[dict[str, Any]]]
) -> list[Goal]:
    """One goal per human instruction with non-empty attributes (``get_human_goals``)."""
    goals: list[Goal] = []
    for product in products:
        for entry in instructions.get(product.asin, ()):
            attributes = list(entry.get("instruction_attributes") or ())
            if not attributes:
                continue
            upper, price_text = price_clause(product)
            goals.append(
                {
                    **_about(product),
                    "instruction_text": str(entry["instruction"]).strip(".") + price_text,
                    "attributes": attributes,
                    "price_upper": upper,
                    "goal_options": list(entry.get("instruction_options") or ()),
                    "weight": 1.0,
                }
            )
    return goals


def shuffled(goals: list[Goal]) -> list[Goal]:
    """``random.seed(233); random.shuffle(goals)``, as the original fixes the goal order."""
    random.Random(SHUFFLE_SEED).shuffle(goals)
    return goals


def split_goals(goals: Sequence[Goal], split: str) -> Sequence[Goal]:
    """The goals of ``split`` (test 0-499, eval 500-1499, train 1500+, all)."""
    return goals[SPLITS[split]]
