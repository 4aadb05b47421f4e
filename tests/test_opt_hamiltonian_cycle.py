"""OPT-BENCH hamiltonian_cycle: seeded planted generator, CP-SAT longest cycle, hardened check."""

from __future__ import annotations

import json
import random
import time

import pytest

from environments.opt.task import LEVELS, Instance, Level
from environments.opt.tasks.hamiltonian_cycle import _LEVELS, TASK, plant
from verifiers.opt import VERIFIER
from verifiers.opt.hamiltonian_cycle import CHECK
from verifiers.score import Score

SEEDS = range(30)
BENCH_SEEDS = range(8)
BUDGET = 60.0


def make(seed: int, level: Level) -> tuple[Instance, list[int]]:
    """The instance and planted cycle of ``seed`` at ``level``."""
    return plant(random.Random(seed), level)


def score(instance: Instance, answer: str) -> Score:
    """The verifier's score of ``Answer: <answer>`` against this instance's optimum (n + 1)."""
    reference = {
        "task": "hamiltonian_cycle",
        "instance": instance,
        "value": len(instance) + 1,
        "optimal": True,
    }
    return VERIFIER(f"Reasoning.\nAnswer: {answer}", reference)


def assert_infeasible(result: Score, reason: str) -> None:
    """Reward 0 with status ok and the reason in the detail (a real zero, not a parse error)."""
    assert result.status == "ok", result
    assert result.reward == 0.0, result
    assert result.components["feasible"] == 0.0
    assert result.detail.startswith("infeasible:"), result.detail
    assert reason in result.detail, result.detail


def edge_set(instance: Instance) -> set[tuple[int, int]]:
    """Every edge as (low, high)."""
    return {
        (min(u, v), max(u, v)) for key, row in instance.items() for u in [int(key)] for v in row
    }


@pytest.mark.parametrize("level", LEVELS)
def test_generation_is_byte_identical_per_seed_and_varied(level: Level) -> None:
    dumps = []
    for seed in SEEDS:
        # Reseeding the global generator in between shows only ``rng`` is drawn from.
        random.seed(1)
        first = json.dumps(TASK.generate(random.Random(seed), level))
        random.seed(2)
        second = json.dumps(TASK.generate(random.Random(seed), level))
        assert first == second
        assert first == json.dumps(make(seed, level)[0])
        dumps.append(first)
    assert len(set(dumps)) == len(dumps)


@pytest.mark.parametrize("level", LEVELS)
def test_sizes_format_and_planted_cycle(level: Level) -> None:
    (n_lo, n_hi), density = _LEVELS[level]
    extra, pairs = 0, 0
    for seed in SEEDS:
        instance, cycle = make(seed, level)
        n = len(instance)
        assert n_lo <= n <= n_hi
        # String keys 0..n-1 mapping to sorted integer neighbour lists, undirected, no loops.
        assert list(instance) == [str(u) for u in range(n)]
        for key, row in instance.items():
            assert all(type(v) is int for v in row) and row == sorted(set(row))
            assert int(key) not in row
            assert all(int(key) in instance[str(v)] for v in row)
        # The planted cycle passes through every node once and is valid: the optimum n + 1.
        assert sorted(cycle[:-1]) == list(range(n)) and cycle[0] == cycle[-1]
        assert CHECK.evaluate(instance, str(cycle)) == n + 1
        edges = edge_set(instance)
        extra += len(edges) - n
        pairs += n * (n - 1) // 2 - n
    # The extra edges come with the level's probability (600+ pairs: well within 0.05).
    assert abs(extra / pairs - density) < 0.05


@pytest.mark.parametrize("level", LEVELS)
def test_reference_is_a_proven_hamiltonian_cycle(level: Level) -> None:
    for seed in SEEDS[:10]:
        instance, cycle = make(seed, level)
        solution = TASK.solve(instance, BUDGET)
        assert solution.optimal
        # The planted optimum is recovered: no simple cycle is longer than n + 1.
        assert solution.value == len(cycle) == len(instance) + 1
        assert CHECK.evaluate(instance, solution.answer) == solution.value
        result = score(instance, solution.answer)
        assert (result.status, result.reward) == ("ok", 1.0), result


def test_bench_references_are_proven_quickly_and_reproducibly() -> None:
    times = []
    for seed in BENCH_SEEDS:
        instance, _ = make(seed, "bench")
        start = time.perf_counter()
        solution = TASK.solve(instance, BUDGET)
        times.append(time.perf_counter() - start)
        assert solution.optimal
        # One worker and a fixed seed: the same answer every time.
        assert TASK.solve(instance, BUDGET) == solution
    print(
        f"hamiltonian_cycle bench solve: mean {sum(times) / len(times):.3f}s, max {max(times):.3f}s"
    )
    assert max(times) < 10.0


def test_a_graph_without_a_hamiltonian_cycle_gets_its_longest_cycle() -> None:
    # Two triangles sharing node 2 (a bowtie): the longest simple cycle has 3 nodes.
    bowtie = {"0": [1, 2], "1": [0, 2], "2": [0, 1, 3, 4], "3": [2, 4], "4": [2, 3]}
    solution = TASK.solve(bowtie, BUDGET)
    assert solution.optimal and solution.value == 4
    assert CHECK.evaluate(bowtie, solution.answer) == 4


def test_the_original_loopholes_score_zero() -> None:
    instance, cycle = make(0, "medium")
    a, b = cycle[0], cycle[1]
    # [0] passed in the original with value 1, and [a, b, a] with value 3.
    assert_infeasible(score(instance, f"[{a}]"), "at least 3 distinct nodes")
    assert_infeasible(score(instance, f"[{a}, {b}, {a}]"), "at least 3 distinct nodes")
    assert_infeasible(score(instance, f"[{a}, {a}]"), "at least 3 distinct nodes")


def test_hand_made_infeasible_cycles_score_zero() -> None:
    instance, cycle = make(3, "medium")
    n = len(instance)
    edges = edge_set(instance)
    # An open path: the planted cycle without its closing repeat.
    assert_infeasible(score(instance, str(cycle[:-1])), "must end where it starts")
    # A node visited twice: the planted cycle run around one and a half times.
    assert_infeasible(score(instance, str(cycle + cycle[1:4])), "must end where it starts")
    assert_infeasible(score(instance, str([*cycle[:-1], *cycle[1:3], cycle[0]])), "appears more")
    # A step along a missing edge.
    u, v = next((u, v) for u in range(n) for v in range(u + 1, n) if (u, v) not in edges)
    w = next(w for w in range(n) if (min(v, w), max(v, w)) in edges and w != u)
    assert_infeasible(score(instance, f"[{u}, {v}, {w}, {u}]"), "are not adjacent")
    # A simple path a-b-c whose closing edge c-a is missing.
    a, b, c = next(
        (a, b, c)
        for a, b, c in ((cycle[i], cycle[i + 1], cycle[i + 2]) for i in range(n - 1))
        if (min(a, c), max(a, c)) not in edges
    )
    assert_infeasible(score(instance, f"[{a}, {b}, {c}, {a}]"), f"nodes {c} and {a} are not")


def test_shorter_cycles_and_arrow_spelling_score_their_share() -> None:
    instance, cycle = make(5, "easy")
    n = len(instance)
    edges = edge_set(instance)
    a, b, c = next(
        (a, b, c)
        for (a, b) in sorted(edges)
        for c in range(n)
        if c not in (a, b) and (min(a, c), max(a, c)) in edges and (min(b, c), max(b, c)) in edges
    )
    triangle = score(instance, f"{a} -> {b} -> {c} -> {a}")
    assert triangle.status == "ok" and triangle.reward == pytest.approx(4 / (n + 1))
    reverse = score(instance, " -> ".join(map(str, reversed(cycle))))
    assert reverse.reward == 1.0, reverse


@pytest.mark.parametrize(
    "answer",
    [
        "[a, b]",
        "[[1], [2]]",
        "{'x': 1}",
        "[1.5, 2, 1.5]",
        "[True, False, True]",
        "[]",
        "[-1, 0, 1, -1]",
        "[99, 0, 1, 99]",
        "__import__('os').system('true')",
        "[len('abc'), 0, 1]",
        "[" * 5000 + "]" * 5000,
        "[" + ", ".join(["0"] * 100_000) + "]",
    ],
)
def test_malformed_answers_are_invalid(answer: str) -> None:
    instance, _ = make(0, "easy")
    result = score(instance, answer)
    assert (result.status, result.reward) == ("invalid", 0.0), result
    assert result.detail


def test_a_response_without_an_answer_is_invalid() -> None:
    instance, cycle = make(0, "easy")
    reference = {"task": "hamiltonian_cycle", "instance": instance, "value": 1, "optimal": True}
    result = VERIFIER(f"The cycle is {cycle}.", reference)
    assert (result.status, result.reward) == ("invalid", 0.0)


@pytest.mark.parametrize("level", LEVELS)
def test_greedy_baseline_scores(level: Level) -> None:
    for seed in SEEDS[:10]:
        instance, _ = make(seed, level)
        result = score(instance, TASK.greedy(instance))
        # Every node has two neighbours here, so the greedy walk always closes a cycle.
        assert result.status == "ok" and result.reward is not None, result
        assert 0.0 < result.reward <= 1.0, result


def test_example_is_optimal_and_both_graph_shapes_read_alike() -> None:
    example = TASK.example_input
    assert CHECK.evaluate(example, TASK.example_output) == len(example) + 1
    assert TASK.solve(example, BUDGET).value == len(example) + 1
    instance, cycle = make(2, "hard")
    as_dicts = {key: {str(v): 1 for v in row} for key, row in instance.items()}
    assert CHECK.evaluate(as_dicts, str(cycle)) == CHECK.evaluate(instance, str(cycle))
