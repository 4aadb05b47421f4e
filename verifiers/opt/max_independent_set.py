"""Maximum independent set: distinct vertices no two of which are adjacent; maximise how many."""

from __future__ import annotations

from typing import Any

from verifiers.opt.answer import check_distinct, check_ids, int_list
from verifiers.opt.base import Infeasible, InvalidAnswer, TaskCheck
from verifiers.opt.max_clique import neighbours


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Size of the independent set; raises on repeats (the original counted ``[0, 0, 0]`` as
    3), unknown vertices or two adjacent members. The answer is read with ``literal_eval``,
    never ``eval`` as the original did."""
    chosen = int_list(answer)
    if not chosen:
        raise InvalidAnswer("no vertex chosen")
    check_ids(chosen, len(instance), "vertex")
    check_distinct(chosen, "vertex")
    members = set(chosen)
    for vertex in chosen:
        clash = members & neighbours(instance, vertex)
        if clash:
            raise Infeasible(f"vertices {vertex} and {min(clash)} are adjacent")
    return float(len(chosen))


CHECK = TaskCheck("max_independent_set", "max", evaluate)
