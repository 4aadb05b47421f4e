"""max_independent_set: NOT WRITTEN YET (placeholder while the task is being written)."""

from __future__ import annotations

from typing import Any

from verifiers.opt.base import TaskCheck


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Placeholder."""
    raise NotImplementedError("max_independent_set is not written yet")


CHECK = TaskCheck("max_independent_set", "max", evaluate)
