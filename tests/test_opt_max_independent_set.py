"""OPT-BENCH max_independent_set: seeded planted generator, CP-SAT optimum, hardened check."""

from __future__ import annotations

from functools import partial

import pytest

from environments.opt.task import LEVELS, Instance, Level
from environments.opt.tasks.max_independent_set import _LEVELS, TASK, plant
from tests import opt_support as opt
from tests.opt_support import assert_infeasible, assert_invalid
from verifiers.opt.max_independent_set import CHECK

SEEDS = range(30)
BENCH_SEEDS = range(8)
make = partial(opt.planted, plant)  # (seed, level) -> (instance, planted set)
score = partial(opt.score, TASK.name)  # (instance, answer, value) -> the verifier's score


def adjacency(instance: Instance) -> dict[int, set[int]]:
    """The graph as integer adjacency sets."""
    return {int(u): {int(v) for v in row} for u, row in instance.items()}


def independence_number(graph: dict[int, set[int]]) -> int:
    """The exact maximum independent set size by plain branching, independent of CP-SAT: a
    vertex of degree 0 or 1 is in some maximum set; otherwise a vertex of maximum degree is
    either left out or taken with its neighbours removed."""
    if not graph:
        return 0

    def without(gone: set[int]) -> dict[int, set[int]]:
        return {u: row - gone for u, row in graph.items() if u not in gone}

    low = min(graph, key=lambda u: len(graph[u]))
    if len(graph[low]) <= 1:
        return 1 + independence_number(without({low} | graph[low]))
    high = max(graph, key=lambda u: len(graph[u]))
    return max(
        independence_number(without({high})),
        1 + independence_number(without({high} | graph[high])),
    )


@pytest.mark.parametrize("level", LEVELS)
def test_sizes_format_and_planted_set(level: Level) -> None:
    (n_lo, n_hi), (s_lo, s_hi) = _LEVELS[level]
    for seed in SEEDS:
        instance, planted = make(seed, level)
        # ``generate`` is ``plant`` without the set: the same draws.
        assert instance == opt.instance(TASK.name, seed, level)
        n = len(instance)
        assert n_lo <= n <= n_hi
        assert s_lo <= len(planted) <= s_hi
        # String keys 0..n-1 mapping to dicts {"neighbour": 1}, undirected, no loops.
        assert all(isinstance(row, dict) for row in instance.values())
        opt.assert_simple_graph(instance)
        # The planted set is independent, and every other vertex touches it (so no vertex
        # can simply be added to it).
        assert CHECK.evaluate(instance, str(planted)) == len(planted)
        graph = adjacency(instance)
        assert all(graph[u] & set(planted) for u in range(n) if u not in planted)


@pytest.mark.parametrize("level", LEVELS)
def test_reference_recovers_the_planted_set_and_matches_a_branching_search(level: Level) -> None:
    # Proven, feasible and valued right: tests/test_opt_tasks.py, on the same seeds.
    for seed, instance, solution in opt.solved(TASK.name, level):
        # CP-SAT's claim holds against a branching search that shares no code with it, and
        # the planted set is recovered or beaten.
        assert solution.value == independence_number(adjacency(instance)), (level, seed)
        assert solution.value >= len(make(seed, level)[1])


def test_bench_references_are_proven_quickly_and_reproducibly() -> None:
    times = opt.assert_solved_quickly_and_reproducibly(TASK.name, "bench", BENCH_SEEDS, 10.0)
    mean = sum(times) / len(times)
    print(f"max_independent_set bench solve: mean {mean:.3f}s, max {max(times):.3f}s")


def test_the_original_loopholes_score_zero() -> None:
    instance, planted = make(0, "medium")
    value = opt.solution(TASK.name, 0, "medium").value
    v = planted[0]
    # Repeats counted in the original: [v, v, v] was worth 3.
    assert_infeasible(score(instance, f"[{v}, {v}, {v}]", value), f"vertex {v} appears more")
    assert_infeasible(score(instance, str(planted + planted), value), "appears more than once")
    # The original ran eval() on the answer; here code is never run and reads as invalid.
    for code in ("[len('abc'), 0]", "__import__('os').getpid()", "[x for x in range(3)]"):
        assert_invalid(score(instance, code, value))


def test_hand_made_infeasible_sets_score_zero() -> None:
    instance, planted = make(4, "hard")
    value = opt.solution(TASK.name, 4, "hard").value
    graph = adjacency(instance)
    u = next(u for u in range(len(instance)) if u not in planted)
    w = min(graph[u] & set(planted))
    # The planted set plus a vertex that touches it.
    assert_infeasible(score(instance, str([*planted, u]), value), "are adjacent")
    # Two ends of one edge.
    assert_infeasible(score(instance, f"[{u}, {w}]", value), f"vertices {u} and {w} are adjacent")
    # Every vertex.
    assert_infeasible(score(instance, str(list(range(len(instance)))), value), "are adjacent")


def test_smaller_sets_score_their_share() -> None:
    instance, planted = make(1, "easy")
    value = opt.solution(TASK.name, 1, "easy").value
    result = score(instance, "**" + ", ".join(str(v) for v in planted[:2]) + ",**", value)
    assert result.status == "ok" and result.reward == pytest.approx(2 / value), result
    # Bold around each id is decoration inside the answer, which is never stripped.
    bold_ids = score(instance, " ".join(f"**{v}**," for v in planted[:2]), value)
    assert bold_ids.status == "invalid", bold_ids


def test_both_graph_shapes_read_alike() -> None:
    # The example's optimum: tests/test_opt_tasks.py.
    instance, planted = make(2, "hard")
    as_lists = {key: [int(v) for v in row] for key, row in instance.items()}
    assert CHECK.evaluate(as_lists, str(planted)) == CHECK.evaluate(instance, str(planted))
    u = next(u for u in range(len(instance)) if u not in planted)
    with pytest.raises(ValueError, match="are adjacent"):
        CHECK.evaluate(as_lists, str([*planted, u]))
