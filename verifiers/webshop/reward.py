"""WebShop's reward (``web_agent_site/engine/goal.py`` at 64fa2a5), every part a component.

reward = (attributes matched + options matched + price ok) / (#attributes + #options + 1) x r_type

The original's behaviour is kept on purpose, quirks included, because published scores were
computed with it: fuzzy scores are integers before the ``> 85`` test; dict goal options are
matched as ``(name, value)`` tuples; colour normalisation takes the first colour-list entry found
anywhere in a string; the attribute fallback is an unbounded substring test on the unlowered goal
attribute; matching is not one-to-one. See the family README for the full list.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from verifiers.webshop.nouns import title_nouns

FUZZY_THRESHOLD = 85
COLOR_SET = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure", "banana", "beige", "black", "blue",
    "blush", "bordeaux", "bronze", "brown", "burgundy", "camel", "camo", "caramel", "champagne",
    "charcoal", "cheetah", "chestnut", "chocolate", "christmas", "coffee", "cognac", "copper",
    "coral", "cranberry", "cream", "crystal", "dark", "denim", "eggplant", "elephant", "espresso",
    "fuchsia", "gold", "granite", "grape", "graphite", "grass", "gray", "green", "grey", "heather",
    "indigo", "ivory", "ivy", "khaki", "lavender", "lemon", "leopard", "light", "lilac", "lime",
    "magenta", "maroon", "mauve", "merlot", "midnight", "mint", "mocha", "multicolor", "mushroom",
    "mustard", "natural", "navy", "nude", "olive", "orange", "peach", "pewter", "pink", "plum",
    "purple", "rainbow", "red", "rose", "royal", "rust", "sand", "sapphire", "seashell", "silver",
    "skull", "slate", "steel", "stone", "stonewash", "sunflower", "tan", "taupe", "teal", "tiger",
    "turquoise", "violet", "walnut", "wheat", "white", "wine", "yellow",
)  # fmt: skip
"""``web_agent_site/engine/normalize.py``'s list, in its order (the order decides the match)."""

CATEGORY_SEPARATOR = "\u203a"  # the right-pointing angle quote between category levels
_NON_WORD = re.compile(r"(?ui)\W")

GoalOption = str | tuple[str, str]
"""A goal option as the original compares it: a string, or a dict goal's ``(name, value)``."""


class MalformedPurchase(ValueError):
    """The product, goal or options lack a field the reward needs or have the wrong type."""


# thefuzz 0.19's "ascii dammit" table: it deletes U+0080-U+00FF only (accented Latin-1 letters,
# the no-break space, the degree sign); every other non-ASCII character stays, and the word test
# below keeps it (letters, digits) or turns it into a space (curly quotes, dashes, primes).
_LATIN1_HIGH = dict.fromkeys(range(0x80, 0x100))


def full_process(value: object) -> str:
    """thefuzz 0.19's default preprocessing (``full_process(force_ascii=True)``): ``str()`` of a
    non-string, U+0080-U+00FF deleted, each other non-word character (Unicode ``\\W``) to a
    space, lower-cased, stripped: ``women\\u2019s`` becomes ``women s`` (a curly apostrophe is
    outside Latin-1) and ``a\\u00e7a\\u00ed`` becomes ``aa``."""
    text = value if isinstance(value, str) else str(value)
    return _NON_WORD.sub(" ", text.translate(_LATIN1_HIGH)).lower().strip()


def _ratio(a: str, b: str) -> int:
    """thefuzz 0.19's ``ratio``: 100 for equal strings, 0 when one is empty, else difflib's
    ``SequenceMatcher`` ratio in percent, rounded (WebShop's requirements install thefuzz without
    python-Levenshtein, so thefuzz falls back to difflib: so does this, autojunk included)."""
    if a == b:
        return 100
    if not a or not b:
        return 0
    return round(100 * difflib.SequenceMatcher(None, a, b).ratio())


def _token_set_pairs(a: object, b: object) -> list[tuple[str, str]]:
    """The three string pairs thefuzz 0.19's ``token_set_ratio`` compares: the sorted common
    tokens against each side's common-then-own tokens, and those two against each other (none
    for None or an empty side, which score 0)."""
    if a is None or b is None:
        return []
    left, right = full_process(a), full_process(b)
    if not left or not right:
        return []
    tokens_a, tokens_b = set(left.split()), set(right.split())
    common = " ".join(sorted(tokens_a & tokens_b))
    with_a = f"{common} {' '.join(sorted(tokens_a - tokens_b))}".strip()
    with_b = f"{common} {' '.join(sorted(tokens_b - tokens_a))}".strip()
    return [(common, with_a), (common, with_b), (with_a, with_b)]


def token_set_ratio(a: object, b: object) -> int:
    """thefuzz 0.19's ``token_set_ratio``: the best of its three ratios, an integer (rounded
    before the ``> 85`` test); 0 for None or an empty side."""
    return max((_ratio(x, y) for x, y in _token_set_pairs(a, b)), default=0)


def fuzzy_match(a: object, b: object) -> bool:
    """Whether two strings match as the original decides: integer score above 85."""
    pairs = _token_set_pairs(a, b)
    # difflib's matching blocks form a common subsequence, so its ratio never exceeds the
    # LCS (Indel) ratio rapidfuzz computes in a microsecond: when that bound is not above the
    # threshold, neither is the original's score, and difflib (~40x slower) is skipped.
    if round(max((fuzz.ratio(x, y) for x, y in pairs), default=0)) <= FUZZY_THRESHOLD:
        return False
    return max(_ratio(x, y) for x, y in pairs) > FUZZY_THRESHOLD


def normalize_color(value: GoalOption) -> GoalOption:
    """The first ``COLOR_SET`` entry contained in ``value`` (substring test for a string, element
    test for a tuple, as Python's ``in`` does in the original), else ``value`` unchanged."""
    for color in COLOR_SET:
        if color in value:
            return color
    return value


@dataclass(frozen=True)
class TypeScore:
    """The product-type gate and its inputs."""

    r_type: float
    query_match: bool
    category_match: bool
    title_score: float


COMPONENTS = ("r_type", "r_att", "r_option", "r_price")
"""Every part of the reward ``Reward.components`` may report (``r_option`` only when the goal
has options): the total is ``r_type`` times the weighted parts."""
METRICS = (
    "query_match",
    "category_match",
    "title_score",
    "num_attr_matches",
    "num_option_matches",
    "w_att",
    "w_option",
    "w_price",
)
"""What ``Reward.metrics`` reports beside the parts: ``r_type``'s inputs, the counts behind
``r_att`` and ``r_option``, and the weights."""


@dataclass(frozen=True)
class Reward:
    """The total and every part the original reports in its verbose mode."""

    total: float
    type_score: TypeScore
    r_attr: float
    num_attr_matches: int
    r_option: float | None
    num_option_matches: int
    r_price: bool
    weights: tuple[float, float, float]

    def components(self) -> dict[str, float]:
        """Every part of the total as a float, for ``Score.components``."""
        parts = {
            "r_type": self.type_score.r_type,
            "r_att": self.r_attr,
            "r_price": float(self.r_price),
        }
        if self.r_option is not None:
            parts["r_option"] = self.r_option
        return parts

    def metrics(self) -> dict[str, float]:
        """What the parts were computed from, for ``Score.metrics``."""
        return {
            "query_match": float(self.type_score.query_match),
            "category_match": float(self.type_score.category_match),
            "title_score": self.type_score.title_score,
            "num_attr_matches": float(self.num_attr_matches),
            "num_option_matches": float(self.num_option_matches),
            "w_att": self.weights[0],
            "w_option": self.weights[1],
            "w_price": self.weights[2],
        }


def _categories(path: str) -> set[str]:
    return {level.strip() for level in path.split(CATEGORY_SEPARATOR)}


def type_score(product: Mapping[str, Any], goal: Mapping[str, Any]) -> TypeScore:
    """``get_type_reward``: query equality, >= 2 shared category levels, title-noun overlap;
    r_type 1, then 0.5 if none of the three, then 0.1 if title_score < 0.1, then 0 if it is 0."""
    query_match = product["query"] == goal["query"]
    category_match = (
        len(_categories(product["product_category"]) & _categories(goal["product_category"])) >= 2
    )
    purchased = title_nouns(product["name"])
    desired = title_nouns(goal["name"])
    title_score = len(set(purchased) & set(desired)) / len(desired) if desired else 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return TypeScore(r_type, query_match, category_match, title_score)


def attribute_matches(product: Mapping[str, Any], goal_attributes: Sequence[str]) -> int:
    """``get_attribute_reward``'s count: a fuzzy match with a product attribute, else the goal
    attribute (not lower-cased) as a substring of the lower-cased title, joined bullets or
    description."""
    title = product["Title"].lower()
    bullets = " ".join(product["BulletPoints"]).lower()
    description = product["Description"].lower()
    matches = 0
    for wanted in goal_attributes:
        if any(fuzzy_match(have, wanted) for have in product["Attributes"]) or (
            wanted in title or wanted in bullets or wanted in description
        ):
            matches += 1
    return matches


def goal_option_list(goal_options: Mapping[str, str] | Sequence[str]) -> list[GoalOption]:
    """The goal options as the original passes them: a dict's ``.items()`` (tuples), a list as
    is."""
    if isinstance(goal_options, Mapping):
        return [(str(name), str(value)) for name, value in goal_options.items()]
    return [str(value) for value in goal_options]


def option_matches(chosen: Sequence[str], goal_options: Sequence[GoalOption]) -> int:
    """``get_option_reward``'s count: each goal option matches if some chosen value does, both
    colour-normalised; chosen option names are ignored."""
    purchased = [normalize_color(value) for value in chosen]
    wanted = [normalize_color(option) for option in goal_options]
    return sum(1 for goal in wanted if any(fuzzy_match(value, goal) for value in purchased))


def get_reward(
    product: Mapping[str, Any],
    goal: Mapping[str, Any],
    price: float,
    options: Mapping[str, str],
) -> Reward:
    """Score buying ``product`` at ``price`` with ``options`` (name -> chosen value) for ``goal``.

    ``product`` needs name, Title, query, product_category, Attributes, BulletPoints and
    Description; ``goal`` needs name, query, product_category, attributes, goal_options (dict or
    list) and price_upper. Raises ``MalformedPurchase`` when a field is missing or mistyped, and
    for the inputs that crash the original (no goal attributes, ``price_upper <= 0``).
    """
    try:
        attributes = [str(a) for a in goal["attributes"]]
        goal_options = goal_option_list(goal["goal_options"])
        price_upper = float(goal["price_upper"])
        if not attributes or price_upper <= 0:
            raise MalformedPurchase("a goal needs attributes and a positive price_upper")
        kind = type_score(product, goal)
        num_attr = attribute_matches(product, attributes)
        num_option = option_matches([str(v) for v in options.values()], goal_options)
        r_price = float(price) <= price_upper
    except (KeyError, TypeError, AttributeError) as exc:
        raise MalformedPurchase(f"cannot score this purchase: {exc!r}") from exc
    denominator = len(attributes) + len(goal_options) + 1
    total = (num_attr + num_option + int(r_price)) / denominator * kind.r_type
    return Reward(
        total=total,
        type_score=kind,
        r_attr=num_attr / len(attributes),
        num_attr_matches=num_attr,
        r_option=num_option / len(goal_options) if goal_options else None,
        num_option_matches=num_option,
        r_price=r_price,
        weights=(
            len(attributes) / denominator,
            len(goal_options) / denominator,
            1 / denominator,
        ),
    )
