"""Travelling salesman: a closed tour ``[c0, c1, ..., c0]`` through every city exactly once;
minimise its total length."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from verifiers.opt.answer import check_ids, int_list
from verifiers.opt.base import Infeasible, InvalidAnswer, TaskCheck


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Length of the tour; raises unless it starts and ends at the same city and visits every
    other city exactly once in between (so it has n + 1 entries)."""
    count = len(instance)
    tour = int_list(answer)
    if not tour:
        raise InvalidAnswer("the tour is empty")
    check_ids(tour, count, "city")
    if len(tour) == 1:
        # The original's single-city "tour" loophole: one entry visits nothing.
        raise Infeasible("a single city is not a tour: list every city and return to the start")
    if tour[0] != tour[-1]:
        raise Infeasible(
            f"the tour must return to its start: it begins at {tour[0]} and ends at {tour[-1]} "
            "(write the starting city again at the end)"
        )
    seen: set[int] = set()
    for city in tour[:-1]:
        if city in seen:
            raise Infeasible(f"city {city} is visited more than once")
        seen.add(city)
    if len(seen) != count:
        missing = sorted(set(range(count)) - seen)
        shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
        raise Infeasible(f"{len(missing)} of the {count} cities are never visited: {shown}")
    return float(sum(instance[str(a)][str(b)] for a, b in pairwise(tour)))


CHECK = TaskCheck("tsp", "min", evaluate)
