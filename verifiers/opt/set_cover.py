"""set_cover: NOT WRITTEN YET (placeholder while the task is being written)."""

from __future__ import annotations

from typing import Any

from verifiers.opt.base import TaskCheck


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Placeholder."""
    raise NotImplementedError("set_cover is not written yet")


CHECK = TaskCheck("set_cover", "min", evaluate)
