"""OPT-BENCH subset_sum: seeded generator with planted solutions, exact DP optimum, hardened
check (repeated indices rejected)."""

from __future__ import annotations

import itertools
import json
from functools import partial

import pytest

from environments.opt.task import LEVELS, Instance, Level
from environments.opt.tasks.subset_sum import _LEVELS, TASK, plant
from tests import opt_support as opt
from tests.opt_support import assert_infeasible
from verifiers.opt.subset_sum import CHECK

SEEDS = range(40)
reference = partial(opt.solution, TASK.name)  # (seed, level) -> the exact solution
score = partial(opt.score, TASK.name)  # (instance, answer, value) -> the verifier's score
make = partial(opt.planted, plant)  # (seed, level) -> (instance, planted solutions)


def numbers(instance: Instance) -> list[int]:
    """The numbers in index order."""
    return [instance["numbers"][str(i)] for i in range(len(instance["numbers"]))]


def most_by_sums(values: list[int], target: int) -> int:
    """The largest subset size hitting ``target``, by a forward sweep over reachable sums (a
    second, independent implementation of the optimum; -1 when unreachable)."""
    reach = {0: 0}
    for value in values:
        for total, size in list(reach.items()):
            if total + value <= target and reach.get(total + value, -1) < size + 1:
                reach[total + value] = size + 1
    return reach.get(target, -1) if target else -1


@pytest.mark.parametrize("level", LEVELS)
def test_sizes_values_and_planted_solutions_follow_the_level(level: Level) -> None:
    (t_lo, t_hi), (s_lo, s_hi), (low, high), (_, p_hi) = _LEVELS[level]
    for seed in SEEDS:
        instance, planted = make(seed, level)
        # ``generate`` is ``plant`` without the solutions: the same draws.
        assert instance == opt.instance(TASK.name, seed, level)
        values = numbers(instance)
        assert set(instance) == {"target", "numbers"}
        assert list(instance["numbers"]) == [str(i) for i in range(len(values))]
        # The total is raised only when one planted solution is larger than the drawn total.
        assert t_lo <= len(values) <= max(t_hi, s_hi)
        assert all(low <= v <= high for v in values)
        assert 1 <= len(planted) <= p_hi
        # Planted solutions: same size in the level's range, disjoint, each hitting the target.
        assert len({len(p) for p in planted}) == 1
        assert s_lo <= len(planted[0]) <= s_hi
        flat = [i for p in planted for i in p]
        assert len(flat) == len(set(flat))
        for solution in planted:
            assert sum(values[i] for i in solution) == instance["target"]
            assert CHECK.evaluate(instance, str(solution)) == len(solution)


def test_several_optima_are_planted_where_the_total_has_room() -> None:
    # The original plants several solutions but no more than total // size of them; at the
    # small levels that often leaves room for two or three.
    counts = [len(make(seed, level)[1]) for level in ("easy", "medium") for seed in SEEDS]
    assert max(counts) >= 2
    assert sum(c >= 2 for c in counts) >= 5


@pytest.mark.parametrize("level", LEVELS)
def test_reference_recovers_the_planted_value_and_matches_a_sum_sweep(level: Level) -> None:
    # Proven, feasible and valued right: tests/test_opt_tasks.py, on the same seeds.
    for seed, instance, solution in opt.solved(TASK.name, level):
        assert solution.value == most_by_sums(numbers(instance), instance["target"]), (level, seed)
        assert solution.value >= len(make(seed, level)[1][0])


@pytest.mark.parametrize("level", ["easy", "medium"])
def test_reference_matches_brute_force(level: Level) -> None:
    # At most 12 numbers: every subset can be tried.
    for seed in SEEDS:
        instance, _ = make(seed, level)
        values, target = numbers(instance), instance["target"]
        best = max(
            len(combo)
            for size in range(1, len(values) + 1)
            for combo in itertools.combinations(range(len(values)), size)
            if sum(values[i] for i in combo) == target
        )
        assert reference(seed, level).value == best


def test_repeated_indices_are_rejected() -> None:
    # The original's loophole: a repeated 1 counted once per repetition.
    instance: Instance = {"target": 6, "numbers": {"0": 1, "1": 5, "2": 6}}
    assert_infeasible(score(instance, "[0, 0, 0, 0, 0, 0]", 2), "index 0 appears more than once")
    assert_infeasible(score(instance, "[1, 0, 0]", 2), "appears more than once")
    assert score(instance, "[0, 1]", 2).reward == 1.0
    # On generated instances: any number dividing the target, repeated to reach it.
    tried = 0
    for seed in SEEDS:
        generated, _ = make(seed, "bench")
        target = generated["target"]
        for index, value in enumerate(numbers(generated)):
            if target % value == 0 and target // value > 1:
                answer = str([index] * (target // value))
                assert_infeasible(score(generated, answer, 15), "appears more than once")
                tried += 1
                break
    assert tried >= len(SEEDS) // 2


@pytest.mark.parametrize("level", LEVELS)
def test_hand_made_infeasible_answers_score_zero(level: Level) -> None:
    for seed in SEEDS[:10]:
        instance, planted = make(seed, level)
        value = reference(seed, level).value
        target = instance["target"]
        short = planted[0][:-1]  # one planted number fewer: below the target
        assert_infeasible(score(instance, str(short), value), f"not to the target {target}")
        everything = list(range(len(instance["numbers"])))
        if sum(numbers(instance)) != target:
            assert_infeasible(score(instance, str(everything), value), "not to the target")
        padded = [*planted[0], planted[0][0]]
        assert_infeasible(score(instance, str(padded), value), "appears more than once")


def test_indices_may_be_arrows_or_a_tuple_in_any_order() -> None:
    # Decorations and the last answer counting: tests/test_opt_tasks.py.
    instance, solution = make(0, "medium")[0], reference(0, "medium")
    ids = json.loads(solution.answer)
    for text in (" -> ".join(map(str, ids)), str(tuple(ids)), str(ids[::-1])):
        assert score(instance, text, solution.value).reward == 1.0, text


def test_greedy_is_feasible_or_scores_zero_cleanly() -> None:
    # Scored without raising, and never above the optimum: tests/test_opt_tasks.py.
    hits = 0
    total = 0
    for level in LEVELS:
        for seed in SEEDS:
            instance, _ = make(seed, level)
            value = reference(seed, level).value
            result = score(instance, TASK.greedy(instance), value)
            assert result.status == "ok", result
            if result.components["feasible"]:
                hits += 1
                assert result.reward is not None
                assert 0 < result.reward <= 1.0
            else:
                assert result.reward == 0.0
                assert "not to the target" in result.detail
            total += 1
    # Smallest-first plus one swap hits the target on most instances (measured: ~90 %).
    assert hits >= 0.75 * total
