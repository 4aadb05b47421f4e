"""The ``webshop`` verifier: score one purchase against a WebShop goal with the original reward.

Response: JSON ``{"product": {...}, "price": float, "options": {name: value}}`` where the product
record carries the fields the reward reads (name, Title, query, product_category, Attributes,
BulletPoints, Description). Reference: the goal (name, query, product_category, attributes,
goal_options, price_upper). The environment ``webshop`` uses the same ``get_reward``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from verifiers.base import Verifier
from verifiers.score import Score
from verifiers.webshop.reward import COMPONENTS, METRICS, MalformedPurchase, Reward, get_reward

__all__ = ["VERIFIER", "Reward", "get_reward", "score_purchase"]

VERSION = "2"  # 2: options are one string each, the price finite and non-negative

_EXAMPLE_PRODUCT = {
    "name": "Lumora Lavender Essential Oil for Diffuser, 4 fl oz",
    "Title": "Lumora Lavender Essential Oil for Diffuser, 4 fl oz",
    "query": "essential oils",
    "product_category": "Beauty & Personal Care \u203a Fragrance \u203a Essential Oils",
    "Attributes": ["long lasting", "natural ingredients"],
    "BulletPoints": ["Pure lavender oil for aromatherapy"],
    "Description": "A calming lavender essential oil.",
}
_EXAMPLE_GOAL = {
    "asin": "B000000001",
    "name": _EXAMPLE_PRODUCT["name"],
    "query": "essential oils",
    "product_category": _EXAMPLE_PRODUCT["product_category"],
    "instruction_text": "i want a long lasting essential oil with size: 4 fl oz",
    "attributes": ["long lasting"],
    "goal_options": {"size": "4 fl oz"},
    "price_upper": 30.0,
}


def score_purchase(
    product: dict[str, Any], goal: dict[str, Any], price: float, options: dict[str, str]
) -> Score:
    """The reward as a Score with its parts as components (and what they were computed from as
    metrics); raises ``MalformedPurchase``."""
    reward = get_reward(product, goal, price, options)
    return Score.ok(
        reward.total,
        reward.components(),
        detail=(
            f"type {reward.type_score.r_type:g}, attributes {reward.num_attr_matches}/"
            f"{len(goal['attributes'])}, options {reward.num_option_matches}/"
            f"{len(goal['goal_options'])}, price {'ok' if reward.r_price else 'over'}"
        ),
        metrics=reward.metrics(),
    )


def _check(response: str, reference: Any, options: Any) -> Score:  # noqa: PLR0911 - one exit per input check
    del options
    try:
        purchase = json.loads(response)
    except ValueError:
        return Score.invalid("the response is not JSON")
    except RecursionError:
        # The parser recurses per level: a response nested past the interpreter's limit is
        # malformed input, not a failure of the check.
        return Score.invalid("the response nests lists or objects too deeply to be a purchase")
    if not isinstance(purchase, dict) or not isinstance(purchase.get("product"), dict):
        return Score.invalid('the response needs {"product": {...}, "price": ..., "options": {}}')
    chosen = purchase.get("options", {})
    price = purchase.get("price")
    if not isinstance(chosen, dict) or not all(isinstance(v, str) for v in chosen.values()):
        # One value per option, as a click chooses it: a list of every size would match the
        # goal's size through the fuzzy match on its text.
        return Score.invalid("options must be an object of option names to one chosen value each")
    if isinstance(price, bool) or not isinstance(price, int | float) or not 0 <= price < math.inf:
        # A negative price passes every 'lower than' constraint; NaN is not a price.
        return Score.invalid("price must be a finite, non-negative number")
    if not isinstance(reference, dict):
        return Score.bad_reference("the reference is not a WebShop goal")
    try:
        get_reward(_EXAMPLE_PRODUCT, reference, 0.0, {})
    except MalformedPurchase as exc:
        return Score.bad_reference(f"the reference is not a WebShop goal: {exc}")
    try:
        return score_purchase(purchase["product"], reference, float(price), chosen)
    except MalformedPurchase as exc:
        return Score.invalid(str(exc))


VERIFIER = Verifier(
    name="webshop",
    version=VERSION,
    description="WebShop's purchase reward (attributes, options, price, product type) for a "
    "product record bought with chosen options against a goal.",
    check=_check,
    timeout_s=30.0,
    components=COMPONENTS,
    metrics=METRICS,
    example=(
        json.dumps({"product": _EXAMPLE_PRODUCT, "price": 12.5, "options": {"size": "4 fl oz"}}),
        _EXAMPLE_GOAL,
    ),
)
