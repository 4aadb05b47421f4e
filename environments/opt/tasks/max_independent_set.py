"""Maximum independent set with a planted independent set; exact by CP-SAT."""

from __future__ import annotations

import random
from collections.abc import Iterable

from ortools.sat.python import cp_model

from environments.opt import solver
from environments.opt.task import Instance, Level, OptTask, Solution
from verifiers.opt.graphs import neighbours
from verifiers.opt.max_independent_set import CHECK

# (nodes, planted set size), per level as the original generator draws them.
_LEVELS: dict[Level, tuple[tuple[int, int], tuple[int, int]]] = {
    "easy": ((12, 20), (4, 8)),
    "medium": ((20, 30), (8, 12)),
    "hard": ((30, 40), (12, 16)),
    "bench": ((40, 50), (16, 20)),
}
# Edge probabilities among the other nodes, and from each other node to extra planted nodes.
_DENSITY_OTHERS = 0.4
_DENSITY_PLANTED = 0.4


def planted_graph(
    rng: random.Random, n: int, size: int, density_others: float, density_planted: float
) -> tuple[list[set[int]], list[int]]:
    """A graph on ``n`` nodes in which ``size`` random nodes are independent: the others are
    joined among themselves with ``density_others``, and each to one random planted node plus
    every other planted node with ``density_planted`` (so none can simply join the planted set).
    The adjacency sets and the planted set, sorted. Also the base of ``max_clique``."""
    size = min(size, n)
    nodes = list(range(n))
    rng.shuffle(nodes)
    planted, others = sorted(nodes[:size]), nodes[size:]
    adjacent: list[set[int]] = [set() for _ in range(n)]

    def join(u: int, v: int) -> None:
        adjacent[u].add(v)
        adjacent[v].add(u)

    for index, u in enumerate(others):
        for v in others[index + 1 :]:
            if rng.random() < density_others:
                join(u, v)
    for u in others:
        anchor = rng.choice(planted)
        join(u, anchor)
        for v in planted:
            if v != anchor and rng.random() < density_planted:
                join(u, v)
    return adjacent, planted


def plant(rng: random.Random, level: Level) -> tuple[Instance, list[int]]:
    """The instance (dict of dicts ``{"0": {"3": 1, ...}, ...}``) and its planted independent
    set, a lower bound on the optimum."""
    (n_lo, n_hi), (s_lo, s_hi) = _LEVELS[level]
    n = rng.randint(n_lo, n_hi)
    size = rng.randint(s_lo, s_hi)
    adjacent, planted = planted_graph(rng, n, size, _DENSITY_OTHERS, _DENSITY_PLANTED)
    instance = {str(u): {str(v): 1 for v in sorted(adjacent[u])} for u in range(n)}
    return instance, planted


def generate(rng: random.Random, level: Level) -> Instance:
    """A graph with a planted independent set, as a dict of dicts."""
    return plant(rng, level)[0]


def largest_independent(
    n: int, edges: Iterable[tuple[int, int]], budget: float
) -> tuple[list[int], bool]:
    """A largest set of vertices with no two joined by one of ``edges`` (CP-SAT: one boolean per
    vertex, at most one end of every edge), and whether it is proven maximum."""
    model = cp_model.CpModel()
    chosen = [model.new_bool_var(f"x_{u}") for u in range(n)]
    for u, v in edges:
        model.add_bool_or([~chosen[u], ~chosen[v]])
    model.maximize(sum(chosen))
    cp, proven = solver.solve(model, budget)
    return [u for u in range(n) if cp.boolean_value(chosen[u])], proven


def solve(instance: Instance, budget: float) -> Solution:
    """Exact: the largest independent set (proven within the budget at every level)."""
    n = len(instance)
    edges = ((u, v) for u in range(n) for v in neighbours(instance, u) if u < v)
    chosen, proven = largest_independent(n, edges, budget)
    answer = str(chosen)
    return Solution(answer, CHECK.evaluate(instance, answer), proven)


def greedy(instance: Instance) -> str:
    """Minimum-degree greedy: take the vertex with the fewest neighbours left (ties to the
    lower id), drop it and its neighbours, repeat until no vertex is left."""
    left = {u: neighbours(instance, u) - {u} for u in range(len(instance))}
    chosen: list[int] = []
    while left:
        vertex = min(left, key=lambda u: (len(left[u] & left.keys()), u))
        chosen.append(vertex)
        for gone in left.pop(vertex) & left.keys():
            del left[gone]
    return str(sorted(chosen))


TASK = OptTask(
    check=CHECK,
    original_key="maximum-set",
    category="graph",
    description=(
        "You are given an undirected graph: each vertex id maps to a dictionary whose keys are "
        "the ids of its neighbours. Choose as many vertices as possible such that no two chosen "
        "vertices are joined by an edge (an independent set). Each vertex may be chosen once."
    ),
    submission_format="A list of the chosen vertex ids, each once, for example [0, 3, 5].",
    example_input={
        "0": {"1": 1},
        "1": {"0": 1, "2": 1, "4": 1},
        "2": {"1": 1, "3": 1},
        "3": {"2": 1},
        "4": {"1": 1},
    },
    example_output="[0, 2, 4]",
    generate=generate,
    solve=solve,
    greedy=greedy,
)
