"""Maximum clique: distinct vertices that are pairwise adjacent; maximise how many."""

from __future__ import annotations

from typing import Any

from verifiers.opt.answer import check_distinct, check_ids, int_list
from verifiers.opt.base import Infeasible, InvalidAnswer, TaskCheck


def neighbours(instance: dict[str, Any], node: int) -> set[int]:
    """The neighbours of ``node`` in a graph given as ``{"0": [1, 2], ...}`` (adjacency lists)
    or ``{"0": {"1": 1, "2": 1}, ...}`` (dict of dicts, where a key's presence is the edge);
    the original accepts both shapes, so every graph task reads both."""
    try:
        return {int(other) for other in instance[str(node)]}
    except ValueError:  # a neighbour that is no integer: the instance, not the answer, is bad
        raise TypeError(f"vertex {node} has a neighbour that is not an integer") from None


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Size of the clique; raises on repeats, unknown vertices or a non-adjacent pair."""
    chosen = int_list(answer)
    if not chosen:
        raise InvalidAnswer("no vertex chosen")
    check_ids(chosen, len(instance), "vertex")
    check_distinct(chosen, "vertex")
    members = set(chosen)
    for vertex in chosen:
        # Every other member must be a neighbour; report the first pair that is not.
        missing = members - neighbours(instance, vertex) - {vertex}
        if missing:
            raise Infeasible(f"vertices {vertex} and {min(missing)} are not adjacent")
    return float(len(chosen))


CHECK = TaskCheck("max_clique", "max", evaluate)
