"""Maximum clique, planted as the complement of a graph with a planted independent set; exact by
CP-SAT."""

from __future__ import annotations

import random

from environments.opt.task import Instance, Level, OptTask, Solution
from environments.opt.tasks.max_independent_set import largest_independent, planted_graph
from verifiers.opt.graphs import neighbours
from verifiers.opt.max_clique import CHECK

# (nodes, planted clique size), per level as the original generator draws them.
_LEVELS: dict[Level, tuple[tuple[int, int], tuple[int, int]]] = {
    "easy": ((4, 8), (2, 4)),
    "medium": ((8, 12), (2, 4)),
    "hard": ((12, 16), (2, 6)),
    "bench": ((16, 20), (4, 8)),
}
# Densities of the graph that is complemented: among the other nodes, and from each other node
# to extra planted nodes. In the complement they become 0.4 and 0.7.
_DENSITY_OTHERS = 0.6
_DENSITY_PLANTED = 0.3


def plant(rng: random.Random, level: Level) -> tuple[Instance, list[int]]:
    """The instance (adjacency lists ``{"0": [1, 3], ...}``) and its planted clique, a lower
    bound on the optimum: a graph with a planted independent set, complemented."""
    (n_lo, n_hi), (c_lo, c_hi) = _LEVELS[level]
    n = rng.randint(n_lo, n_hi)
    size = rng.randint(c_lo, c_hi)
    apart, planted = planted_graph(rng, n, size, _DENSITY_OTHERS, _DENSITY_PLANTED)
    instance = {str(u): [v for v in range(n) if v != u and v not in apart[u]] for u in range(n)}
    return instance, planted


def generate(rng: random.Random, level: Level) -> Instance:
    """A graph with a planted clique, as adjacency lists."""
    return plant(rng, level)[0]


def solve(instance: Instance, budget: float) -> Solution:
    """Exact: a clique is an independent set of the complement, so the largest independent set
    over the non-edges (proven within the budget at every level)."""
    n = len(instance)
    non_edges = (
        (u, v) for u in range(n) for v in range(u + 1, n) if v not in neighbours(instance, u)
    )
    chosen, proven = largest_independent(n, non_edges, budget)
    answer = str(chosen)
    return Solution(answer, CHECK.evaluate(instance, answer), proven)


def greedy(instance: Instance) -> str:
    """Maximum-degree greedy: among the vertices adjacent to everything chosen so far, take the
    one with the most neighbours among them (ties to the lower id), until none is left."""
    adjacent = {u: neighbours(instance, u) - {u} for u in range(len(instance))}
    candidates = set(adjacent)
    chosen: list[int] = []
    while candidates:
        vertex = min(candidates, key=lambda u: (-len(adjacent[u] & candidates), u))
        chosen.append(vertex)
        candidates &= adjacent[vertex]
    return str(sorted(chosen))


TASK = OptTask(
    check=CHECK,
    original_key="maximum_clique_problem",
    category="graph",
    description=(
        "You are given an undirected graph as adjacency lists: each vertex id maps to the ids "
        "of its neighbours. Find a clique that is as large as possible: a set of vertices in "
        "which every two are joined by an edge. Each vertex may be listed once."
    ),
    submission_format="A list of the vertex ids in the clique, each once, for example [0, 2, 5].",
    example_input={
        "0": [1, 2, 3],
        "1": [0, 2],
        "2": [0, 1, 3],
        "3": [0, 2, 4],
        "4": [3],
    },
    example_output="[0, 1, 2]",
    generate=generate,
    solve=solve,
    greedy=greedy,
)
