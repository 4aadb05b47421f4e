"""Balanced minimum bisection: two disjoint parts covering every node, equal in size (one apart
when the node count is odd); minimise the total weight of the edges between the parts."""

from __future__ import annotations

import re
from typing import Any

from verifiers.opt.answer import check_distinct, check_ids, literal
from verifiers.opt.base import Infeasible, InvalidAnswer, TaskCheck

# Two lists written without the outer brackets, "[0, 1], [2, 3]": read as "[[0, 1], [2, 3]]".
# The classes exclude brackets, so matching is linear in the text.
_BARE_LISTS = re.compile(r"\[[^\[\]()]*\](?:\s*,\s*\[[^\[\]()]*\])+")


def _node_list(value: Any, what: str) -> list[int]:
    """A part as a list of node ids; ``InvalidAnswer`` for anything but integers in a list."""
    if not isinstance(value, (list, tuple)):  # sets are refused: they would hide repeats
        raise InvalidAnswer(f"{what} is not a list of node ids")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int):
            raise InvalidAnswer(f"{what} holds {item!r}, which is not a node id")
    return list(value)


def parts(answer: str) -> tuple[list[int], list[int]]:
    """The two parts of ``[[0, 1], [2, 3]]`` (also ``([0, 1], [2, 3])`` or ``[0, 1], [2, 3]``)."""
    bare = _BARE_LISTS.fullmatch(answer)
    value = literal(f"[{answer}]" if bare else answer)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise InvalidAnswer("expected exactly two lists of node ids, like [[0, 1], [2, 3]]")
    return _node_list(value[0], "the first part"), _node_list(value[1], "the second part")


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Total weight of the edges cut by a balanced bisection; raises on unknown nodes, a node
    in both parts or neither, or unbalanced parts."""
    first, second = parts(answer)
    count = len(instance)
    check_ids(first + second, count, "node")
    check_distinct(first + second, "node")  # a repeat, within a part or across both
    missing = set(range(count)) - set(first) - set(second)
    if missing:
        raise Infeasible(f"node {min(missing)} is in neither part")
    if abs(len(first) - len(second)) > count % 2:
        raise Infeasible(
            f"the parts have {len(first)} and {len(second)} nodes; with {count} nodes they "
            f"may differ by at most {count % 2}"
        )
    side = [False] * count
    for node in first:
        side[node] = True
    cut = 0.0
    for node in range(count):
        for other, weight in instance[str(node)].items():
            # Each undirected edge is listed from both ends; count it once, from its lower end.
            if int(other) > node and side[node] != side[int(other)]:
                cut += weight
    return float(cut)


CHECK = TaskCheck("min_bisection", "min", evaluate)
