"""The seccomp deny-list every sandboxed process runs under.

The worker loads the filter on itself once its isolation is set up, so every run inherits it
(loading a filter per run costs about 0.4 ms of each run's CPU). The worker still needs three
namespace calls per run; they stay open only in the exact forms it uses (``unshare`` of a PID,
mount or IPC namespace, ``setns`` into a PID namespace, ``mount``), each of which the kernel
refuses to a run anyway: a run is an unprivileged uid without capabilities and, with
``no_new_privs``, cannot regain any; the one namespace it could create without privileges, a
user namespace, is denied here in every form.

A deny-list, not an allow-list: interpreters and compilers need hundreds of ordinary syscalls,
and the namespaces already remove what these rules would otherwise guard.
"""

from __future__ import annotations

import ctypes
import errno
import os

from sandbox import linux

# Kernel attack surface, namespace re-entry, looking into other processes, host administration.
DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "umount2", "pivot_root", "chroot",
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "name_to_handle_at", "open_by_handle_at",
    "bpf", "perf_event_open", "userfaultfd", "fanotify_init", "lookup_dcookie",
    "keyctl", "add_key", "request_key",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "vhangup",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "sethostname", "setdomainname", "iopl", "ioperm",
)  # fmt: skip
SYSV_IPC = ("shmget", "semget", "msgget")
# Address families that reach beyond the process: the network namespace already has no route
# out, this makes the attempt fail fast and loudly (EACCES) under every backend.
DENIED_SOCKET_FAMILIES = (2, 10, 16, 17)  # AF_INET, AF_INET6, AF_NETLINK, AF_PACKET
NAMESPACE_FLAGS = (
    linux.CLONE_NEWNS,
    linux.CLONE_NEWUTS,
    linux.CLONE_NEWIPC,
    linux.CLONE_NEWUSER,
    linux.CLONE_NEWPID,
    linux.CLONE_NEWNET,
    0x02000000,  # CLONE_NEWCGROUP
    0x00000080,  # CLONE_NEWTIME
)
# What the worker unshares per run: a PID namespace, and in the child mount and IPC namespaces.
WORKER_UNSHARES = (linux.CLONE_NEWPID, linux.CLONE_NEWNS, linux.CLONE_NEWIPC)
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_libc = ctypes.CDLL(None, use_errno=True)  # loaded once: dlopen per run costs ~0.4 ms


def compile_filter(*, private_ipc: bool = True) -> bytes:
    """The deny-list as a BPF program (``struct sock_filter`` array). Without ``private_ipc``
    (weak isolation: no IPC namespace per run) System V IPC objects cannot be made either:
    they would outlive the run on the host, a channel to later runs."""
    # Imported here: a re-executed worker has its site-packages on sys.path only once it runs.
    import pyseccomp  # noqa: PLC0415

    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    for name in DENIED + (() if private_ipc else SYSV_IPC):
        try:
            rules.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
        except (OSError, RuntimeError, ValueError):  # unknown to this kernel/libseccomp
            continue
    for family in DENIED_SOCKET_FAMILIES:
        rules.add_rule(
            pyseccomp.ERRNO(errno.EACCES), "socket", pyseccomp.Arg(0, pyseccomp.EQ, family)
        )
    # The worker's own per-run calls, in their exact forms; every other form is refused.
    for flag in NAMESPACE_FLAGS:
        if flag not in WORKER_UNSHARES:
            rules.add_rule(
                pyseccomp.ERRNO(errno.EPERM),
                "unshare",
                pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag),
            )
    rules.add_rule(
        pyseccomp.ERRNO(errno.EPERM), "setns", pyseccomp.Arg(1, pyseccomp.NE, linux.CLONE_NEWPID)
    )
    for flag in NAMESPACE_FLAGS:
        rules.add_rule(
            pyseccomp.ERRNO(errno.EPERM), "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag)
        )
    # clone3 passes its flags in memory a filter cannot read; ENOSYS makes glibc fall back to
    # clone, which the rules above inspect.
    rules.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "clone3")
    with os.fdopen(os.memfd_create("seccomp"), "w+b") as file:
        rules.export_bpf(file)
        file.seek(0)
        return file.read()


def compile_apart(*, private_ipc: bool = True) -> bytes:
    """``compile_filter`` in a child process, for a worker: ``pyseccomp`` imports
    ``ctypes.util`` and with it ``subprocess`` and ``threading``, which a worker must not carry
    (see ``sandbox``'s docstring)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_fd)
            with os.fdopen(write_fd, "wb") as out:
                out.write(compile_filter(private_ipc=private_ipc))
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as reader:
        program = reader.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not program or len(program) % 8:
        raise OSError("could not compile the seccomp filter")
    return program


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load(program: bytes) -> None:
    """Install ``program`` on the calling process (after ``no_new_privs``); irreversible."""
    linux.prctl(linux.PR_SET_NO_NEW_PRIVS, 1)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")
