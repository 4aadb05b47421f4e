"""Maximum clique: distinct vertices that are pairwise adjacent; maximise how many."""

from __future__ import annotations

from typing import Any

from verifiers.opt.base import TaskCheck
from verifiers.opt.graphs import vertex_set_size


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Size of the clique; raises on repeats, unknown vertices or a non-adjacent pair."""
    return vertex_set_size(instance, answer, adjacent=True)


CHECK = TaskCheck("max_clique", "max", evaluate)
