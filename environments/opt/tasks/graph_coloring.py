"""Graph colouring with a planted k-colouring; the chromatic number proven by CP-SAT."""

from __future__ import annotations

import random

from ortools.sat.python import cp_model

from environments.opt import solver
from environments.opt.task import Instance, Level, OptTask, Solution
from verifiers.opt.graph_coloring import CHECK

# (vertices, planted colours k, edge probability between two differently coloured vertices), per
# level as the original generator draws them.
_LEVELS: dict[Level, tuple[tuple[int, int], tuple[int, int], float]] = {
    "easy": ((8, 12), (3, 4), 0.2),
    "medium": ((15, 22), (4, 6), 0.35),
    "hard": ((25, 32), (6, 8), 0.5),
    "bench": ((32, 40), (6, 8), 0.5),
}


def planted(rng: random.Random, level: Level) -> tuple[Instance, list[int]]:
    """The instance and its planted colouring (colours 1..k; a colour may go unused, so k is
    an upper bound on the chromatic number)."""
    (n_lo, n_hi), (k_lo, k_hi), density = _LEVELS[level]
    count = rng.randint(n_lo, n_hi)
    colours = rng.randint(k_lo, k_hi)
    colouring = [rng.randint(1, colours) for _ in range(count)]
    classes = [[v for v in range(count) if colouring[v] == c] for c in range(1, colours + 1)]
    adjacency: list[list[int]] = [[] for _ in range(count)]
    # Edges only between different colour classes, each pair independently, as the original.
    for first in range(colours):
        for second in range(first + 1, colours):
            for u in classes[first]:
                for v in classes[second]:
                    if rng.random() < density:
                        adjacency[u].append(v)
                        adjacency[v].append(u)
    return {str(v): sorted(adjacency[v]) for v in range(count)}, colouring


def generate(rng: random.Random, level: Level) -> Instance:
    """A random graph whose vertices are split at random into k colour classes, with edges only
    between classes (adjacency lists ``{"0": [1, 2], ...}``)."""
    return planted(rng, level)[0]


def _neighbours(instance: Instance) -> list[set[int]]:
    return [{int(u) for u in instance[str(v)]} for v in range(len(instance))]


def _dsatur(neighbours: list[set[int]]) -> list[int]:
    """DSatur: colour next the vertex with the most distinct neighbour colours (ties: most
    uncoloured neighbours, then lowest id), with the smallest colour its neighbours lack."""
    colouring = [0] * len(neighbours)
    for _ in range(len(neighbours)):
        vertex = max(
            (v for v in range(len(neighbours)) if not colouring[v]),
            key=lambda v: (
                len({colouring[u] for u in neighbours[v]} - {0}),
                sum(1 for u in neighbours[v] if not colouring[u]),
                -v,
            ),
        )
        taken = {colouring[u] for u in neighbours[vertex]}
        colouring[vertex] = next(c for c in range(1, len(neighbours) + 2) if c not in taken)
    return colouring


def _clique(neighbours: list[set[int]]) -> list[int]:
    """A large clique, greedily from each start vertex (a lower bound and symmetry breaker)."""
    best: list[int] = []
    for start in range(len(neighbours)):
        clique, candidates = [start], set(neighbours[start])
        while candidates:
            vertex = max(candidates, key=lambda v: (len(neighbours[v] & candidates), -v))
            clique.append(vertex)
            candidates &= neighbours[vertex]
        if len(clique) > len(best):
            best = clique
    return best


def solve(instance: Instance, budget: float) -> Solution:
    """The chromatic number by CP-SAT: a boolean per (vertex, colour) with at most DSatur's
    colour count, colours used in order, and a greedy clique fixed to the first colours."""
    neighbours = _neighbours(instance)
    count = len(neighbours)
    if count == 0 or not any(neighbours):
        return Solution(str([1] * count), float(min(count, 1)), optimal=True)
    start = _dsatur(neighbours)
    clique = _clique(neighbours)
    limit = max(start)
    if limit == len(clique):  # DSatur meets the clique bound: already optimal
        return Solution(str(start), float(limit), optimal=True)
    # Rename DSatur's colours so the clique has colours 1..q, as the model below requires: the
    # hint is then a complete feasible solution.
    order = [start[v] for v in clique]
    order += [c for c in range(1, limit + 1) if c not in order]
    start = [order.index(c) + 1 for c in start]
    model = cp_model.CpModel()
    colours = range(limit)
    x = [[model.new_bool_var(f"x{v}_{c}") for c in colours] for v in range(count)]
    used = [model.new_bool_var(f"used{c}") for c in colours]
    for v in range(count):
        model.add_exactly_one(x[v])
        for c in colours:
            model.add_implication(x[v][c], used[c])
            model.add_hint(x[v][c], start[v] == c + 1)
    for u in range(count):
        for v in neighbours[u]:
            if u < v:
                for c in colours:
                    model.add_bool_or([x[u][c].Not(), x[v][c].Not()])
    # Symmetry: colours are interchangeable, so the clique takes colours 1..q in order and the
    # used colours form a prefix; every clique colour is then used.
    for c, vertex in enumerate(clique):
        model.add(x[vertex][c] == 1)
    for c in range(1, limit):
        model.add_implication(used[c], used[c - 1])
    model.add(sum(used) >= len(clique))
    model.minimize(sum(used))
    cp, optimal = solver.solve(model, budget)
    colouring = [next(c + 1 for c in colours if cp.boolean_value(x[v][c])) for v in range(count)]
    return Solution(str(colouring), float(len(set(colouring))), optimal)


def greedy(instance: Instance) -> str:
    """DSatur's colouring."""
    return str(_dsatur(_neighbours(instance)))


TASK = OptTask(
    check=CHECK,
    original_key="GCP-D",
    category="graph",
    description=(
        "You are given an undirected graph as adjacency lists: each vertex id maps to the ids of "
        "its neighbours. Give every vertex a colour, a positive integer, so that no two "
        "neighbouring vertices share a colour, using as few distinct colours as possible."
    ),
    submission_format=(
        "A list with one colour per vertex, in vertex order (the colour of vertex 0 first), for "
        "example [1, 2, 1, 3]."
    ),
    example_input={"0": [1, 2], "1": [0, 2], "2": [0, 1, 3], "3": [2]},
    example_output="[1, 2, 3, 1]",
    generate=generate,
    solve=solve,
    greedy=greedy,
)
