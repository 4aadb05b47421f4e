"""OPT-BENCH graph colouring (GCP-D): generator, exact solver, greedy baseline and strict check."""

from __future__ import annotations

import random
from functools import partial
from itertools import product
from typing import Any

import pytest

from environments.opt.references import ON_DEMAND_BUDGET
from environments.opt.task import LEVELS, Instance, Level
from environments.opt.tasks.graph_coloring import TASK, planted
from tests import opt_support as opt
from tests.opt_support import assert_infeasible, assert_invalid, score

SEEDS = range(40)
# (vertices, planted colours) per level, as the original generator draws them.
SIZES: dict[Level, tuple[tuple[int, int], tuple[int, int]]] = {
    "easy": ((8, 12), (3, 4)),
    "medium": ((15, 22), (4, 6)),
    "hard": ((25, 32), (6, 8)),
    "bench": ((32, 40), (6, 8)),
}
_score = partial(score, TASK.name)


def _edges(instance: Instance) -> set[tuple[int, int]]:
    return {(int(u), v) for u, row in instance.items() for v in row if int(u) < v}


# A triangle 0-1-2 with a pendant vertex 3: chromatic number 3.
TRIANGLE: dict[str, Any] = {"0": [1, 2], "1": [0, 2], "2": [0, 1, 3], "3": [2]}

# --- generation ------------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_sizes_and_planted_structure(level: Level) -> None:
    (n_lo, n_hi), (k_lo, k_hi) = SIZES[level]
    for seed in SEEDS:
        instance, colouring = planted(opt.rng(seed), level)
        assert instance == opt.instance(TASK.name, seed, level)
        assert n_lo <= len(instance) <= n_hi
        # String keys 0..n-1 mapping to sorted integer neighbour lists, undirected, no loops.
        assert all(isinstance(row, list) for row in instance.values())
        opt.assert_simple_graph(instance)
        assert 1 <= max(colouring) <= k_hi and len(colouring) == len(instance)
        for u, row in instance.items():
            # Edges only between planted classes.
            assert all(colouring[int(u)] != colouring[v] for v in row)
    # The planted colour count is drawn from the level's range (seen over the seeds).
    drawn = {max(planted(opt.rng(seed), level)[1]) for seed in SEEDS}
    assert drawn <= set(range(k_lo, k_hi + 1)) and len(drawn) > 1


# --- exact references ------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_the_optimum_uses_at_most_the_planted_colours(level: Level) -> None:
    # Proven, feasible and valued right: tests/test_opt_tasks.py, on the same seeds.
    for seed, _, solution in opt.solved(TASK.name, level):
        # The planted colouring is feasible, so the optimum uses at most its colours.
        assert solution.value <= max(planted(opt.rng(seed), level)[1]), (level, seed)


def _chromatic_by_enumeration(instance: Instance) -> int:
    edges = _edges(instance)
    for colours in range(1, len(instance) + 1):
        for colouring in product(range(colours), repeat=len(instance)):
            if all(colouring[u] != colouring[v] for u, v in edges):
                return colours
    raise AssertionError("unreachable: n colours always suffice")


def test_solver_matches_enumeration_on_small_random_graphs() -> None:
    rng = random.Random(2024)
    for _ in range(25):
        count = rng.randint(4, 7)
        rows: dict[int, set[int]] = {v: set() for v in range(count)}
        for u in range(count):
            for v in range(u + 1, count):
                if rng.random() < 0.5:
                    rows[u].add(v)
                    rows[v].add(u)
        instance = {str(v): sorted(rows[v]) for v in range(count)}
        solution = TASK.solve(instance, ON_DEMAND_BUDGET)
        assert solution.optimal
        assert solution.value == _chromatic_by_enumeration(instance), instance
        assert TASK.check.evaluate(instance, solution.answer) == solution.value


# --- the check -------------------------------------------------------------------------------


def test_a_proper_colouring_is_valued_by_its_distinct_colours() -> None:
    result = _score(TRIANGLE, "[1, 2, 3, 1]", 3.0)
    assert (result.status, result.reward, result.metrics["objective"]) == ("ok", 1.0, 3.0)
    # Large or gappy colour numbers are allowed; only how many distinct ones counts.
    assert _score(TRIANGLE, "[7, 100, 3, 7]", 3.0).metrics["objective"] == 3.0
    # Every vertex its own colour is feasible but poor: ratio 3/4.
    assert _score(TRIANGLE, "[1, 2, 3, 4]", 3.0).reward == pytest.approx(0.75)
    assert _score(TRIANGLE, "1 -> 2 -> 3 -> 1", 3.0).reward == 1.0


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("[1, 1, 2, 3]", "adjacent vertices 0 and 1 share colour 1"),
        ("[1, 2, 3, 3]", "adjacent vertices 2 and 3 share colour 3"),
        ("[1, 1, 1, 1]", "share colour 1"),
    ],
)
def test_monochrome_edges_are_infeasible(answer: str, reason: str) -> None:
    assert_infeasible(_score(TRIANGLE, answer, 3.0), reason)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("[1, 2, 3]", "one colour for each of the 4 vertices, got 3"),
        ("[1, 2, 3, 1, 2]", "got 5"),
        ("[0, 1, 2, 0]", "colours are positive"),
        ("[-1, 2, 3, -1]", "cannot read"),
        ("[1.0, 2.0, 3.0, 1.0]", "cannot read"),
        ("[True, False, True, True]", "cannot read"),
        ("['red', 'blue', 'green', 'red']", "cannot read"),
        ("{0: 1, 1: 2, 2: 3, 3: 1}", "cannot read"),
        ("[]", "no colour given"),
        ("three colours", "cannot read"),
        # Nested where one colour per vertex is due, with the right count (generic malformed
        # answers: tests/test_opt_tasks.py).
        ("[[1], [2], [3], [1]]", "[1] is not an integer"),
        ("[1, 2, 3, " + "9" * 5000 + "]", "cannot read"),
    ],
)
def test_unreadable_colourings_are_invalid(answer: str, reason: str) -> None:
    assert_invalid(_score(TRIANGLE, answer, 3.0), reason)
