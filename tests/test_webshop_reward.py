"""WebShop's reward: the original's cases and quirks, the type-score branches, the verifier."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server import ROOT
from tests.webshop_support import small_shop
from verifiers.webshop import VERIFIER, reward
from verifiers.webshop.reward import (
    get_reward,
    normalize_color,
    option_matches,
    token_set_ratio,
    type_score,
)

PRODUCT: dict[str, Any] = {
    "name": "Lumora Lavender Essential Oil for Diffuser",
    "Title": "Lumora Lavender Essential Oil for Diffuser",
    "query": "essential oils",
    "product_category": "Beauty & Personal Care \u203a Fragrance \u203a Essential Oils",
    "Attributes": ["essential oil", "long lasting"],
    "BulletPoints": ["Pure lavender oil", "Silky feel for bath time"],
    "Description": "A calming oil. Paraben free formula.",
}


def goal(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "asin": "B000000001",
        "name": PRODUCT["name"],
        "query": PRODUCT["query"],
        "product_category": PRODUCT["product_category"],
        "instruction_text": "i want lavender essential oils",
        "attributes": ["essential oils"],
        "goal_options": [],
        "price_upper": 20.0,
    }
    return {**base, **changes}


def test_plural_and_singular_attributes_match() -> None:
    assert token_set_ratio("essential oil", "essential oils") > 85
    result = get_reward(PRODUCT, goal(attributes=["essential oils"]), 10.0, {})
    assert (result.num_attr_matches, result.total) == (1, 1.0)


def test_attribute_fallback_is_an_unbounded_substring_of_title_bullets_or_description() -> None:
    # "silk" is found inside "silky" in a bullet; "paraben free" in the description.
    found = get_reward(PRODUCT, goal(attributes=["silk", "paraben free"]), 10.0, {})
    assert found.num_attr_matches == 2
    # The goal attribute is not lower-cased: "Paraben Free" never matches the lowered text.
    assert get_reward(PRODUCT, goal(attributes=["Paraben Free"]), 10.0, {}).num_attr_matches == 0


def test_partial_option_overlap_matches() -> None:
    assert option_matches(["powder snow"], ["cool powder snow"]) == 1
    assert option_matches(["x-large"], ["large"]) == 1  # token subsets score 100
    assert option_matches(["7.5"], ["7"]) == 1


def test_colour_normalisation_takes_the_first_listed_colour() -> None:
    assert normalize_color("black | white") == "black"
    assert normalize_color("light pink") == "light"
    assert normalize_color("orange cream") == "cream"
    assert normalize_color("standard") == "tan"
    assert normalize_color(("color", "navy")) == "navy"
    assert normalize_color(("color", "navy blue")) == ("color", "navy blue")
    assert option_matches(["black | white"], ["black"]) == 1
    assert option_matches(["gray"], ["grey"]) == 0  # 75: no match
    assert option_matches(["dark blue"], ["navy"]) == 0


def test_dict_goal_options_are_matched_as_name_value_tuples() -> None:
    as_dict = get_reward(PRODUCT, goal(goal_options={"color": "navy blue"}), 10.0, {"c": "navy"})
    as_list = get_reward(PRODUCT, goal(goal_options=["navy blue"]), 10.0, {"c": "navy"})
    assert (as_dict.num_option_matches, as_list.num_option_matches) == (1, 0)


def test_the_fuzzy_score_is_rounded_before_the_threshold() -> None:
    assert token_set_ratio("abcdefgh", "abcdefghi") == 94
    score = token_set_ratio("organic", "organic cotton")
    assert score == 100
    assert not reward.fuzzy_match("aaaaaaa", "aaaaaaaab aaaaaaab")  # rounds to <= 85


def test_thefuzz_processing_drops_accents_and_punctuation() -> None:
    assert reward.full_process("A\u00e7a\u00ed Berry!") == "aa berry"
    assert reward.full_process(("color", "navy blue")) == "color    navy blue"
    assert token_set_ratio("", "anything") == 0
    assert token_set_ratio(None, "none") == 0


# Catalogue punctuation beyond Latin-1 (curly quotes, dashes, primes, the trade mark sign) and
# letters of other scripts: thefuzz deletes only U+0080-U+00FF, so the rest become spaces (or stay,
# if they are letters or digits). The scores are the original's, printed by thefuzz 0.19.
NON_LATIN1 = {
    ("women\u2019s", "womens"): 77,  # the audit's case: "women s" against "womens"
    ("women\u2019s", "women's"): 100,
    ("men\u2019s shoes", "mens shoes"): 95,
    ("slim\u2013fit", "slim fit"): 100,
    ("3\u2033 heel", '3" heel'): 100,
    ("10\u2033", "10 inch"): 100,
    ("Brand\u2122 cream", "brand cream"): 100,
    ("x\u2011large", "x-large"): 100,  # a non-breaking hyphen
    ("caf\u00e9 au lait", "cafe au lait"): 96,  # Latin-1: the letter is deleted
    ("na\u00efve", "naive"): 89,
    ("100\u00a0ml", "100 ml"): 91,  # the no-break space is deleted, not a space
    ("\u0441\u0438\u043d\u0438\u0439", "blue"): 0,  # Cyrillic letters stay letters
    ("\u0441\u0438\u043d\u0438\u0439 blue", "\u0441\u0438\u043d\u0438\u0439"): 100,
    ("\u2460\u2461 pack", "pack"): 100,  # circled digits are not word characters
}


@pytest.mark.parametrize(("pair", "score"), sorted(NON_LATIN1.items()))
def test_non_latin1_text_scores_as_the_original(pair: tuple[str, str], score: int) -> None:
    assert token_set_ratio(*pair) == score
    assert token_set_ratio(*reversed(pair)) == score


# The original itself, where the dev extra installs it (thefuzz 0.19, as WebShop pins it; without
# python-Levenshtein it computes ratios with difflib, as WebShop's own set-up does).
thefuzz = pytest.importorskip("thefuzz.fuzz", reason="thefuzz 0.19 (the dev extra) is needed")
_SPECIAL = ["\u2019", "\u2013", "\u2033", "\u00e9", "\u00a0", "\u00b0", "\u2122", "\u0441"]
_SPECIAL += ["\u4e2d", "\u2460", "\u00c9", "\u0130", "_"]
_TEXT = st.text(alphabet=st.sampled_from([*"abcde xyz019-'.,/&%", *_SPECIAL]), max_size=24)


def test_the_original_is_the_difflib_one() -> None:
    import difflib

    assert thefuzz.SequenceMatcher is difflib.SequenceMatcher, "python-Levenshtein is installed"
    assert thefuzz.token_set_ratio("women\u2019s", "womens") == 77


@settings(max_examples=2000, deadline=None)
@given(_TEXT, _TEXT)
def test_token_set_ratio_equals_the_originals(a: str, b: str) -> None:
    assert token_set_ratio(a, b) == thefuzz.token_set_ratio(a, b)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_token_set_ratio_equals_the_originals_on_any_unicode(a: str, b: str) -> None:
    assert token_set_ratio(a, b) == thefuzz.token_set_ratio(a, b)


def test_price_boundary_is_inclusive() -> None:
    assert get_reward(PRODUCT, goal(price_upper=20.0), 20.0, {}).r_price
    over = get_reward(PRODUCT, goal(price_upper=20.0), 20.01, {})
    assert not over.r_price
    assert over.total == pytest.approx(1 / 2)


def test_total_weights_counts_not_averages() -> None:
    g = goal(attributes=["essential oils", "organic", "vegan"], goal_options=["lavender"])
    result = get_reward(PRODUCT, g, 10.0, {"scent": "lavender"})
    # 1 of 3 attributes + 1 of 1 option + price, over 3 + 1 + 1.
    assert result.total == pytest.approx(3 / 5)
    assert result.metrics()["w_att"] == pytest.approx(3 / 5)


@pytest.mark.parametrize(
    ("desired", "purchased", "same_query", "expected"),
    [
        (("oil", "diffuser"), ("oil", "diffuser"), False, 1.0),
        (("a", "b", "c", "d", "e"), ("a", "x"), False, 0.5),  # 0.2: not > 0.2 -> 0.5
        (("a", "b", "c", "d", "e"), ("a", "x"), True, 1.0),  # query match rescues it
        (tuple("abcdefghijk"), ("a",), True, 0.1),  # 1/11 < 0.1 -> 0.1 despite the query
        (tuple("abcdefghij"), ("a",), False, 0.5),  # exactly 0.1 is not < 0.1
        (("a", "b"), ("x",), True, 0.0),  # no overlap -> 0 even with query and category
        ((), ("x",), True, 1.0),  # no desired nouns -> title_score 0.2
        ((), ("x",), False, 0.5),
    ],
)
def test_type_score_branches(
    monkeypatch: pytest.MonkeyPatch,
    desired: tuple[str, ...],
    purchased: tuple[str, ...],
    same_query: bool,
    expected: float,
) -> None:
    nouns = {"goal title": desired, "bought title": purchased}
    monkeypatch.setattr(reward, "title_nouns", nouns.__getitem__)
    bought = {**PRODUCT, "name": "bought title", "query": "q" if same_query else "other"}
    if not same_query:
        bought["product_category"] = "Other \u203a Things"
    wanted = goal(name="goal title", query="q")
    assert type_score(bought, wanted).r_type == expected


def test_type_score_with_the_real_tagger() -> None:
    same = type_score(PRODUCT, goal())
    assert (same.r_type, same.title_score) == (1.0, 1.0)
    other = {**PRODUCT, "name": "Wireless Bluetooth Speaker with Bass", "query": "speakers"}
    assert type_score(other, goal()).r_type == 0.0


def test_goals_that_crash_the_original_are_refused() -> None:
    with pytest.raises(reward.MalformedPurchase):
        get_reward(PRODUCT, goal(attributes=[]), 1.0, {})
    with pytest.raises(reward.MalformedPurchase):
        get_reward(PRODUCT, goal(price_upper=0), 1.0, {})
    with pytest.raises(reward.MalformedPurchase):
        get_reward({"name": "x"}, goal(), 1.0, {})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_buying_the_goal_product_with_its_options_under_the_price_scores_one(
    data: st.DataObject,
) -> None:
    shop = small_shop()
    target = data.draw(st.sampled_from(shop.goals))
    product = shop.product(target["asin"])
    assert product is not None
    chosen = dict(target["goal_options"])
    result = get_reward(product.record(), target, product.price, chosen)
    assert result.total == 1.0, result
    # Dropping an option can only lower it, and never below zero.
    if chosen:
        name = data.draw(st.sampled_from(sorted(chosen)))
        partial = get_reward(product.record(), target, product.price, {
            k: v for k, v in chosen.items() if k != name
        })  # fmt: skip
        assert 0.0 <= partial.total <= 1.0


def test_the_verifier_scores_a_purchase_and_refuses_junk() -> None:
    response, reference = VERIFIER.example
    assert VERIFIER(response, reference).reward == 1.0
    for junk in ("", "not json", "[]", json.dumps({"product": 1}), json.dumps({"product": {}})):
        score = VERIFIER(junk, reference)
        assert (score.status, score.reward) == ("invalid", 0.0), junk
    assert VERIFIER(response, {"attributes": []}).status == "error"
    assert VERIFIER(response, "not a goal").status == "error"
    over = json.loads(response) | {"price": 1e9}
    assert VERIFIER(json.dumps(over), reference).reward == pytest.approx(2 / 3)


@st.composite
def _near_pairs(draw: st.DrawFn) -> tuple[str, str]:
    """A string and a few-character edit of it: scores around the threshold."""
    a = draw(_TEXT.filter(lambda t: len(t) >= 4))
    b = list(a)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(b)))
        if draw(st.booleans()) and at < len(b):
            del b[at]
        else:
            b.insert(at, draw(st.sampled_from([*"abcde ", *_SPECIAL])))
    return a, "".join(b)


@settings(max_examples=1500, deadline=None)
@given(_near_pairs())
def test_fuzzy_match_decides_as_the_original(pair: tuple[str, str]) -> None:
    # fuzzy_match skips difflib below an upper bound; the decision must not change.
    a, b = pair
    assert reward.fuzzy_match(a, b) == (thefuzz.token_set_ratio(a, b) > 85)


def test_the_noun_tagger_loads_without_torch_and_leaves_it_importable() -> None:
    # thinc would import torch (seconds per pool worker) where it is installed; the tagger runs
    # on numpy, and torch stays importable for whatever else the process runs.
    program = (
        "import importlib.util, sys\n"
        "from verifiers.webshop.nouns import title_nouns\n"
        "print(title_nouns('Lavender Essential Oil for Diffuser'))\n"
        "assert 'torch' not in sys.modules, 'the tagger imported torch'\n"
        "if importlib.util.find_spec('torch') is not None:\n"
        "    import torch\n"
        "    print(torch.tensor([1]).item())\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", program],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "('lavender', 'essential', 'oil', 'diffuser')"
