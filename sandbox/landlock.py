"""Landlock (unprivileged filesystem, network and signal confinement) for weak isolation.

Where namespaces are refused, a run would otherwise see the whole host filesystem with its
uid's permissions, which for a server not running as root is the server's own uid (its key
file, its data). A Landlock domain limits the run to reading the system and interpreter paths
and writing its scratch directory; on ABI 4+ it refuses TCP, and on ABI 6+ it cannot signal or
reach abstract sockets outside itself. The worker builds the ruleset once; each run only
calls ``restrict_self`` (a few microseconds).
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Iterable
from pathlib import Path

_CREATE, _ADD_RULE, _RESTRICT = 444, 445, 446  # same numbers on x86_64 and aarch64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_V1 = (1 << 13) - 1  # execute ... make_sym
_FS_BY_ABI = {1: _FS_V1, 2: _FS_V1 | 1 << 13, 3: _FS_V1 | 3 << 13, 5: _FS_V1 | 7 << 13}
_NET_TCP = 0b11  # bind, connect
_SCOPES = 0b11  # abstract unix sockets, signals
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | 1 << 14 | 1 << 15  # rights a non-directory takes
READ_ONLY = EXECUTE | READ_FILE | READ_DIR

_libc = ctypes.CDLL(None, use_errno=True)


def abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is unavailable."""
    version = _libc.syscall(_CREATE, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(0, int(version))


def _fs_rights(version: int) -> int:
    return next(rights for v, rights in sorted(_FS_BY_ABI.items(), reverse=True) if version >= v)


def ruleset(read_only: Iterable[str], read_write: Iterable[str]) -> int | None:
    """A ruleset fd allowing exactly these paths (those that exist), or None without Landlock."""
    version = abi()
    if version == 0:
        return None
    handled = _fs_rights(version)
    attr = struct.pack(
        "<QQQ", handled, _NET_TCP if version >= 4 else 0, _SCOPES if version >= 6 else 0
    )
    size = 8 if version < 4 else (16 if version < 6 else 24)
    buffer = ctypes.create_string_buffer(attr[:size], size)
    fd = int(_libc.syscall(_CREATE, buffer, ctypes.c_size_t(size), 0))
    if fd < 0:
        return None
    try:
        for paths, rights in ((read_only, READ_ONLY), (read_write, handled)):
            for path in paths:
                _allow(fd, path, rights & handled)
    except OSError:
        os.close(fd)
        raise
    return fd


def _allow(ruleset_fd: int, path: str, rights: int) -> None:
    try:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path this machine lacks
    try:
        if not Path(f"/proc/self/fd/{target}").is_dir():
            rights &= _FILE_RIGHTS
        rule = ctypes.create_string_buffer(struct.pack("<Qi", rights, target), 12)
        if _libc.syscall(_ADD_RULE, ruleset_fd, _RULE_PATH_BENEATH, rule, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"landlock rule for {path}: {os.strerror(err)}")
    finally:
        os.close(target)


def restrict_self(ruleset_fd: int) -> None:
    """Confine the calling process (and its future children) to the ruleset; irreversible."""
    if _libc.syscall(_RESTRICT, ruleset_fd, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock: {os.strerror(err)}")
