"""graph_coloring: NOT WRITTEN YET (placeholder while the task is being written)."""

from __future__ import annotations

from typing import Any

from verifiers.opt.base import TaskCheck


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Placeholder."""
    raise NotImplementedError("graph_coloring is not written yet")


CHECK = TaskCheck("graph_coloring", "min", evaluate)
