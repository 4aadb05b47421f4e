"""A worker's memory accounting: the slot's memory cgroup (``sandbox.cgroups``) read around each
phase of a request (a build, a run, a test run), so that a record carries the peak of all the
run's processes together and says when the kernel killed one of them for the limit.

Without a cgroup (the address-space rlimit caps each process instead) it changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sandbox import records

if TYPE_CHECKING:
    from sandbox.cgroups import RunGroup
    from sandbox.children import Child
    from sandbox.jobs import Limits


class RunMemory:
    """The slot's group, and how many of its OOM kills have already been told."""

    def __init__(self, group: RunGroup | None) -> None:
        self.group = group
        self.oom_seen = 0

    def begin(self, limits: Limits) -> None:
        """Before a phase (build, run): the group's limit, a fresh peak and OOM count."""
        if self.group is not None:
            self.group.start(limits.memory_mb)
            self.oom_seen = 0

    def charge(self, record: dict[str, Any]) -> dict[str, Any]:
        """A phase's record with the group's figures: the peak of all the run's processes
        together, and ``memory_limit`` when the kernel killed any of them for the limit (for a
        test run, the tests whose process it killed say so instead: see ``failure``)."""
        if self.group is None:
            return record
        record["memory_mb"] = round(max(record["memory_mb"], self.group.peak_mb()), 3)
        if "tests" in record:
            return record
        if self.group.oom_kills() and record["status"] in ("ok", "runtime_error"):
            record["status"] = "memory_limit"
            record["stderr"] = (record["stderr"] + "\n" + records.OOM_NOTE).lstrip("\n")
        return record

    def failure(self, proc: Child, reply: dict[str, Any] | None) -> dict[str, Any]:
        """A test's result when its process gave no answer (killed for the run's memory?)."""
        result = records.failure(proc, reply)
        if self.group is not None and result["status"] == "runtime_error":
            kills = self.group.oom_kills()
            if kills > self.oom_seen:
                self.oom_seen = kills
                result.update(status="memory_limit", error=records.OOM_NOTE)
        return result
