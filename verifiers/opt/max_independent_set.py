"""Maximum independent set: distinct vertices no two of which are adjacent; maximise how many."""

from __future__ import annotations

from typing import Any

from verifiers.opt.base import TaskCheck
from verifiers.opt.graphs import vertex_set_size


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Size of the independent set; raises on repeats (the original counted ``[0, 0, 0]`` as
    3), unknown vertices or two adjacent members. The answer is read with ``literal_eval``,
    never ``eval`` as the original did."""
    return vertex_set_size(instance, answer, adjacent=False)


CHECK = TaskCheck("max_independent_set", "max", evaluate)
