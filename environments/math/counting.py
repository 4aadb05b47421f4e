"""Counting: selections, arrangements and arrangements of letters with repeats."""

from __future__ import annotations

import math
import random
from collections import Counter

from environments.math.problem import Problem, exact
from environments.math.render import listing

# Words with repeated letters, so the count is a multinomial coefficient and not n!.
_WORDS = (
    "ADDRESS",
    "ASSASSIN",
    "BALLOON",
    "BANANA",
    "BOOKKEEPER",
    "BOOKKEEPING",
    "BUBBLE",
    "CALCULUS",
    "CHEESE",
    "COFFEE",
    "COMMITTEE",
    "DIFFERENT",
    "EXCELLENT",
    "GIRAFFE",
    "GOOGOL",
    "HAPPINESS",
    "INNINGS",
    "KANGAROO",
    "LETTER",
    "LOLLIPOP",
    "MAMMAL",
    "MATHEMATICS",
    "MISSISSIPPI",
    "NINETEEN",
    "PARALLEL",
    "PEPPER",
    "POSSESS",
    "RACECAR",
    "REFERENCE",
    "SASSAFRAS",
    "SEVENTEEN",
    "STATISTICS",
    "SUCCESS",
    "TATTOO",
    "TENNESSEE",
    "TOMORROW",
    "VACUUM",
    "VILLAGE",
    "WOODWORK",
    "ZOOLOGY",
)

_ORDINALS = ("first", "second", "third", "fourth", "fifth")


def _arrangements(letters: str) -> int:
    count = math.factorial(len(letters))
    for repeats in Counter(letters).values():
        count //= math.factorial(repeats)
    return count


def counting(rng: random.Random) -> Problem:
    """Committees (with or without a split), prize podiums, or arrangements of letters with
    repeats (a word, or a bag of letter tiles)."""
    variant = rng.randrange(5)
    if variant == 0:
        people, size = rng.randint(6, 40), rng.randint(2, 6)
        statement = (
            f"In how many ways can a committee of ${size}$ be chosen from ${people}$ people?"
        )
        return Problem(statement, exact(math.comb(people, size)))
    if variant == 1:
        women, men = rng.randint(4, 12), rng.randint(4, 12)
        chosen_women, chosen_men = rng.randint(1, 3), rng.randint(1, 3)
        statement = (
            f"A club has ${women}$ women and ${men}$ men. In how many ways can it choose a "
            f"committee of ${chosen_women}$ {'woman' if chosen_women == 1 else 'women'} and "
            f"${chosen_men}$ {'man' if chosen_men == 1 else 'men'}?"
        )
        ways = math.comb(women, chosen_women) * math.comb(men, chosen_men)
        return Problem(statement, exact(ways))
    if variant == 2:
        runners, prizes = rng.randint(5, 25), rng.randint(2, 5)
        named = ", ".join(_ORDINALS[: prizes - 1]) + f" and {_ORDINALS[prizes - 1]}"
        statement = (
            f"In how many ways can the {named} prizes of a race with ${runners}$ runners be "
            "awarded, if no runner wins more than one prize?"
        )
        return Problem(statement, exact(math.perm(runners, prizes)))
    if variant == 3:
        word = rng.choice(_WORDS)
        statement = f"How many distinct arrangements of the letters of the word {word} are there?"
        return Problem(statement, exact(_arrangements(word)))
    letters = "".join(
        letter * rng.randint(1, 4) for letter in rng.sample("ABCDEFGH", rng.randint(2, 4))
    )
    tiles = listing(sorted(letters))
    statement = (
        f"A bag holds {len(letters)} letter tiles: {tiles}. How many distinct strings can be "
        "made by arranging all of the tiles in a row?"
    )
    return Problem(statement, exact(_arrangements(letters)))
