"""Balanced minimum bisection on the original's "hell mode" graphs; exact by CP-SAT."""

from __future__ import annotations

import random

import numpy as np
from ortools.sat.python import cp_model

from environments.opt import solver
from environments.opt.task import Instance, Level, OptTask, Solution
from verifiers.opt.min_bisection import CHECK

# (nodes, noise level: the share of all node pairs drawn as noise edges), per level as the
# original generator sets them.
_LEVELS: dict[Level, tuple[int, float]] = {
    "easy": (42, 0.1),
    "medium": (45, 0.1),
    "hard": (45, 0.02),
    "bench": (50, 0.02),
}
# The original's "hell mode" constants: outward edge attempts per traitor node and community,
# and the weight range of noise edges (its generator's default edge weights).
_TRAITOR_STRENGTH = 3
_NOISE_WEIGHTS = (1, 6)
# Exact split tables enumerate 2**size subsets of a group, so groups stay at most this large
# (the bench communities have up to 18 nodes); a node joins a group when it is adjacent to at
# least this share of it.
_GROUP_CAP = 18
_GROUP_DENSITY = 0.6
# Grow-and-prune rounds per group; groups settle within two or three.
_GROUP_ROUNDS = 4
# Kernighan-Lin starts for the solver's hint, shuffled by a private generator with this seed.
_KL_STARTS = 60
_KL_SEED = 0

Edges = dict[tuple[int, int], int]


def _add(edges: Edges, u: int, v: int, weight: int) -> None:
    edges[min(u, v), max(u, v)] = weight


def _has(edges: Edges, u: int, v: int) -> bool:
    return (min(u, v), max(u, v)) in edges


def _dense(rng: random.Random, edges: Edges, group: list[int], low: int, high: int) -> None:
    """Each pair of the group joined with probability 0.9, weight low..high."""
    for u in group:
        for v in group:
            if u < v and rng.random() < 0.9:
                _add(edges, u, v, rng.randint(low, high))


def _cross(
    rng: random.Random, edges: Edges, first: list[int], second: list[int], weights: tuple[int, int]
) -> int:
    """One attempt at a new edge between random members of two groups; its weight, or 0."""
    u, v = rng.choice(first), rng.choice(second)
    if _has(edges, u, v):
        return 0
    weight = rng.randint(*weights)
    _add(edges, u, v, weight)
    return weight


def generate(rng: random.Random, level: Level) -> Instance:
    """Three communities A, B, C (ids in that order, not shuffled, as in the original): B and C
    dense with heavy edges (8-10); a light true cut A | B+C (n//10 attempts each towards B and
    C, weights 1-2); a decoy B-C bridge (weights 3-5) heavier than 1.2 times that cut; a quarter
    of A as "traitors", loosely tied to the rest of A (1-3) and heavily to B and C (9-10), the
    other A nodes dense (8-10); then noise edges (1-6). Weighted adjacency ``{"0": {"5": 9}}``
    listing edges only (the original also lists every non-edge with weight 0)."""
    count, noise = _LEVELS[level]
    third = count // 3
    group_a = list(range(third))
    group_b = list(range(third, 2 * third))
    group_c = list(range(2 * third, count))
    edges: Edges = {}
    _dense(rng, edges, group_b, 8, 10)
    _dense(rng, edges, group_c, 8, 10)
    true_cut = sum(
        _cross(rng, edges, group_a, group, (1, 2))
        for group in (group_b, group_c)
        for _ in range(count // 10)
    )
    decoy = 0
    while decoy <= true_cut * 1.2:  # the bridge must look cheaper than it is
        decoy += _cross(rng, edges, group_b, group_c, (3, 5))
    traitors = rng.sample(group_a, max(1, third // 4))
    loyalists = [v for v in group_a if v not in traitors]
    for u in traitors:
        for v in loyalists:
            if rng.random() < 0.2:
                _add(edges, u, v, rng.randint(1, 3))
    _dense(rng, edges, loyalists, 8, 10)
    for u in traitors:
        for group in (group_b, group_c):
            for _ in range(_TRAITOR_STRENGTH):
                _cross(rng, edges, [u], group, (9, 10))
    nodes = list(range(count))
    for _ in range(int(count * (count - 1) // 2 * noise)):
        u, v = rng.sample(nodes, 2)
        if not _has(edges, u, v):
            _add(edges, u, v, rng.randint(*_NOISE_WEIGHTS))
    adjacency: dict[int, dict[int, int]] = {v: {} for v in nodes}
    for (u, v), weight in edges.items():
        adjacency[u][v] = weight
        adjacency[v][u] = weight
    return {str(v): {str(u): adjacency[v][u] for u in sorted(adjacency[v])} for v in nodes}


def _edges(instance: Instance) -> Edges:
    return {
        (int(u), int(v)): int(weight)
        for u, row in instance.items()
        for v, weight in row.items()
        if int(u) < int(v) and weight
    }


def _cut(edges: Edges, side: list[bool]) -> int:
    return sum(weight for (u, v), weight in edges.items() if side[u] != side[v])


def _answer(side: list[bool]) -> str:
    first = [v for v in range(len(side)) if not side[v]]
    second = [v for v in range(len(side)) if side[v]]
    return str([first, second])


def _weights(count: int, edges: Edges) -> list[list[int]]:
    weight = [[0] * count for _ in range(count)]
    for (u, v), w in edges.items():
        weight[u][v] = weight[v][u] = w
    return weight


def _kernighan_lin(weight: list[list[int]], side: list[bool]) -> list[bool]:
    """Kernighan-Lin passes: swap the best pair of unlocked nodes, one from each part, even when
    that raises the cut, lock both, and keep the prefix of swaps that lowers the cut most; stop
    after a pass that lowers nothing. Part sizes never change."""
    count, side = len(side), list(side)
    while True:
        # gain[v]: how much the cut drops when v alone changes side.
        gain = [
            sum(weight[v][u] if side[u] != side[v] else -weight[v][u] for u in range(count))
            for v in range(count)
        ]
        trial, locked = list(side), [False] * count
        swaps: list[tuple[int, int, int]] = []
        for _ in range(min(side.count(True), side.count(False))):
            delta, u, v = max(
                (gain[u] + gain[v] - 2 * weight[u][v], u, v)
                for u in range(count)
                if not locked[u] and not trial[u]
                for v in range(count)
                if not locked[v] and trial[v]
            )
            locked[u] = locked[v] = True
            for other in range(count):
                if not locked[other]:
                    sign = 1 if trial[other] == trial[u] else -1
                    gain[other] += 2 * sign * (weight[other][u] - weight[other][v])
            trial[u], trial[v] = True, False
            swaps.append((delta, u, v))
        best, keep, total = 0, 0, 0
        for index, (delta, _, _) in enumerate(swaps, 1):
            total += delta
            if total > best:
                best, keep = total, index
        if not keep:
            return side
        for _, u, v in swaps[:keep]:
            side[u], side[v] = True, False


def _halves(count: int) -> list[bool]:
    """Nodes in id order, the first half in the first part."""
    return [v >= count // 2 for v in range(count)]


def _groups(count: int, edges: Edges) -> list[list[int]]:
    """Dense groups of nodes, greedily. From the node with the most free neighbours, add the
    free node with the most neighbours in the group (ties: the most neighbours shared with the
    members, which tells a community mate from a node joined by a stray edge) while it is
    adjacent to enough of the group; then drop members adjacent to too little of the rest, and
    grow again, until the group settles. Any grouping gives valid bounds in ``solve``; dense
    ones give strong bounds."""
    closed: list[set[int]] = [{v} for v in range(count)]
    for u, v in edges:
        closed[u].add(v)
        closed[v].add(u)

    def loose(group: set[int], v: int) -> bool:
        return len(closed[v] & group) - 1 < _GROUP_DENSITY * (len(group) - 1)

    def grow(group: set[int], free: set[int]) -> None:
        while len(group) < _GROUP_CAP and free - group:
            best = max(
                free - group,
                key=lambda v: (
                    len(closed[v] & group),
                    sum(len(closed[v] & closed[u]) for u in group),
                    -v,
                ),
            )
            if len(closed[best] & group) < _GROUP_DENSITY * len(group):
                return
            group.add(best)

    def prune(group: set[int]) -> None:
        while len(group) > 1:
            worst = min(group, key=lambda v: (len(closed[v] & group), -v))
            if not loose(group, worst):
                return
            group.discard(worst)

    free, groups = set(range(count)), []
    while free:
        group = {max(free, key=lambda v: (len(closed[v] & free), -v))}
        for _ in range(_GROUP_ROUNDS):
            before = set(group)
            grow(group, free)
            prune(group)
            if group == before:
                break
        groups.append(sorted(group))
        free -= group
    return groups


def _split_table(group: list[int], edges: Edges) -> list[int]:
    """The least weight of the group's own edges cut when exactly ``s`` of its nodes are in the
    second part, for each ``s`` (exact: every subset of the group, enumerated as bit masks)."""
    index = {v: i for i, v in enumerate(group)}
    masks = np.arange(1 << len(group), dtype=np.int64)
    cut = np.zeros_like(masks)
    for (u, v), weight in edges.items():
        if u in index and v in index:
            cut += weight * (((masks >> index[u]) ^ (masks >> index[v])) & 1)
    sizes = np.zeros_like(masks)
    for i in range(len(group)):
        sizes += (masks >> i) & 1
    best = np.full(len(group) + 1, np.iinfo(np.int64).max)
    np.minimum.at(best, sizes, cut)
    return [int(value) for value in best]


def solve(instance: Instance, budget: float) -> Solution:
    """Minimum balanced cut by CP-SAT: a side per node (node 0 fixed to the first part, which
    removes the mirror symmetry), part sizes n//2 and n - n//2, and a cut boolean per edge,
    exactly "its ends differ"; hinted with the best of many Kernighan-Lin runs.

    The plain model's linear relaxation is 0 (every side at 1/2), so it does not prove the
    bench instances within a minute. What proves them: dense node groups, each with a count
    of its nodes in the second part and an exact table of the least cut among its own edges
    for each count. The balance forces some dense group to split, and the tables price that.
    """
    edges = _edges(instance)
    count = len(instance)
    # The hint matters: with the optimum known early, the proof is a second or so. Kernighan-Lin
    # from many balanced starts (a fixed private seed, so the same every run) finds it mostly.
    matrix = _weights(count, edges)
    starts = random.Random(_KL_SEED)
    start = _kernighan_lin(matrix, _halves(count))  # the greedy baseline's solution
    best = _cut(edges, start)
    for _ in range(_KL_STARTS):
        order = list(range(count))
        starts.shuffle(order)
        trial = [False] * count
        for v in order[count // 2 :]:
            trial[v] = True
        trial = _kernighan_lin(matrix, trial)
        if _cut(edges, trial) < best:
            start, best = trial, _cut(edges, trial)
    if start[0]:  # mirror so node 0 is in the first part, as the model fixes it
        start = [not s for s in start]
    model = cp_model.CpModel()
    side = [model.new_bool_var(f"side{v}") for v in range(count)]
    model.add(side[0] == 0)
    model.add_linear_constraint(sum(side), count // 2, count - count // 2)
    cut = {}
    for u, v in edges:
        cut[u, v] = model.new_bool_var(f"cut{u}_{v}")
        # All four clauses of cut = side[u] XOR side[v].
        model.add_bool_or([side[u].Not(), side[v].Not(), cut[u, v].Not()])
        model.add_bool_or([side[u], side[v], cut[u, v].Not()])
        model.add_bool_or([side[u].Not(), side[v], cut[u, v]])
        model.add_bool_or([side[u], side[v].Not(), cut[u, v]])
    for group in _groups(count, edges):
        if len(group) < 3:
            continue  # a split of one or two nodes is priced well enough by the plain model
        members = set(group)
        table = _split_table(group, edges)
        split = model.new_int_var(0, len(group), f"split{group[0]}")
        model.add(split == sum(side[v] for v in group))
        least = model.new_int_var(0, max(table), f"least{group[0]}")
        model.add_element(split, table, least)
        inner = [key for key in edges if key[0] in members and key[1] in members]
        model.add(sum(edges[key] * cut[key] for key in inner) >= least)
    for v in range(count):
        model.add_hint(side[v], start[v])
    model.minimize(sum(weight * cut[key] for key, weight in edges.items()))
    cp, optimal = solver.solve(model, budget)
    result = [cp.boolean_value(side[v]) for v in range(count)]
    return Solution(_answer(result), float(_cut(edges, result)), optimal)


def greedy(instance: Instance) -> str:
    """Nodes split in id order into halves, then Kernighan-Lin passes."""
    count, edges = len(instance), _edges(instance)
    return _answer(_kernighan_lin(_weights(count, edges), _halves(count)))


TASK = OptTask(
    check=CHECK,
    original_key="minimum-cut",
    category="partition",
    description=(
        "You are given an undirected graph with positive integer edge weights: each node id maps "
        "to its neighbours and the weight of the edge to each. Split the nodes into two parts of "
        "equal size (when the number of nodes is odd, one part has one node more) so that the "
        "total weight of the edges running between the two parts is as small as possible."
    ),
    submission_format=(
        "Two lists of node ids, the two parts, together holding every node exactly once, for "
        "example [[0, 1], [2, 3]]."
    ),
    example_input={
        "0": {"1": 5, "2": 1},
        "1": {"0": 5, "3": 2},
        "2": {"0": 1, "3": 4},
        "3": {"1": 2, "2": 4},
    },
    example_output="[[0, 1], [2, 3]]",
    generate=generate,
    solve=solve,
    greedy=greedy,
)
