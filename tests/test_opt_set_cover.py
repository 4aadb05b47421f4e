"""OPT-BENCH set_cover: seeded generator (always coverable), CP-SAT optimum, hardened check
('Impossible' and repeated ids rejected)."""

from __future__ import annotations

import itertools
import json
from functools import partial

import pytest

from environments.opt.task import LEVELS, Instance, Level
from environments.opt.tasks.set_cover import _LEVELS, _SIZE_FACTOR, TASK
from tests import opt_support as opt
from tests.opt_support import assert_infeasible

SEEDS = range(40)


make = partial(opt.instance, TASK.name)  # (seed, level) -> the instance
reference = partial(opt.solution, TASK.name)  # (seed, level) -> the exact solution
score = partial(opt.score, TASK.name)  # (instance, answer, value) -> the verifier's score


def brute_force(instance: Instance) -> int:
    """The fewest subsets covering U, trying every combination of each size in turn."""
    universe = set(instance["U"])
    subsets = [set(s) for s in instance["S"].values()]
    for size in range(1, len(subsets) + 1):
        for combo in itertools.combinations(subsets, size):
            if set().union(*combo) == universe:
                return size
    raise AssertionError("not coverable")


@pytest.mark.parametrize("level", LEVELS)
def test_sizes_follow_the_level_and_every_instance_is_coverable(level: Level) -> None:
    (n_lo, n_hi), (m_lo, m_hi) = _LEVELS[level]
    for seed in SEEDS:
        instance = make(seed, level)
        assert set(instance) == {"U", "S"}
        count = len(instance["U"])
        assert n_lo <= count <= n_hi
        assert instance["U"] == list(range(count))
        assert m_lo <= len(instance["S"]) <= m_hi
        assert list(instance["S"]) == [str(i) for i in range(len(instance["S"]))]
        covered: set[int] = set()
        for subset in instance["S"].values():
            # Non-empty, sorted, no repeats, inside U.
            assert subset
            assert subset == sorted(set(subset))
            assert all(0 <= e < count for e in subset)
            covered.update(subset)
        assert covered == set(instance["U"])
        # Drawn sizes are at most 40 % of |U|; patching adds only the elements nothing drew.
        cap = max(1, int(count * _SIZE_FACTOR))
        patched = sum(max(0, len(s) - cap) for s in instance["S"].values())
        assert patched <= count


@pytest.mark.parametrize("level", ["easy", "medium"])
def test_reference_matches_brute_force(level: Level) -> None:
    # Proven, feasible, valued right and no worse than greedy: tests/test_opt_tasks.py.
    # At most 15 subsets: every combination up to the optimum's size can be tried.
    for seed in SEEDS[:20]:
        assert reference(seed, level).value == brute_force(make(seed, level))


@pytest.mark.parametrize(
    "claim",
    [
        "Impossible",
        "impossible",
        "'Impossible'",
        "**Impossible**",
        "\\boxed{Impossible}",
        "[Impossible]",
    ],
)
def test_claiming_impossible_is_infeasible(claim: str) -> None:
    # The original loophole: generated instances are always coverable, so the claim is wrong.
    for seed in SEEDS[:5]:
        instance = make(seed, "bench")
        assert_infeasible(score(instance, claim, 5), "'Impossible' is wrong")


@pytest.mark.parametrize("level", LEVELS)
def test_hand_made_infeasible_answers_score_zero(level: Level) -> None:
    for seed in SEEDS[:10]:
        instance = make(seed, level)
        solution = reference(seed, level)
        ids = json.loads(solution.answer)
        # A repeated id (the original counted it; a cover must name each subset once).
        assert_infeasible(score(instance, str([*ids, ids[0]]), solution.value), "more than once")
        # Dropping any subset of an optimal cover uncovers something (it is minimal).
        for drop in range(len(ids)):
            partial = ids[:drop] + ids[drop + 1 :]
            if partial:
                assert_infeasible(score(instance, str(partial), solution.value), "not covered")
    # A single small subset leaves most of U uncovered; the message names the elements.
    tiny: Instance = {"U": [0, 1, 2], "S": {"0": [0], "1": [1, 2]}}
    assert_infeasible(score(tiny, "[0]", 2), "2 element(s) of U are not covered: 1, 2")


def test_a_cover_may_be_a_tuple_in_any_order() -> None:
    # Decorations and the last answer counting: tests/test_opt_tasks.py.
    instance, solution = make(0, "medium"), reference(0, "medium")
    ids = json.loads(solution.answer)
    for text in (str(tuple(ids)), ", ".join(map(str, reversed(ids)))):
        assert score(instance, text, solution.value).reward == 1.0, text


def test_the_example_optimum_matches_brute_force() -> None:
    # The example's output is a proven optimum: tests/test_opt_tasks.py.
    assert brute_force(TASK.example_input) == TASK.check.evaluate(
        TASK.example_input, TASK.example_output
    )
