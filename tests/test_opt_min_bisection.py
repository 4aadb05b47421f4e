"""OPT-BENCH balanced minimum bisection (minimum-cut): generator, exact solver, greedy, check."""

from __future__ import annotations

import random
from itertools import combinations
from typing import Any

import pytest

from environments.opt.references import ON_DEMAND_BUDGET
from environments.opt.task import LEVELS, Instance, Level
from environments.opt.tasks.min_bisection import TASK
from tests import opt_support as opt
from tests.opt_support import assert_infeasible, assert_invalid, score
from verifiers.score import Score

SEEDS = range(30)
# Nodes per level, as the original's "hell mode" generator sets them.
SIZES: dict[Level, int] = {"easy": 42, "medium": 45, "hard": 45, "bench": 50}


def _score(instance: Instance, answer: str, value: float = 3.0) -> Score:
    """The verifier's score of ``answer`` against ``value`` (SQUARE's optimum by default)."""
    return score(TASK.name, instance, answer, value)


def _cut(instance: Instance, first: set[int]) -> int:
    return sum(
        weight
        for u, row in instance.items()
        for v, weight in row.items()
        if int(u) < int(v) and (int(u) in first) != (int(v) in first)
    )


# A square 0-1-3-2-0 with heavy 0-1 and 2-3: the best bisection is {0, 1} | {2, 3}, cut 3.
SQUARE: dict[str, Any] = {
    "0": {"1": 5, "2": 1},
    "1": {"0": 5, "3": 2},
    "2": {"0": 1, "3": 4},
    "3": {"1": 2, "2": 4},
}
# Five nodes on a path 0-1-2-3-4 (unit weights): parts of 2 and 3 nodes.
PATH: dict[str, Any] = {
    "0": {"1": 1},
    "1": {"0": 1, "2": 1},
    "2": {"1": 1, "3": 1},
    "3": {"2": 1, "4": 1},
    "4": {"3": 1},
}

# --- generation ------------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_sizes_and_hell_mode_structure(level: Level) -> None:
    count = SIZES[level]
    third = count // 3
    for seed in SEEDS:
        instance = opt.instance(TASK.name, seed, level)
        assert list(instance) == [str(v) for v in range(count)]  # string keys, every node
        for u, row in instance.items():
            assert u not in row
            for v, weight in row.items():
                assert instance[v][u] == weight and 1 <= weight <= 10  # symmetric, in range
        # Communities B and C are dense (pairs joined with probability 0.9).
        for group in (range(third, 2 * third), range(2 * third, count)):
            pairs = list(combinations(group, 2))
            joined = sum(str(v) in instance[str(u)] for u, v in pairs)
            assert joined >= 0.7 * len(pairs)
        # The decoy bridge: B-C edges of weight 3-5, heavier together than the light true cut.
        bridge = [
            w
            for u in range(third, 2 * third)
            for v, w in instance[str(u)].items()
            if int(v) >= 2 * third and 3 <= w <= 5
        ]
        assert len(bridge) >= 2
        # Traitors: only they tie A to B and C with weights 9-10 (noise weighs at most 6, the
        # true cut at most 2); there are max(1, |A|//4) of them.
        traitors = {
            u
            for u in range(third)
            for v, w in instance[str(u)].items()
            if int(v) >= third and w >= 9
        }
        assert len(traitors) == max(1, third // 4)


# --- exact references ------------------------------------------------------------------------


def test_bench_references_are_proven_quickly() -> None:
    # Proven, feasible, valued right and no worse than greedy at every level:
    # tests/test_opt_tasks.py. Measured over the 100 benchmark seeds: 1.8 s mean, 4.1 s max,
    # all proven. The generous bound catches a model that lost its group tables (the plain model
    # proves none of them in a minute).
    for seed, _, solution in opt.solved(TASK.name, "bench"):
        assert solution.optimal, seed
        assert opt.solve_seconds(TASK.name, seed, "bench") < 30


def _bisection_by_enumeration(instance: Instance) -> int:
    count = len(instance)
    return min(
        _cut(instance, set(first))
        for size in {count // 2, count - count // 2}
        for first in combinations(range(count), size)
    )


def test_solver_matches_enumeration_on_small_graphs() -> None:
    # Small graphs with a dense cluster, so the solver's group tables take part.
    rng = random.Random(7)
    for _ in range(12):
        count = rng.randint(6, 11)
        rows: dict[int, dict[int, int]] = {v: {} for v in range(count)}
        for u, v in combinations(range(count), 2):
            dense = u < count // 2 and v < count // 2
            if rng.random() < (0.9 if dense else 0.3):
                rows[u][v] = rows[v][u] = rng.randint(5, 9) if dense else rng.randint(1, 4)
        instance = {str(v): {str(u): w for u, w in sorted(rows[v].items())} for v in rows}
        solution = TASK.solve(instance, ON_DEMAND_BUDGET)
        assert solution.optimal
        assert solution.value == _bisection_by_enumeration(instance), instance
        assert TASK.check.evaluate(instance, solution.answer) == solution.value


# --- the check -------------------------------------------------------------------------------


def test_a_balanced_bisection_is_valued_by_its_cut() -> None:
    result = _score(SQUARE, "[[0, 1], [2, 3]]")
    assert (result.status, result.reward, result.metrics["objective"]) == ("ok", 1.0, 3.0)
    assert _score(SQUARE, "[[2, 3], [1, 0]]").metrics["objective"] == 3.0  # order is free
    assert _score(SQUARE, "([0, 1], [2, 3])").reward == 1.0
    assert _score(SQUARE, "[0, 1], [2, 3]").reward == 1.0  # outer brackets left out
    assert _score(SQUARE, "[[0, 3], [1, 2]]").reward == pytest.approx(3 / 12)
    # Odd node count: parts may differ by one, in either order.
    for answer in ("[[0, 1], [2, 3, 4]]", "[[0, 1, 2], [3, 4]]"):
        assert _score(PATH, answer, 1.0).metrics["objective"] == 1.0


@pytest.mark.parametrize(
    ("instance", "answer", "reason"),
    [
        (SQUARE, "[[0, 1], [1, 2]]", "node 1 appears more than once"),  # a node in both parts
        (SQUARE, "[[0, 0], [2, 3]]", "node 0 appears more than once"),  # a repeat in a part
        (SQUARE, "[[0, 1], [2]]", "node 3 is in neither part"),
        (SQUARE, "[[0], [1, 2, 3]]", "may differ by at most 0"),
        (SQUARE, "[[0, 1, 2, 3], []]", "may differ by at most 0"),
        (SQUARE, "[[], []]", "node 0 is in neither part"),
        (PATH, "[[0], [1, 2, 3, 4]]", "may differ by at most 1"),
    ],
)
def test_broken_bisections_are_infeasible(instance: Instance, answer: str, reason: str) -> None:
    assert_infeasible(_score(instance, answer), reason)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("[[0, 1], [2, 3], []]", "exactly two lists"),
        ("[[0, 1, 2, 3]]", "exactly two lists"),
        ("[0, 1, 2, 3]", "exactly two lists"),
        ("[0, 1]", "the first part is not a list of node ids"),
        ("[]", "exactly two lists"),
        ("[[0, 1], [2, 4]]", "node 4 does not exist"),
        ("[[0, -1], [2, 3]]", "cannot read"),
        ("[{0, 1}, {2, 3}]", "cannot read"),  # a set would hide repeats
        ("[[0, 1.0], [2, 3]]", "cannot read"),
        ("[['0', '1'], ['2', '3']]", "cannot read"),
        ("[[True, False], [2, 3]]", "cannot read"),
        ("{0: [0, 1], 1: [2, 3]}", "cannot read"),
        ("[0, 1], [2, 3] is best", "unexpected text after the answer"),
        ("[[0, 1], [2, 3]]*2", "unexpected text after the answer"),
        ("<[[0, 1], [2, 3]]>", "cannot read"),
        ("the first two and the last two", "cannot read"),
    ],
)
def test_unreadable_bisections_are_invalid(answer: str, reason: str) -> None:
    assert_invalid(_score(SQUARE, answer), reason)


@pytest.mark.parametrize(
    "answer",
    [
        # Bisection-shaped malformations (the generic ones: tests/test_opt_tasks.py).
        "[[" + ", ".join(map(str, range(100_000))) + "], []]",
        "[[0, 1], [2, " + "9" * 5000 + "]]",
        "[0], " * 3000,
    ],
)
def test_malformed_bisections_are_invalid_and_never_raise(answer: str) -> None:
    assert_invalid(_score(SQUARE, answer))


def test_greedy_bisections_are_feasible_beyond_the_solved_seeds() -> None:
    # Scored against proven optima on the solved seeds: tests/test_opt_tasks.py.
    for level in LEVELS:
        for seed in range(5):
            instance = opt.instance(TASK.name, seed, level)
            result = _score(instance, TASK.greedy(instance), 300.0)  # only feasibility here
            assert result.status == "ok" and result.components["feasible"] == 1.0, result
