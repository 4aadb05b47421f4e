"""OPT-BENCH hamiltonian_cycle: seeded planted generator, CP-SAT longest cycle, hardened check."""

from __future__ import annotations

from functools import partial

import pytest

from environments.opt.references import ON_DEMAND_BUDGET
from environments.opt.task import LEVELS, Instance, Level
from environments.opt.tasks.hamiltonian_cycle import _LEVELS, TASK, plant
from tests import opt_support as opt
from tests.opt_support import assert_infeasible
from verifiers.opt.hamiltonian_cycle import CHECK
from verifiers.score import Score

SEEDS = range(30)
BENCH_SEEDS = range(8)
make = partial(opt.planted, plant)  # (seed, level) -> (instance, planted cycle)


def score(instance: Instance, answer: str) -> Score:
    """The verifier's score of ``Answer: <answer>`` against this instance's optimum (n + 1)."""
    return opt.score(TASK.name, instance, answer, len(instance) + 1)


def edge_set(instance: Instance) -> set[tuple[int, int]]:
    """Every edge as (low, high)."""
    return {
        (min(u, v), max(u, v)) for key, row in instance.items() for u in [int(key)] for v in row
    }


@pytest.mark.parametrize("level", LEVELS)
def test_sizes_format_and_planted_cycle(level: Level) -> None:
    (n_lo, n_hi), density = _LEVELS[level]
    extra, pairs = 0, 0
    for seed in SEEDS:
        instance, cycle = make(seed, level)
        # ``generate`` is ``plant`` without the cycle: the same draws.
        assert instance == opt.instance(TASK.name, seed, level)
        n = len(instance)
        assert n_lo <= n <= n_hi
        # String keys 0..n-1 mapping to sorted integer neighbour lists, undirected, no loops.
        assert all(isinstance(row, list) for row in instance.values())
        opt.assert_simple_graph(instance)
        # The planted cycle passes through every node once and is valid: the optimum n + 1.
        assert sorted(cycle[:-1]) == list(range(n)) and cycle[0] == cycle[-1]
        assert CHECK.evaluate(instance, str(cycle)) == n + 1
        edges = edge_set(instance)
        extra += len(edges) - n
        pairs += n * (n - 1) // 2 - n
    # The extra edges come with the level's probability (600+ pairs: well within 0.05).
    assert abs(extra / pairs - density) < 0.05


@pytest.mark.parametrize("level", LEVELS)
def test_the_planted_optimum_is_recovered(level: Level) -> None:
    # Proven, feasible and valued right: tests/test_opt_tasks.py, on the same seeds.
    for seed, instance, solution in opt.solved(TASK.name, level):
        # No simple cycle is longer than n + 1, which the planted cycle reaches.
        assert solution.value == len(instance) + 1, (level, seed)


def test_bench_references_are_proven_quickly_and_reproducibly() -> None:
    times = opt.assert_solved_quickly_and_reproducibly(TASK.name, "bench", BENCH_SEEDS, 10.0)
    print(
        f"hamiltonian_cycle bench solve: mean {sum(times) / len(times):.3f}s, max {max(times):.3f}s"
    )


def test_a_graph_without_a_hamiltonian_cycle_gets_its_longest_cycle() -> None:
    # Two triangles sharing node 2 (a bowtie): the longest simple cycle has 3 nodes.
    bowtie = {"0": [1, 2], "1": [0, 2], "2": [0, 1, 3, 4], "3": [2, 4], "4": [2, 3]}
    solution = TASK.solve(bowtie, ON_DEMAND_BUDGET)
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


def test_both_graph_shapes_read_alike() -> None:
    # The example's optimum: tests/test_opt_tasks.py.
    instance, cycle = make(2, "hard")
    as_dicts = {key: {str(v): 1 for v in row} for key, row in instance.items()}
    assert CHECK.evaluate(as_dicts, str(cycle)) == CHECK.evaluate(instance, str(cycle))


def test_a_step_needs_the_edge_as_both_ends_list_it() -> None:
    # A caller's instance listing each edge at one end only: 0-1-2-3-0 is not a cycle of it.
    one_sided = {"0": [1], "1": [2], "2": [3], "3": [0]}
    for answer in ("[0, 1, 2, 3, 0]", "[0, 3, 2, 1, 0]"):
        result = score(one_sided, answer)
        assert (result.status, result.reward, result.components["feasible"]) == ("ok", 0.0, 0.0)
        assert "are not adjacent" in result.detail
    both = {"0": [1, 3], "1": [0, 2], "2": [1, 3], "3": [2, 0]}
    assert score(both, "[0, 1, 2, 3, 0]").reward == 1.0
    assert score(both, "[0, 3, 2, 1, 0]").reward == 1.0
