"""A worker of the namespace floor (see ``sandbox_side``): a bare interpreter (``python -S``,
nothing imported but ``os``, ``sys`` and ``ctypes``) that does per run only what full isolation
needs of the kernel, and nothing of the sandbox's code.

Started by ``sandbox_side.FloorWorker`` with pipes on stdin and stdout; the module names given
as arguments are imported first and frozen (``gc.freeze``), as a sandbox worker's warm modules
are: the *warm floor*, whose forks carry what a Python run needs pre-imported. It enters new user
(mapped from outside to a host uid range, as a sandbox worker's), mount, network, IPC and UTS
namespaces and a PID namespace with its own ``/proc``; then, per ``r`` read on stdin:
``unshare(CLONE_NEWPID)`` and a fork (the child is PID 1 of a fresh PID namespace), in the child
``unshare(CLONE_NEWNS | CLONE_NEWIPC)``, a fresh ``/proc`` and a 64 MiB ``/dev/shm`` tmpfs, ``1``
written to a pipe and exit; the worker reads the pipe, reaps the child and answers on stdout.
"""

import ctypes
import gc
import importlib
import os
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
PROC_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC
SHM_FLAGS = MS_NOSUID | MS_NODEV

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _mount(
    source: bytes, target: bytes, fstype: bytes | None, flags: int, data: bytes | None
) -> None:
    _check(_libc.mount(source, target, fstype, ctypes.c_ulong(flags), data))


def main() -> None:
    for name in sys.argv[1:]:
        importlib.import_module(name)
    gc.freeze()
    requests, replies = 0, 1
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS))
    _mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None)
    os.write(replies, b"u")  # the launcher now writes our id maps
    if os.read(requests, 1) != b"m":
        return
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
    # A PID namespace of our own with its /proc, so that each run may mount a fresh one (the
    # kernel lets a user namespace mount procfs only where one is already fully visible).
    _check(_libc.unshare(CLONE_NEWPID))
    if os.fork() != 0:
        os.wait()
        return
    _mount(b"proc", b"/proc", b"proc", PROC_FLAGS, None)
    pidns = os.open("/proc/self/ns/pid", os.O_RDONLY)
    os.write(replies, b"1")
    while os.read(requests, 1) == b"r":
        out_r, out_w = os.pipe()
        _check(_libc.unshare(CLONE_NEWPID))
        pid = os.fork()
        if pid == 0:
            _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWIPC))
            _mount(b"proc", b"/proc", b"proc", PROC_FLAGS, None)
            _mount(b"tmpfs", b"/dev/shm", b"tmpfs", SHM_FLAGS, b"mode=1777,size=64m")
            os.write(out_w, b"1\n")
            os._exit(0)
        _check(_libc.setns(pidns, CLONE_NEWPID))
        os.close(out_w)
        out = os.read(out_r, 16)
        os.close(out_r)
        os.waitpid(pid, 0)
        os.write(replies, out)


if __name__ == "__main__":
    main()
