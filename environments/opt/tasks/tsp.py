"""tsp: NOT WRITTEN YET (placeholder while the task is being written)."""

from __future__ import annotations

from environments.opt.task import OptTask

TASK: OptTask | None = None
