"""Host processes as the tests see them from outside: who descends from whom."""

from __future__ import annotations

import os
from pathlib import Path


def descendants(root: int) -> set[int]:
    """Host pids below ``root`` (for a test process: its pools' launchers and workers)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs: a zombie is dead (this machine's init may reap orphans late)."""
    try:
        os.kill(pid, 0)
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (ProcessLookupError, FileNotFoundError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
