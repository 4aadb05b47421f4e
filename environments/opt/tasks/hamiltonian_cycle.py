"""Longest cycle with a planted Hamiltonian cycle; exact by CP-SAT's circuit constraint."""

from __future__ import annotations

import random
from itertools import pairwise

from ortools.sat.python import cp_model

from environments.opt import solver
from environments.opt.task import Instance, Level, OptTask, Solution
from verifiers.opt.graphs import neighbours
from verifiers.opt.hamiltonian_cycle import CHECK, MIN_CYCLE_NODES

# (nodes, probability of each extra edge), per level as the original generator draws them.
_LEVELS: dict[Level, tuple[tuple[int, int], float]] = {
    "easy": ((15, 20), 0.2),
    "medium": ((20, 30), 0.3),
    "hard": ((30, 40), 0.4),
    "bench": ((40, 50), 0.5),
}


def plant(rng: random.Random, level: Level) -> tuple[Instance, list[int]]:
    """The instance and its planted Hamiltonian cycle (written start ... start): a random
    permutation closed into a cycle, plus every other pair joined with the level's probability."""
    (n_lo, n_hi), density = _LEVELS[level]
    n = rng.randint(n_lo, n_hi)
    order = list(range(n))
    rng.shuffle(order)
    cycle = [*order, order[0]]
    adjacent: list[set[int]] = [set() for _ in range(n)]
    for u, v in pairwise(cycle):
        adjacent[u].add(v)
        adjacent[v].add(u)
    for u in range(n):
        for v in range(u + 1, n):
            # Draw only for pairs the cycle left open, so the density is of the extra edges.
            if v not in adjacent[u] and rng.random() < density:
                adjacent[u].add(v)
                adjacent[v].add(u)
    return {str(u): sorted(adjacent[u]) for u in range(n)}, cycle


def generate(rng: random.Random, level: Level) -> Instance:
    """Adjacency lists ``{"0": [1, 5, 7], ...}`` of a graph with a planted Hamiltonian cycle."""
    return plant(rng, level)[0]


def solve(instance: Instance, budget: float) -> Solution:
    """The longest simple cycle by CP-SAT: a circuit over the nodes in which a node may be
    skipped (a self-loop), maximising the nodes on it. A cycle through all n nodes meets the
    trivial bound n, so the planted Hamiltonian cycle makes the optimum n + 1 (with the closing
    repeat) and CP-SAT proves it as soon as it finds any Hamiltonian cycle."""
    n = len(instance)
    model = cp_model.CpModel()
    on_cycle = [model.new_bool_var(f"on_{u}") for u in range(n)]
    arcs: list[tuple[int, int, cp_model.LiteralT]] = [(u, u, ~on_cycle[u]) for u in range(n)]
    step: dict[tuple[int, int], cp_model.IntVar] = {}
    for u in range(n):
        for v in sorted(neighbours(instance, u)):
            if v != u:
                step[u, v] = model.new_bool_var(f"step_{u}_{v}")
                arcs.append((u, v, step[u, v]))
    model.add_circuit(arcs)
    # At least a triangle: this also rules out a back-and-forth "cycle" over one edge.
    model.add(sum(on_cycle) >= MIN_CYCLE_NODES)
    model.maximize(sum(on_cycle))
    cp, proven = solver.solve(model, budget)
    successor = {u: v for (u, v), lit in step.items() if cp.boolean_value(lit)}
    start = min(successor)
    cycle = [start]
    while len(cycle) == 1 or cycle[-1] != start:
        cycle.append(successor[cycle[-1]])
    answer = str(cycle)
    # A cycle through every node cannot be beaten, whatever the solver's verdict.
    return Solution(answer, CHECK.evaluate(instance, answer), proven or len(cycle) == n + 1)


def _walk(adjacent: list[set[int]], start: int) -> list[int]:
    """A greedy walk from ``start``: always on to the unvisited neighbour with the fewest
    unvisited neighbours (Warnsdorff's rule, ties to the lower id), until stuck."""
    path, seen = [start], {start}
    while True:
        options = [v for v in adjacent[path[-1]] if v not in seen]
        if not options:
            return path
        step = min(options, key=lambda v: (sum(w not in seen for w in adjacent[v]), v))
        path.append(step)
        seen.add(step)


def _close(adjacent: list[set[int]], path: list[int]) -> list[int]:
    """The longest cycle a walk closes: from the earliest node on it adjacent to its end, back
    to that node (written start ... start); empty if it closes none of 3 nodes or more."""
    end = path[-1]
    for index, node in enumerate(path[: len(path) - MIN_CYCLE_NODES + 1]):
        if node in adjacent[end]:
            return [*path[index:], node]
    return []


def greedy(instance: Instance) -> str:
    """One greedy walk from node 0, closed into the longest cycle it allows. Where every node
    has at least two neighbours (the planted cycle sees to that) the node a walk gets stuck at
    has a visited neighbour besides its predecessor, so a cycle always closes; otherwise the
    open walk is returned as the best attempt and scores as infeasible."""
    adjacent = [neighbours(instance, u) - {u} for u in range(len(instance))]
    path = _walk(adjacent, 0)
    return str(_close(adjacent, path) or path)


TASK = OptTask(
    check=CHECK,
    original_key="hamiltonian-cycle",
    category="planning",
    description=(
        "You are given an undirected graph as adjacency lists: each node id maps to the ids of "
        "its neighbours. Find a cycle that is as long as possible: start at a node, move along "
        "edges, visit no node twice, and return along an edge to the start. The best possible "
        "cycle passes through every node (a Hamiltonian cycle). A cycle must contain at least "
        "three different nodes. Its length is counted as the number of entries in your list, "
        "so the closing return to the start counts too."
    ),
    submission_format=(
        "The nodes of the cycle in the order they are visited, with the start node repeated at "
        "the end, for example [0, 1, 2, 3, 0]."
    ),
    example_input={
        "0": [1, 2, 4],
        "1": [0, 2],
        "2": [0, 1, 3],
        "3": [2, 4],
        "4": [0, 3],
    },
    example_output="[0, 1, 2, 3, 4, 0]",
    generate=generate,
    solve=solve,
    greedy=greedy,
)
