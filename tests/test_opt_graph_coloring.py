"""OPT-BENCH graph colouring (GCP-D): generator, exact solver, greedy baseline and strict check."""

from __future__ import annotations

import json
import random
from functools import cache
from itertools import product
from typing import Any

import pytest

from environments.opt.references import ON_DEMAND_BUDGET
from environments.opt.task import LEVELS, Instance, Level, Solution
from environments.opt.tasks.graph_coloring import TASK, planted
from verifiers.opt import VERIFIER
from verifiers.score import Score

SEEDS = range(40)
# (vertices, planted colours) per level, as the original generator draws them.
SIZES: dict[Level, tuple[tuple[int, int], tuple[int, int]]] = {
    "easy": ((8, 12), (3, 4)),
    "medium": ((15, 22), (4, 6)),
    "hard": ((25, 32), (6, 8)),
    "bench": ((32, 40), (6, 8)),
}


def _generate(seed: int, level: Level) -> Instance:
    return TASK.generate(random.Random(seed), level)


@cache
def _solved(seed: int, level: Level) -> tuple[Instance, Solution]:
    instance = _generate(seed, level)
    return instance, TASK.solve(instance, ON_DEMAND_BUDGET)


def _score(instance: Instance, answer: str, value: float = 3.0) -> Score:
    reference = {"task": "graph_coloring", "instance": instance, "value": value, "optimal": True}
    return VERIFIER(f"Reasoning.\nAnswer: {answer}", reference)


def _edges(instance: Instance) -> set[tuple[int, int]]:
    return {(int(u), v) for u, row in instance.items() for v in row if int(u) < v}


# A triangle 0-1-2 with a pendant vertex 3: chromatic number 3.
TRIANGLE: dict[str, Any] = {"0": [1, 2], "1": [0, 2], "2": [0, 1, 3], "3": [2]}

# --- generation ------------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_generation_is_byte_identical_and_varies(level: Level) -> None:
    dumps = [json.dumps(_generate(seed, level)) for seed in SEEDS]
    assert dumps == [json.dumps(_generate(seed, level)) for seed in SEEDS]
    # Different seeds give different graphs (a constant generator would pass the line above).
    assert len(set(dumps)) == len(dumps)


@pytest.mark.parametrize("level", LEVELS)
def test_sizes_and_planted_structure(level: Level) -> None:
    (n_lo, n_hi), (k_lo, k_hi) = SIZES[level]
    for seed in SEEDS:
        instance, colouring = planted(random.Random(seed), level)
        assert instance == _generate(seed, level)
        assert n_lo <= len(instance) <= n_hi
        assert list(instance) == [str(v) for v in range(len(instance))]  # string keys, in order
        assert 1 <= max(colouring) <= k_hi and len(colouring) == len(instance)
        for u, row in instance.items():
            assert row == sorted(set(row)) and int(u) not in row
            for v in row:
                assert int(u) in instance[str(v)]  # undirected
                assert colouring[int(u)] != colouring[v]  # edges only between planted classes
    # The planted colour count is drawn from the level's range (seen over the seeds).
    drawn = {max(planted(random.Random(seed), level)[1]) for seed in SEEDS}
    assert drawn <= set(range(k_lo, k_hi + 1)) and len(drawn) > 1


# --- exact references ------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_reference_is_feasible_optimal_and_within_the_planted_colours(level: Level) -> None:
    for seed in range(12):
        instance, solution = _solved(seed, level)
        assert solution.optimal, (level, seed)
        assert TASK.check.evaluate(instance, solution.answer) == solution.value
        # The planted colouring is feasible, so the optimum uses at most its colours.
        assert solution.value <= max(planted(random.Random(seed), level)[1])
        score = _score(instance, solution.answer, solution.value)
        assert (score.status, score.reward) == ("ok", 1.0), score


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


def test_bench_solve_times_stay_small() -> None:
    # Measured: about 0.02 s per bench instance. A generous bound still catches a model that
    # lost its symmetry breaking (minutes, or unproven).
    for seed in range(5):
        _, solution = _solved(seed, "bench")
        assert solution.optimal


# --- the check -------------------------------------------------------------------------------


def test_a_proper_colouring_is_valued_by_its_distinct_colours() -> None:
    score = _score(TRIANGLE, "[1, 2, 3, 1]")
    assert (score.status, score.reward, score.components["objective"]) == ("ok", 1.0, 3.0)
    # Large or gappy colour numbers are allowed; only how many distinct ones counts.
    assert _score(TRIANGLE, "[7, 100, 3, 7]").components["objective"] == 3.0
    # Every vertex its own colour is feasible but poor: ratio 3/4.
    assert _score(TRIANGLE, "[1, 2, 3, 4]").reward == pytest.approx(0.75)
    assert _score(TRIANGLE, "1 -> 2 -> 3 -> 1").reward == 1.0


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("[1, 1, 2, 3]", "adjacent vertices 0 and 1 share colour 1"),
        ("[1, 2, 3, 3]", "adjacent vertices 2 and 3 share colour 3"),
        ("[1, 1, 1, 1]", "share colour 1"),
    ],
)
def test_monochrome_edges_are_infeasible(answer: str, reason: str) -> None:
    score = _score(TRIANGLE, answer)
    assert (score.status, score.reward, score.components["feasible"]) == ("ok", 0.0, 0.0)
    assert reason in score.detail


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("[1, 2, 3]", "one colour for each of the 4 vertices, got 3"),
        ("[1, 2, 3, 1, 2]", "got 5"),
        ("[0, 1, 2, 0]", "colours are positive"),
        ("[-1, 2, 3, -1]", "colours are positive"),
        ("[1.0, 2.0, 3.0, 1.0]", "not an integer"),
        ("[True, False, True, True]", "not an integer"),
        ("['red', 'blue', 'green', 'red']", "not an integer"),
        ("{0: 1, 1: 2, 2: 3, 3: 1}", "list of integers"),
        ("[]", "no colour given"),
        ("three colours", "cannot read"),
    ],
)
def test_unreadable_colourings_are_invalid(answer: str, reason: str) -> None:
    score = _score(TRIANGLE, answer)
    assert (score.status, score.reward) == ("invalid", 0.0)
    assert reason in score.detail


@pytest.mark.parametrize(
    "response",
    [
        "I colour it with three colours.",
        "Answer: " + ", ".join(["1"] * 100_000),
        "Answer: " + "[" * 5000 + "]" * 5000,
        "Answer: " + "(" * 5000 + ")" * 5000,
        "Answer: [[1], [2], [3], [1]]",
        "Answer: [1, 2, 3, " + "9" * 5000 + "]",
    ],
)
def test_malformed_responses_are_invalid_and_never_raise(response: str) -> None:
    instance, solution = _solved(0, "medium")
    reference = {"task": "graph_coloring", "instance": instance, "value": solution.value}
    score = VERIFIER(response, {**reference, "optimal": True})
    assert (score.status, score.reward) == ("invalid", 0.0)


@pytest.mark.parametrize("level", LEVELS)
def test_greedy_baseline_is_feasible(level: Level) -> None:
    for seed in range(10):
        instance, solution = _solved(seed, level)
        score = _score(instance, TASK.greedy(instance), solution.value)
        assert score.status == "ok" and score.components["feasible"] == 1.0, score
        assert score.reward is not None and 0.0 < score.reward <= 1.0


def test_the_example_is_correct() -> None:
    assert TASK.check.evaluate(TASK.example_input, TASK.example_output) == 3.0
    assert TASK.solve(TASK.example_input, ON_DEMAND_BUDGET).value == 3.0
