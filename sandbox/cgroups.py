"""Memory cgroups: a cap on a run's total memory, all its processes together, and its real peak.

``RLIMIT_AS`` caps each process; a program that forks 16 children of 400 MiB each holds 6.4 GiB
under a 1 GiB limit. Where the machine lets the server create memory cgroups (root, or a
delegated subtree; cgroup v2 with the memory controller, else the v1 memory hierarchy), each
worker slot gets one group, made by the pool (``Groups``, on the host side) when the slot's
worker starts and removed when it stops. The worker opens the group's files once, before it
isolates itself, and keeps them as descriptors (``RunGroup``): per run it sets the limit, resets
the peak and reads the OOM-kill count (a few microseconds each); the run's first process moves
itself into the group by writing ``0`` to the inherited ``cgroup.procs`` descriptor (about
0.04 ms) before anything of the program runs, and its descendants inherit the group. The
worker itself stays outside, so the kernel's OOM killer only ever picks a process of the run.

Layout: ``<parent>/envserver-sandbox-<pid>-<n>/slot<i>``, where ``parent`` is the server's own
cgroup unless configured (``ENVSERVER_SANDBOX_CGROUP``).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

PREFIX = "envserver-sandbox-"
_counter = itertools.count()
_MIB = 1 << 20
UNLIMITED = 1 << 40  # MiB


@dataclass(frozen=True)
class Hierarchy:
    """Where groups can be made: the cgroup version and the directory new groups go under."""

    version: int  # 1 or 2
    parent: Path


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(mount point, root inside the hierarchy, fstype, super options) of cgroup mounts."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                found.append((fields[4], fields[3], tail[0], set(tail[2].split(","))))
    return found


def _own(controller: str) -> str | None:
    """This process's cgroup path in the hierarchy of ``controller`` ('' for v2)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if (controller == "" and names == "") or controller in names.split(","):
                return path
    return None


def _under(mount: str, root: str, path: str) -> Path:
    """The directory of cgroup ``path`` under a mount of the hierarchy at ``root``."""
    if root != "/" and (path == root or path.startswith(root + "/")):
        path = path[len(root) :]
    return Path(mount, path.lstrip("/"))


def find(parent: str = "") -> tuple[Hierarchy | None, str]:
    """The hierarchy to make groups in (``parent`` if given, else this process's own cgroup),
    or None and why not."""
    mounts = _mounts()
    v2 = next((m for m in mounts if m[2] == "cgroup2"), None)
    v1 = next((m for m in mounts if m[2] == "cgroup" and "memory" in m[3]), None)
    reasons = []
    if v2 is not None:
        own = _own("")
        base = Path(parent) if parent else _under(v2[0], v2[1], own or "/")
        problem = _v2_ready(base)
        if problem is None:
            return Hierarchy(2, base), ""
        reasons.append(f"cgroup v2 at {base}: {problem}")
    if v1 is not None:
        own = _own("memory")
        base = Path(parent) if parent else _under(v1[0], v1[1], own or "/")
        if not (base / "memory.limit_in_bytes").exists():
            reasons.append(f"{base} is not a cgroup v1 memory group")
        elif os.access(base, os.W_OK):
            return Hierarchy(1, base), ""
        else:
            reasons.append(f"cgroup v1 memory at {base}: not writable")
    if not reasons:
        reasons.append("no memory cgroup controller is mounted")
    return None, "; ".join(reasons)


def _v2_ready(base: Path) -> str | None:
    """Why memory groups cannot be made under ``base`` (None: they can)."""
    try:
        controllers = (base / "cgroup.controllers").read_text().split()
    except OSError as exc:
        return exc.strerror or str(exc)
    if "memory" not in controllers:
        return "the memory controller is not available there"
    if not os.access(base / "cgroup.subtree_control", os.W_OK):
        return "not writable"
    try:
        if "memory" not in (base / "cgroup.subtree_control").read_text().split():
            (base / "cgroup.subtree_control").write_text("+memory")
    except OSError as exc:  # EBUSY: the group holds processes (cgroup v2's "no internal ones")
        return f"cannot enable the memory controller for its children ({exc.strerror})"
    return None


class Groups:
    """The pool's groups: one directory for the pool, one group per slot (host side)."""

    def __init__(self, hierarchy: Hierarchy) -> None:
        self.hierarchy = hierarchy
        _remove_stale(hierarchy.parent)
        self.root = hierarchy.parent / f"{PREFIX}{os.getpid()}-{next(_counter)}"
        self.root.mkdir(mode=0o755)
        if hierarchy.version == 2:
            try:
                (self.root / "cgroup.subtree_control").write_text("+memory")
            except OSError:
                self.root.rmdir()
                raise

    @classmethod
    def open(cls, parent: str = "") -> tuple[Groups | None, str]:
        """The pool's groups, or None and why the run's memory cannot be capped as a whole."""
        hierarchy, reason = find(parent)
        if hierarchy is None:
            return None, reason
        try:
            return cls(hierarchy), ""
        except OSError as exc:
            return None, f"cannot create a cgroup under {hierarchy.parent}: {exc}"

    def slot(self, slot: int) -> str:
        """The (fresh) group of ``slot``, as ``<version>:<path>`` for the worker's command line."""
        path = self.root / f"slot{slot}"
        _remove(path)  # a group of a previous worker of this slot (dead by now)
        path.mkdir(mode=0o755)
        return f"{self.hierarchy.version}:{path}"

    def release(self, spec: str) -> None:
        """Remove a slot's group (its worker has stopped)."""
        _remove(Path(spec.partition(":")[2]))

    def close(self) -> None:
        """Remove every group of the pool."""
        if self.root.exists():
            for child in self.root.iterdir():
                if child.is_dir():
                    _remove(child)
            _remove(self.root)


def _log() -> logging.Logger:
    """The sandbox's logger, imported on the server's side only: ``logging`` brings
    ``threading``, which a worker must not carry (see ``sandbox``'s docstring)."""
    import logging  # noqa: PLC0415 - see the docstring

    return logging.getLogger("envserver.sandbox")


def _remove(path: Path) -> None:
    """rmdir a group, once the processes that were in it are gone (they may take a moment to
    leave after being killed)."""
    for _ in range(300):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                _log().warning("cannot remove cgroup %s: %s", path, exc)
                return
            _kill_members(path)
            time.sleep(0.01)
    _log().warning("cgroup %s is still busy; left in place", path)


def _kill_members(path: Path) -> None:
    with contextlib.suppress(OSError):
        for pid in (path / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), 9)


def _remove_stale(parent: Path) -> None:
    """Groups left by pools whose server died without closing them."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            if not entry.name.startswith(PREFIX):
                continue
            pid = entry.name[len(PREFIX) :].split("-")[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                for child in entry.iterdir():
                    if child.is_dir():
                        _remove(child)
                _remove(entry)


# -- the worker's side ---------------------------------------------------------------------------

_FILES = {
    # name: (v1 file, v2 file, open flags)
    "procs": ("cgroup.procs", "cgroup.procs", os.O_WRONLY),
    "limit": ("memory.limit_in_bytes", "memory.max", os.O_WRONLY),
    "swap": ("memory.memsw.limit_in_bytes", "memory.swap.max", os.O_WRONLY),
    "peak": ("memory.max_usage_in_bytes", "memory.peak", os.O_RDWR),
    "usage": ("memory.usage_in_bytes", "memory.current", os.O_RDONLY),
    "events": ("memory.oom_control", "memory.events", os.O_RDONLY),
}


class RunGroup:
    """A slot's group as the worker holds it: descriptors opened before isolation."""

    def __init__(self, version: int, fds: dict[str, int]) -> None:
        self.version, self.fds = version, fds
        self.limit_mb = UNLIMITED  # as the kernel makes a group
        self.baseline = 0
        self.ooms = 0
        self.peak_resets = "peak" in fds

    @classmethod
    def open(cls, spec: str) -> RunGroup:
        """Open the files of the group ``spec`` (``<version>:<path>``, from ``Groups.slot``)."""
        version, _, path = spec.partition(":")
        fds: dict[str, int] = {}
        for name, (v1, v2, flags) in _FILES.items():
            try:
                fd = os.open(Path(path, v1 if version == "1" else v2), flags | os.O_CLOEXEC)
            except FileNotFoundError:
                if name in ("swap", "peak"):  # no swap accounting; a kernel before 5.19
                    continue
                raise
            fds[name] = fd
        if version == "2" and "swap" in fds:
            _write(fds["swap"], "0")  # the cap is on memory, not memory plus swap
        return cls(int(version), fds)

    def handoff(self) -> str:
        """The descriptors as text for a re-executed worker (they stay open across exec)."""
        for fd in self.fds.values():
            os.set_inheritable(fd, True)
        return f"{self.version}:" + ",".join(f"{name}={fd}" for name, fd in self.fds.items())

    @classmethod
    def adopt(cls, text: str) -> RunGroup:
        """The group from ``handoff``'s text, in the re-executed worker."""
        version, _, pairs = text.partition(":")
        fds = {name: int(fd) for name, _, fd in (pair.partition("=") for pair in pairs.split(","))}
        for fd in fds.values():
            os.set_inheritable(fd, False)
        return cls(int(version), fds)

    @property
    def procs_fd(self) -> int:
        """The descriptor a run's first process writes ``0`` to, to join the group."""
        return self.fds["procs"]

    def join(self) -> None:
        """Move the calling process into the group (in a run's process, before the program)."""
        os.write(self.fds["procs"], b"0")

    def start(self, limit_mb: int) -> None:
        """Before a run: its limit, a fresh peak and the OOM-kill count so far."""
        if limit_mb != self.limit_mb:
            self._set_limit(limit_mb)
        if self.peak_resets:
            try:
                _write(self.fds["peak"], "0")  # v2: resettable since Linux 6.12
            except OSError:
                self.peak_resets = False
        self.baseline = _read_int(self.fds["usage"])
        self.ooms = self._oom_count()

    def _set_limit(self, limit_mb: int) -> None:
        value = str(limit_mb * _MIB)
        if self.version == 2:
            _write(self.fds["limit"], value)
        else:  # v1 keeps memory <= memory+swap at every step
            order = ("limit", "swap") if limit_mb < self.limit_mb else ("swap", "limit")
            for name in order:
                if name in self.fds:
                    _write(self.fds[name], value)
        self.limit_mb = limit_mb

    def peak_mb(self) -> float:
        """The run's peak charge (all its processes, tmpfs files it wrote), MiB: the group's peak
        since ``start`` less what was charged then (page cache of earlier runs). 0 when the
        kernel cannot reset the peak."""
        if not self.peak_resets:
            return 0.0
        return max(0, _read_int(self.fds["peak"]) - self.baseline) / _MIB

    def oom_kills(self) -> int:
        """Processes the kernel killed for the group's limit since ``start``."""
        return self._oom_count() - self.ooms

    def _oom_count(self) -> int:
        text = os.pread(self.fds["events"], 4096, 0).decode()
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0


def _write(fd: int, text: str) -> None:
    os.pwrite(fd, text.encode(), 0)


def _read_int(fd: int) -> int:
    return int(os.pread(fd, 64, 0).split()[0])
