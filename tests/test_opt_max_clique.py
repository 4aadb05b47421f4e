"""OPT-BENCH max_clique: seeded planted generator (a complemented independent set), CP-SAT
optimum, hardened check."""

from __future__ import annotations

from functools import partial

import pytest

from environments.opt.references import ON_DEMAND_BUDGET
from environments.opt.task import LEVELS, Instance, Level
from environments.opt.tasks.max_clique import _LEVELS, TASK, plant
from tests import opt_support as opt
from tests.opt_support import assert_infeasible
from verifiers.opt.max_clique import CHECK

SEEDS = range(30)
BENCH_SEEDS = range(8)
make = partial(opt.planted, plant)  # (seed, level) -> (instance, planted clique)
score = partial(opt.score, TASK.name)  # (instance, answer, value) -> the verifier's score


def adjacency(instance: Instance) -> dict[int, set[int]]:
    """The graph as integer adjacency sets."""
    return {int(u): set(row) for u, row in instance.items()}


def clique_number(graph: dict[int, set[int]]) -> int:
    """The exact maximum clique size by Bron-Kerbosch with pivoting, independent of CP-SAT."""
    best = 0

    def expand(size: int, candidates: set[int], excluded: set[int]) -> None:
        nonlocal best
        if not candidates and not excluded:
            best = max(best, size)
            return
        pivot = max(candidates | excluded, key=lambda u: len(graph[u] & candidates))
        for vertex in sorted(candidates - graph[pivot]):
            expand(size + 1, candidates & graph[vertex], excluded & graph[vertex])
            candidates = candidates - {vertex}
            excluded = excluded | {vertex}

    expand(0, set(graph), set())
    return best


@pytest.mark.parametrize("level", LEVELS)
def test_sizes_format_and_planted_clique(level: Level) -> None:
    (n_lo, n_hi), (c_lo, c_hi) = _LEVELS[level]
    for seed in SEEDS:
        instance, planted = make(seed, level)
        # ``generate`` is ``plant`` without the clique: the same draws.
        assert instance == opt.instance(TASK.name, seed, level)
        n = len(instance)
        assert n_lo <= n <= n_hi
        assert min(c_lo, n) <= len(planted) <= min(c_hi, n)
        # String keys 0..n-1 mapping to sorted integer neighbour lists, undirected, no loops.
        assert all(isinstance(row, list) for row in instance.values())
        opt.assert_simple_graph(instance)
        # The planted set is a clique, and every other vertex misses one of its members (the
        # complement of "every other vertex touches the planted independent set").
        assert CHECK.evaluate(instance, str(planted)) == len(planted)
        graph = adjacency(instance)
        assert all(set(planted) - graph[u] for u in range(n) if u not in planted)


@pytest.mark.parametrize("level", LEVELS)
def test_reference_recovers_the_planted_clique_and_matches_bron_kerbosch(level: Level) -> None:
    # Proven, feasible and valued right: tests/test_opt_tasks.py, on the same seeds.
    for seed, instance, solution in opt.solved(TASK.name, level):
        # CP-SAT's claim holds against Bron-Kerbosch, which shares no code with it, and the
        # planted clique is recovered or beaten.
        assert solution.value == clique_number(adjacency(instance)), (level, seed)
        assert solution.value >= len(make(seed, level)[1])


def test_bench_references_are_proven_quickly_and_reproducibly() -> None:
    times = opt.assert_solved_quickly_and_reproducibly(TASK.name, "bench", BENCH_SEEDS, 10.0)
    print(f"max_clique bench solve: mean {sum(times) / len(times):.3f}s, max {max(times):.3f}s")


def test_repeated_and_non_adjacent_vertices_score_zero() -> None:
    instance, planted = make(0, "bench")
    value = opt.solution(TASK.name, 0, "bench").value
    graph = adjacency(instance)
    v = planted[0]
    # Repeats would inflate the size, as they did in the original's independent-set check.
    assert_infeasible(score(instance, f"[{v}, {v}, {v}]", value), f"vertex {v} appears more")
    assert_infeasible(score(instance, str(planted + planted[:1]), value), "appears more")
    # The planted clique plus a vertex that misses one of its members.
    u = next(u for u in range(len(instance)) if u not in planted)
    w = min(set(planted) - graph[u])
    assert_infeasible(score(instance, str([*planted, u]), value), "are not adjacent")
    assert_infeasible(score(instance, f"[{w}, {u}]", value), f"vertices {w} and {u} are not")
    # Every vertex (the graph is never complete at this level).
    assert_infeasible(score(instance, str(list(range(len(instance)))), value), "are not adjacent")


def test_smaller_cliques_and_single_vertices_score_their_share() -> None:
    instance, planted = make(3, "hard")
    value = opt.solution(TASK.name, 3, "hard").value
    edge = score(instance, f"({planted[0]}, {planted[1]})", value)
    assert edge.status == "ok" and edge.reward == pytest.approx(2 / value), edge
    single = score(instance, str(planted[0]), value)
    assert single.status == "ok" and single.reward == pytest.approx(1 / value), single


def test_both_graph_shapes_read_alike() -> None:
    # The example's optimum: tests/test_opt_tasks.py.
    instance, planted = make(2, "bench")
    # The original also takes a dict of dicts {"0": {"1": 1}}; both shapes must agree.
    as_dicts = {key: {str(v): 1 for v in row} for key, row in instance.items()}
    assert CHECK.evaluate(as_dicts, str(planted)) == CHECK.evaluate(instance, str(planted))
    assert TASK.solve(as_dicts, ON_DEMAND_BUDGET).value == opt.solution(TASK.name, 2, "bench").value
    u = next(u for u in range(len(instance)) if u not in planted)
    with pytest.raises(ValueError, match="are not adjacent"):
        CHECK.evaluate(as_dicts, str([*planted, u]))
