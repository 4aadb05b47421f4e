"""Longest simple cycle (a Hamiltonian cycle is planted): a closed walk with no repeated node.

The value is ``len(path)`` *including* the closing repeat of the start node, as the original
counts it: a Hamiltonian cycle on n nodes, written ``[a, ..., a]``, is worth n + 1. Unlike the
original, ``[0]`` and ``[0, 1, 0]`` are not cycles: at least 3 distinct nodes are required, and
the closing edge back to the start must exist like every other step.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from verifiers.opt.answer import check_distinct, check_ids, int_list
from verifiers.opt.base import Infeasible, InvalidAnswer, TaskCheck
from verifiers.opt.graphs import neighbours

# The smallest simple cycle in a graph without parallel edges is a triangle.
MIN_CYCLE_NODES = 3


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """``len(path)`` of a simple cycle written start ... start; raises on an open path, a
    repeated node, fewer than 3 distinct nodes, unknown ids or a step along a missing edge."""
    path = int_list(answer)
    if not path:
        raise InvalidAnswer("no node listed")
    check_ids(path, len(instance), "node")
    # Checked first, so that [0] and [0, 1, 0] get the real reason, not a nearer one.
    if len(path) < MIN_CYCLE_NODES + 1:
        raise Infeasible(
            f"a cycle needs at least {MIN_CYCLE_NODES} distinct nodes and the return to the "
            f"start ({MIN_CYCLE_NODES + 1} entries); this answer has {len(path)}"
        )
    if path[0] != path[-1]:
        raise Infeasible(
            f"a cycle must end where it starts: write the start node {path[0]} again at the end"
        )
    # Every node once; only the closing repeat of the start is allowed.
    check_distinct(path[:-1], "node")
    for here, there in pairwise(path):
        # An undirected edge is listed at both ends; a caller's instance may list it at one
        # only, and a step needs the edge as both ends see it.
        if there not in neighbours(instance, here) or here not in neighbours(instance, there):
            raise Infeasible(f"nodes {here} and {there} are not adjacent")
    return float(len(path))


CHECK = TaskCheck("hamiltonian_cycle", "max", evaluate)
