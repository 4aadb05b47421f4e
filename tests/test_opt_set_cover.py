"""OPT-BENCH set_cover: seeded generator (always coverable), CP-SAT optimum, hardened check
('Impossible' and repeated ids rejected)."""

from __future__ import annotations

import itertools
import json
import random
from functools import cache

import pytest

from environments.opt.task import LEVELS, Instance, Level, Solution
from environments.opt.tasks.set_cover import _LEVELS, _SIZE_FACTOR, TASK
from verifiers.opt import VERIFIER
from verifiers.opt.set_cover import CHECK
from verifiers.score import Score

SEEDS = range(40)
BUDGET = 60.0


@cache
def make(seed: int, level: Level) -> Instance:
    """The instance of ``seed`` at ``level``."""
    return TASK.generate(random.Random(f"set_cover/{seed}/{level}"), level)


@cache
def reference(seed: int, level: Level) -> Solution:
    """The exact solution of ``seed`` at ``level`` (cached: several tests use it)."""
    return TASK.solve(make(seed, level), BUDGET)


def score(instance: Instance, answer: str, value: float) -> Score:
    """The verifier's score of ``Answer: <answer>`` against a proven optimum ``value``."""
    ref = {"task": "set_cover", "instance": instance, "value": value, "optimal": True}
    return VERIFIER(f"Reasoning.\nAnswer: {answer}", ref)


def assert_infeasible(result: Score, reason: str) -> None:
    """Reward 0 with status ok and the reason in the detail (a real zero, not a parse error)."""
    assert result.status == "ok", result
    assert result.reward == 0.0, result
    assert result.components["feasible"] == 0.0
    assert result.detail.startswith("infeasible:"), result.detail
    assert reason in result.detail, result.detail


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
def test_generation_is_byte_identical_per_seed_and_varied(level: Level) -> None:
    dumps = []
    for seed in SEEDS:
        # Reseeding the global generator in between shows only ``rng`` is drawn from.
        random.seed(1)
        first = json.dumps(TASK.generate(random.Random(f"s/{seed}"), level))
        random.seed(2)
        second = json.dumps(TASK.generate(random.Random(f"s/{seed}"), level))
        assert first == second
        dumps.append(first)
    assert len(set(dumps)) == len(dumps)


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


@pytest.mark.parametrize("level", LEVELS)
def test_reference_is_feasible_and_proven_optimal(level: Level) -> None:
    for seed in SEEDS:
        instance = make(seed, level)
        solution = reference(seed, level)
        assert solution.optimal
        assert CHECK.evaluate(instance, solution.answer) == solution.value
        result = score(instance, solution.answer, solution.value)
        assert result.status == "ok", result
        assert result.reward == 1.0
        # The proven optimum is never worse than the greedy baseline's cover.
        assert solution.value <= CHECK.evaluate(instance, TASK.greedy(instance))


@pytest.mark.parametrize("level", ["easy", "medium"])
def test_reference_matches_brute_force(level: Level) -> None:
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


def test_formatting_is_lenient_and_the_last_answer_counts() -> None:
    instance = make(0, "medium")
    solution = reference(0, "medium")
    ids = json.loads(solution.answer)
    ref = {"task": "set_cover", "instance": instance, "value": solution.value, "optimal": True}
    for text in (
        "(" + ", ".join(map(str, ids)) + ")",
        f"`{solution.answer}`.",
        ", ".join(map(str, reversed(ids))),
    ):
        assert VERIFIER(f"Answer: {text}", ref).reward == 1.0, text
    assert VERIFIER(f"Answer: Impossible\nNo wait.\nAnswer: {solution.answer}", ref).reward == 1.0


@pytest.mark.parametrize(
    "response",
    [
        "The subsets 0 and 3 cover everything.",
        "Answer:",
        "Answer: [a, b]",
        "Answer: [[1], [2]]",
        "Answer: {'x': 1}",
        "Answer: ['0', '1']",
        "Answer: [0.5]",
        "Answer: [True]",
        "Answer: []",
        "Answer: [999]",
        "Answer: [-1]",
        "Answer: It is impossible to say",
        "Answer: [" + ", ".join(["1"] * 100_000) + "]",
        "Answer: " + "[" * 5000 + "]" * 5000,
        "Answer: " + "{" * 5000,
    ],
)
def test_malformed_answers_are_invalid_and_never_raise(response: str) -> None:
    instance = make(0, "bench")
    ref = {"task": "set_cover", "instance": instance, "value": 5, "optimal": True}
    result = VERIFIER(response, ref)
    assert result.status == "invalid", result
    assert result.reward == 0.0
    assert result.detail


@pytest.mark.parametrize("level", LEVELS)
def test_greedy_is_always_feasible(level: Level) -> None:
    for seed in SEEDS:
        instance = make(seed, level)
        solution = reference(seed, level)
        result = score(instance, TASK.greedy(instance), solution.value)
        assert result.status == "ok", result
        assert result.components["feasible"] == 1.0
        assert result.reward is not None
        assert 0 < result.reward <= 1.0


def test_example_is_correct() -> None:
    solution = TASK.solve(TASK.example_input, BUDGET)
    assert solution.optimal
    assert CHECK.evaluate(TASK.example_input, TASK.example_output) == solution.value
    assert brute_force(TASK.example_input) == solution.value
