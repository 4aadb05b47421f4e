"""Host processes as the tests see them from outside: who descends from whom."""

from __future__ import annotations

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
