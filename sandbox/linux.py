"""The Linux system calls Python 3.11's ``os`` module lacks, through ctypes.

``os.unshare``/``os.setns`` arrived in 3.12; mount, pivot_root and prctl never did.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

_SYS_PIVOT_ROOT = 155  # x86_64; aarch64 uses 41
# The process's own symbols, libc's among them: ``ctypes.util.find_library`` would run
# ``ldconfig -p`` at import (in the pool's fork server) and import ``subprocess`` and with it
# ``threading`` into every worker (see ``sandbox``'s docstring).
_libc = ctypes.CDLL(None, use_errno=True)
# Resolved here, once: ``CDLL`` looks a function up on first use and caches it on itself, which
# in a run's forked process (whose set-up calls ``mount``) cost about 40 page faults of
# copy-on-write every run.
_unshare, _setns, _mount, _umount2 = _libc.unshare, _libc.setns, _libc.mount, _libc.umount2
_prctl, _syscall = _libc.prctl, _libc.syscall


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    """Move the calling process into new namespaces."""
    _check(_unshare(ctypes.c_int(flags)), "unshare")


def setns(fd: int, nstype: int) -> None:
    """Join the namespace open at ``fd``."""
    _check(_setns(ctypes.c_int(fd), ctypes.c_int(nstype)), "setns")


def mount(source: str, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    """mount(2)."""
    result = _mount(
        source.encode(),
        target.encode(),
        fstype.encode() if fstype else None,
        ctypes.c_ulong(flags),
        data.encode() if data else None,
    )
    _check(result, f"mount {source} on {target}")


def umount(target: str, flags: int = 0) -> None:
    """umount2(2)."""
    _check(_umount2(target.encode(), ctypes.c_int(flags)), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    """pivot_root(2): make ``new_root`` the root of this mount namespace."""
    number = 41 if os.uname().machine == "aarch64" else _SYS_PIVOT_ROOT
    _check(_syscall(number, new_root.encode(), put_old.encode()), "pivot_root")


def prctl(option: int, arg: int) -> None:
    """prctl(2) with one argument."""
    _check(_prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl {option}")
