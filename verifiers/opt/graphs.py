"""Graphs as the original's instances give them, and the one check of a chosen set of vertices
that the clique and independent-set tasks share."""

from __future__ import annotations

from typing import Any

from verifiers.opt.answer import check_distinct, check_ids, int_list
from verifiers.opt.base import Infeasible, InvalidAnswer


def neighbours(instance: dict[str, Any], node: int) -> set[int]:
    """The neighbours of ``node`` in a graph given as ``{"0": [1, 2], ...}`` (adjacency lists)
    or ``{"0": {"1": 1, "2": 1}, ...}`` (dict of dicts, where a key's presence is the edge);
    the original accepts both shapes, so every graph task reads both."""
    try:
        return {int(other) for other in instance[str(node)]}
    except ValueError:  # a neighbour that is no integer: the instance, not the answer, is bad
        raise TypeError(f"vertex {node} has a neighbour that is not an integer") from None


def vertex_set_size(instance: dict[str, Any], answer: str, *, adjacent: bool) -> float:
    """How many distinct vertices ``answer`` lists, every two of them adjacent (``adjacent``: a
    clique) or no two of them (an independent set); raises on no vertex, repeats (the original
    counted ``[0, 0, 0]`` as 3), unknown vertices, or the first pair that breaks the rule."""
    chosen = int_list(answer)
    if not chosen:
        raise InvalidAnswer("no vertex chosen")
    check_ids(chosen, len(instance), "vertex")
    check_distinct(chosen, "vertex")
    members = set(chosen)
    for vertex in chosen:
        near = neighbours(instance, vertex)
        wrong = members - near - {vertex} if adjacent else members & near
        if wrong:
            relation = "not adjacent" if adjacent else "adjacent"
            raise Infeasible(f"vertices {vertex} and {min(wrong)} are {relation}")
    return float(len(chosen))
