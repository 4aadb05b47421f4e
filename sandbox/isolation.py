"""Setting up a worker's isolation, once, when it starts.

``full`` (the default wherever the kernel allows it): the worker enters new user, mount,
network, IPC, UTS and PID namespaces. Its user namespace maps to a host uid range of its own,
so nothing in it is root on the host; its mount namespace sees a minimal read-only root (``/usr``,
the Python runtime at neutral paths (``runtime``), a synthetic ``/etc``, a few device nodes) with
private tmpfs scratch space; its network namespace has only a loopback that is down. Each run
then adds fresh PID, mount and IPC namespaces with their own ``/proc`` and ``/dev/shm`` (see
``zygote``).

``weak`` (namespaces refused, e.g. in an unprivileged container): nothing here; each run gets
rlimits, seccomp, its own session and, when the worker is root, its own unprivileged uid.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from sandbox import linux
from sandbox.runtime import Runtime

SANDBOX_UID = 1000  # inside the worker's user namespace
ID_RANGE = 65536
SCRATCH = "/tmp"  # noqa: S108 - a private tmpfs inside the worker's mount namespace
CACHE = "/cache"

_STATVFS_TO_MS = (
    (os.ST_NOSUID, linux.MS_NOSUID),
    (os.ST_NODEV, linux.MS_NODEV),
    (os.ST_NOEXEC, linux.MS_NOEXEC),
    (os.ST_NOATIME, 1024),
    (os.ST_NODIRATIME, 2048),
    (os.ST_RELATIME, 1 << 21),
)
_PASSWD = "root:x:0:0:root:/:/usr/sbin/nologin\nsandbox:x:1000:1000:sandbox:/tmp:/bin/sh\n"  # noqa: S105
_GROUP = "root:x:0:\nsandbox:x:1000:\n"
_DEVICES = ("null", "zero", "full", "random", "urandom")
_ETC = ("ld.so.cache", "ld.so.conf", "alternatives", "localtime")
_TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


@dataclass(frozen=True)
class Layout:
    """Where a worker keeps scratch directories and compiled binaries, and who runs code."""

    isolation: str
    scratch: str
    cache: str
    run_uid: int | None  # None: cannot switch users (not root)


def full_layout() -> Layout:
    """Where things are inside the minimal root."""
    return Layout("full", SCRATCH, CACHE, SANDBOX_UID)


def enter_full(uid_base: int, scratch_mb: int, runtime: Runtime) -> Layout:
    """Enter the namespaces and the minimal root with ``runtime`` bound in. Returns in the
    worker proper (PID 1 of its PID namespace); the launching process stays behind as its
    parent and exits with it."""
    ready_r, ready_w = os.pipe()
    mapper = os.fork()
    if mapper == 0:  # writes the id maps from outside, where it may map a whole range
        os.close(ready_w)
        os.read(ready_r, 1)
        target = os.getppid()
        for name in ("uid_map", "gid_map"):
            Path(f"/proc/{target}/{name}").write_text(f"0 {uid_base} {ID_RANGE}\n")
        os._exit(0)
    os.close(ready_r)
    linux.unshare(
        linux.CLONE_NEWUSER
        | linux.CLONE_NEWNS
        | linux.CLONE_NEWNET
        | linux.CLONE_NEWIPC
        | linux.CLONE_NEWUTS
        | linux.CLONE_NEWPID
    )
    os.write(ready_w, b"x")
    os.close(ready_w)
    _, status = os.waitpid(mapper, 0)
    if status != 0:
        raise OSError("could not write the user namespace's id maps")
    # Host paths are opened while this process still has its host uid: after the switch to the
    # namespace's unprivileged ids they are bound through these descriptors, so the interpreter
    # may live under a directory (/root) the sandbox itself could not traverse.
    sources = _open_sources(runtime)
    os.setgroups([])
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
    child = os.fork()  # the first child is PID 1 of the new PID namespace
    if child:
        _wait_and_mirror(child)
    linux.prctl(linux.PR_SET_PDEATHSIG, signal.SIGKILL)
    _build_root(scratch_mb, sources, runtime)
    return full_layout()


def enter_weak(workdir: str, slot_uid: int) -> Layout:
    """No namespaces: scratch space in a host directory, a uid of its own when root. What a
    lost worker of the same slot left there goes first."""
    root = Path(workdir)
    shutil.rmtree(root / "scratch", ignore_errors=True)
    for path in (root, root / "scratch", root / "cache"):
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o711)  # runs (another uid) traverse to their scratch directory, no listing
    return Layout(
        "weak", str(root / "scratch"), str(root / "cache"), slot_uid if os.getuid() == 0 else None
    )


def weak_paths(layout: Layout) -> tuple[list[str], list[str]]:
    """What a weak-isolation run may read, and where it may write."""
    read_only = [*_system_paths(), "/bin", "/sbin", "/lib", "/lib64", "/etc", layout.cache]
    read_write = [layout.scratch, *(f"/dev/{name}" for name in _DEVICES)]
    return read_only, read_write


def _wait_and_mirror(child: int) -> None:
    """The launcher's whole remaining life: wait for the worker and exit as it did."""
    os.closerange(3, 1 << 16)  # the worker alone holds the control channel
    _, status = os.waitpid(child, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _open_sources(runtime: Runtime) -> dict[str, int]:
    paths = ["/usr", *(host for host, _ in runtime.binds)]
    paths += [*(f"/etc/{name}" for name in _ETC), *(f"/dev/{d}" for d in _DEVICES)]
    paths += [
        f"/{name}"
        for name in _TOP_LEVEL
        if Path("/", name).is_dir() and not Path("/", name).is_symlink()
    ]
    return {path: os.open(path, os.O_PATH) for path in paths if Path(path).exists()}


def _bind(sources: dict[str, int], path: str, target: Path, *, writable: bool = False) -> None:
    source = f"/proc/self/fd/{sources[path]}"
    if Path(source).is_dir():
        target.mkdir(parents=True, exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()
    linux.mount(source, str(target), None, linux.MS_BIND | linux.MS_REC)
    if writable:
        return
    # A bind mount inherits locked flags (nosuid, nodev, ...) that a remount must repeat.
    kept = os.statvfs(target).f_flag
    flags = linux.MS_REMOUNT | linux.MS_BIND | linux.MS_RDONLY
    for st_flag, ms_flag in _STATVFS_TO_MS:
        if kept & st_flag:
            flags |= ms_flag
    linux.mount("none", str(target), None, flags)


def _system_paths() -> list[str]:
    """What code needs to run, where the host has it: /usr, the interpreter's installation and
    its environment (weak isolation, which cannot move them)."""
    paths = ["/usr"]
    for prefix in (sys.base_prefix, sys.prefix):
        real = os.path.realpath(prefix)
        if not any(real == p or real.startswith(p + "/") for p in paths):
            paths.append(real)
    return paths


def _build_root(scratch_mb: int, sources: dict[str, int], runtime: Runtime) -> None:
    linux.mount("none", "/", None, linux.MS_REC | linux.MS_PRIVATE)
    new = Path("/tmp")  # noqa: S108 - shadowed by a private tmpfs in this mount namespace only
    linux.mount("tmpfs", str(new), "tmpfs", linux.MS_NOSUID, "mode=0755,size=16m")
    for name, size in ((SCRATCH, scratch_mb), (CACHE, 256)):
        (new / name.lstrip("/")).mkdir()
        linux.mount(
            "tmpfs", str(new / name.lstrip("/")), "tmpfs", linux.MS_NOSUID | linux.MS_NODEV,
            f"mode=0711,size={size}m",
        )  # fmt: skip
    _bind(sources, "/usr", new / "usr")
    for source, inside in runtime.binds:
        _bind(sources, source, new / inside.lstrip("/"))
    for name in _TOP_LEVEL:
        host = Path("/") / name
        if host.is_symlink():
            (new / name).symlink_to(host.readlink())
        elif str(host) in sources:
            _bind(sources, str(host), new / name)
    etc = new / "etc"
    etc.mkdir(exist_ok=True)
    (etc / "passwd").write_text(_PASSWD)
    (etc / "group").write_text(_GROUP)
    (etc / "hosts").write_text("127.0.0.1 localhost\n")
    for name in _ETC:
        if f"/etc/{name}" in sources:
            _bind(sources, f"/etc/{name}", etc / name)
    dev = new / "dev"
    for name in _DEVICES:
        _bind(sources, f"/dev/{name}", dev / name, writable=True)
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        (dev / name).symlink_to(f"/proc/self/fd/{fd}")
    (dev / "fd").symlink_to("/proc/self/fd")
    (dev / "shm").mkdir(exist_ok=True)  # each run mounts its own there
    (new / "proc").mkdir(exist_ok=True)
    # The worker's own /proc, so that each run may mount a fresh one over it (the kernel lets a
    # user namespace mount procfs only where one is already fully visible).
    linux.mount(
        "proc", str(new / "proc"), "proc", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC
    )
    (new / ".old").mkdir()
    linux.pivot_root(str(new), str(new / ".old"))
    os.chdir("/")
    linux.umount("/.old", linux.MNT_DETACH)
    Path("/.old").rmdir()
    linux.mount("none", "/", None, linux.MS_REMOUNT | linux.MS_BIND | linux.MS_RDONLY)
    for fd in sources.values():
        os.close(fd)
