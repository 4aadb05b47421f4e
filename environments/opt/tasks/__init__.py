"""The ten tasks, in the benchmark's order: the order of ``verifiers.opt.CHECKS``, the one list
of them (each task module here is named for its check and exports ``TASK``)."""

from __future__ import annotations

from importlib import import_module

from environments.opt.task import OptTask
from verifiers.opt import CHECKS

TASKS: dict[str, OptTask] = {
    name: import_module(f"environments.opt.tasks.{name}").TASK for name in CHECKS
}
