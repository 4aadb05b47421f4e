"""Process handling in a sandbox worker: forking a run's child (its own PID namespace, mounts,
session, uid, limits), feeding it, reading its pipes and channel without blocking, killing and
reaping it, and clearing up after a request. ``Children`` knows how to start a child; the worker
(``sandbox.zygote``) decides what the child runs and shapes the results (``sandbox.records``).
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import resource
import select
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from sandbox import cgroups, frames, harness, isolation, landlock, linux, records
from sandbox.jobs import Limits

SHM_MB = 64  # each run's private /dev/shm (full isolation)
CLEANUP_S = 10.0
"""How long the clean-up after a run may keep killing what the run left before the worker gives
up (the run is then the sandbox's failure)."""
# Runs' niceness, where the worker's starter sets it (the docker backend: the worker and its runs
# share one container's CPU quota, and a fork bomb's processes would starve the worker that kills
# them; inside the container's group, niceness shares only the container's own CPU).
RUN_NICE_ENV = "ENVSERVER_SANDBOX_RUN_NICE"
_HIGH_FD = 100


@dataclass
class Stream:
    """One output pipe, read without blocking, kept up to ``cap`` bytes."""

    fd: int
    cap: int
    data: bytearray = field(default_factory=bytearray)
    total: int = 0
    open: bool = True

    def pull(self) -> None:
        """Read what the pipe holds now (never blocks); past ``cap`` bytes only count."""
        try:
            chunk = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self.open = False
            return
        self.total += len(chunk)
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]

    @property
    def over(self) -> bool:
        """Whether more than ``cap`` bytes came."""
        return self.total > self.cap

    def text(self) -> str:
        """What was kept, decoded (undecodable bytes replaced)."""
        return self.data.decode("utf-8", "replace")


@dataclass
class Child:
    """A running child and what has been seen of it."""

    pid: int
    pidfd: int
    out: Stream
    err: Stream
    channel: socket.socket | None
    started: float
    reader: frames.FrameReader = field(default_factory=lambda: frames.FrameReader(16 << 20))
    pending: list[Any] = field(default_factory=list)
    status: int | None = None
    rusage: Any = None
    ended: float = 0.0
    killed_for: str = ""
    channel_error: str = ""


class Children:
    """Starts, watches, kills and reaps a worker's run children, with its isolation: a PID
    namespace per run (full isolation) or Landlock (weak), the slot's memory cgroup, the
    descriptors every run keeps, the runtime's library path."""

    def __init__(
        self,
        layout: isolation.Layout,
        *,
        group: cgroups.RunGroup | None = None,
        keep_fds: tuple[int, ...] = (),
        library_path: str = "",
    ) -> None:
        self.layout = layout
        self.full = layout.isolation == "full"
        self.pidns = os.open("/proc/self/ns/pid", os.O_RDONLY) if self.full else -1
        # Without namespaces, Landlock is what hides the host filesystem from runs.
        self.landlock = None if self.full else landlock.ruleset(*isolation.weak_paths(layout))
        self.group = group  # the slot's memory cgroup: caps a run's processes together
        self.keep_fds = keep_fds  # descriptors every run keeps (``runtime.bridge``)
        self.run_nice = int(os.environ.get(RUN_NICE_ENV) or 0)
        self.worker_only_env = _run_environment(library_path)

    def spawn(
        self,
        target: Callable[[], Any] | Exec,
        stdin: bytes,
        scratch: Path,
        limits: Limits,
        *,
        channel: bool = False,
        peer: socket.socket | None = None,
    ) -> Child:
        stdin_fd = os.memfd_create("stdin")
        os.write(stdin_fd, stdin)
        os.lseek(stdin_fd, 0, os.SEEK_SET)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        setup_r, setup_w = os.pipe()
        ours, theirs = socket.socketpair() if channel else (None, None)
        child_fds = [stdin_fd, out_w, err_w]
        if theirs is not None:
            child_fds.append(theirs.fileno())
        if peer is not None:
            child_fds.append(peer.fileno())
        sys.stdout.flush()
        sys.stderr.flush()
        if self.full:
            linux.unshare(linux.CLONE_NEWPID)  # the next child is PID 1 of a new namespace
        try:
            pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:
            self._child(target, child_fds, setup_w, scratch, limits)  # never returns
        if self.full:
            linux.setns(self.pidns, linux.CLONE_NEWPID)
        if pid < 0:
            for fd in (stdin_fd, out_w, err_w, setup_w, out_r, err_r, setup_r):
                os.close(fd)
            raise OSError("fork failed")
        for fd in (stdin_fd, out_w, err_w, setup_w):
            os.close(fd)
        if theirs is not None:
            theirs.close()
        proc = Child(
            pid=pid,
            pidfd=os.pidfd_open(pid),
            out=Stream(out_r, limits.output_bytes),
            err=Stream(err_r, limits.output_bytes),
            channel=ours,
            started=time.monotonic(),
        )
        for fd in (out_r, err_r):
            os.set_blocking(fd, False)
        setup = _read_all(setup_r)  # "1" once set up, then why an exec was refused, if it was
        os.close(setup_r)
        if setup != b"1":
            self.kill(proc, "sandbox_error")
            self.reap(proc)
            why = setup.removeprefix(b"1").decode(errors="replace")[:500]
            raise OSError(f"sandbox set-up failed: {why}")
        proc.started = time.monotonic()
        return proc

    def _child(
        self,
        target: Callable[[], Any] | Exec,
        fds: list[int],
        setup_fd: int,
        scratch: Path,
        limits: Limits,
    ) -> None:
        """In the forked child: isolate, report set-up, run. Never returns."""
        try:
            if self.group is not None:
                self.group.join()  # first: everything the run allocates counts against it
            if self.landlock is not None:
                landlock.restrict_self(self.landlock)
            if self.full:
                _private_mounts()
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _HIGH_FD) for fd in [*fds, setup_fd]]
            for index, fd in enumerate(high[:-1]):
                os.dup2(fd, index)
            setup_fd = fcntl.fcntl(high[-1], fcntl.F_DUPFD, len(fds))
            os.closerange(len(fds), setup_fd)
            _close_from(setup_fd + 1, self.keep_fds)
            os.setsid()
            uid = self.layout.run_uid
            if uid is not None:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                if self.keep_fds:  # a uid change makes /proc/self/fd root's; runs read through it
                    linux.prctl(linux.PR_SET_DUMPABLE, 1)
            _set_limits(limits)
            if self.run_nice:
                os.nice(self.run_nice)
            os.chdir(scratch)
            for name in self.worker_only_env:
                del os.environ[name]
            os.environ["HOME"] = os.environ["TMPDIR"] = str(scratch)
            os.write(setup_fd, b"1")
            if isinstance(target, Exec):
                # Open until the exec: a successful one closes it, a refused one says why.
                os.set_inheritable(setup_fd, False)
                target.start(setup_fd)
            os.close(setup_fd)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.write(setup_fd, f"{type(exc).__name__}: {exc}".encode())
            os._exit(125)
        try:
            target()
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(126)

    def pump(self, proc: Child, deadline: float) -> None:
        """Wait for anything from ``proc`` until ``deadline``; handle output caps and exit."""
        poller = select.poll()
        watched = {proc.pidfd: "exit"}
        for stream, name in ((proc.out, "out"), (proc.err, "err")):
            if stream.open:
                watched[stream.fd] = name
        if proc.channel is not None and not proc.channel_error:
            watched[proc.channel.fileno()] = "channel"
        for fd in watched:
            poller.register(fd, select.POLLIN | select.POLLHUP)
        timeout_ms = max(0, math.ceil((deadline - time.monotonic()) * 1000))
        for fd, _ in poller.poll(timeout_ms):
            what = watched[fd]
            if what == "out":
                proc.out.pull()
            elif what == "err":
                proc.err.pull()
            elif what == "channel":
                self._pull_channel(proc)
            elif proc.status is None:
                self.reap(proc)
        if (proc.out.over or proc.err.over) and not proc.killed_for:
            self.kill(proc, "output_limit")

    def _pull_channel(self, proc: Child) -> None:
        assert proc.channel is not None
        try:
            chunk = proc.channel.recv(1 << 16, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError as exc:
            proc.channel_error = str(exc)
            return
        if not chunk:
            proc.channel_error = "the program closed its channel"
            return
        try:
            proc.pending += proc.reader.feed(chunk)
        except frames.FrameError as exc:
            proc.channel_error = str(exc)

    def await_frame(self, proc: Child, deadline: float) -> dict[str, Any] | None:
        """The next frame from ``proc``'s channel; None when it died, hung up or ran out of time
        (then it is killed and ``killed_for`` says why)."""
        while not proc.pending:
            if proc.channel is None or proc.status is not None or proc.channel_error:
                return None
            if time.monotonic() >= deadline:
                self.kill(proc, "timeout")
                return None
            self.pump(proc, deadline)
        frame = proc.pending.pop(0)
        return frame if isinstance(frame, dict) else None

    def finish(self, proc: Child, limits: Limits, *, closing: bool = False) -> dict[str, Any]:
        """Wait for ``proc`` to end (killing it at its wall limit, or at once when ``closing``
        a harness process), drain its output; the execution record."""
        if proc.channel is not None:
            proc.channel.close()
            proc.channel = None
        deadline = proc.started + limits.wall_s
        if closing and proc.status is None:
            self.kill(proc, proc.killed_for or "closed")
        while proc.status is None:
            if time.monotonic() >= deadline:
                self.kill(proc, "timeout")
                break
            self.pump(proc, deadline)
        self.reap(proc)
        drain_until = time.monotonic() + 0.5  # holders of the pipes died with the namespace
        while (proc.out.open or proc.err.open) and time.monotonic() < drain_until:
            self.pump(proc, drain_until)
        for stream in (proc.out, proc.err):
            os.close(stream.fd)
            stream.open = False
        os.close(proc.pidfd)
        return records.record(proc, limits, self.layout.isolation)

    def kill(self, proc: Child, reason: str) -> None:
        """Kill the child and everything it started; ``reason`` is kept as ``killed_for``."""
        if not proc.killed_for:
            proc.killed_for = reason
        with contextlib.suppress(ProcessLookupError):
            if self.full:
                os.kill(proc.pid, signal.SIGKILL)  # PID 1 of its namespace: all of it dies
            else:
                os.killpg(proc.pid, signal.SIGKILL)

    def reap(self, proc: Child) -> None:
        """Wait for the child's exit status and usage (once)."""
        if proc.status is not None:
            return
        _, status, usage = os.wait4(proc.pid, 0)
        proc.status, proc.rusage, proc.ended = status, usage, time.monotonic()

    def cleanup(self) -> None:
        """After a request: no process of the run survives, and none is left unreaped (zombies
        still count against the uid's process limit). With a PID namespace the kernel has
        killed them all; without one, every descendant stays in the worker's tree (it is a
        subreaper), so the tree is frozen and killed here, daemons included, again until none is
        left: a process killed in the middle of a fork leaves a child that no pass saw, which
        comes back to the worker and forks on (under load, one pass and a wait let such a bomb
        outlive its run and starve the next run's forks)."""
        deadline = time.monotonic() + CLEANUP_S
        while True:
            if not self.full:
                _kill_descendants()
            try:
                while os.waitpid(-1, os.WNOHANG)[0] != 0:
                    pass
            except ChildProcessError:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"a run's processes outlived {CLEANUP_S:g} s of killing")
            time.sleep(0.001)


def _run_environment(library_path: str) -> tuple[str, ...]:
    """Give the worker's environment the values every run has, once; the names a run's process
    must remove from it (it then sets only ``HOME`` and ``TMPDIR``). Rebuilding the mapping in
    each run instead cost it about 100 page faults of copy-on-write."""
    run = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    run["PYTHONDONTWRITEBYTECODE"] = "1"
    if library_path:  # the runtime's interpreter, when a run starts it again
        run["LD_LIBRARY_PATH"] = library_path
    os.environ.update(run)
    return tuple(name for name in os.environ if name not in run)


def harness_target(mode: Callable[..., None], *args: Any) -> Callable[[], None]:
    """A child's target: one harness mode, then exit."""

    def run() -> None:
        mode(*args)
        harness.flush_and_exit(0)

    return run


def _descendants() -> set[int]:
    """Every process below this one, from the kernel's child lists."""
    found: set[int] = set()
    frontier = [os.getpid()]
    while frontier:
        pid = frontier.pop()
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{pid}/task").iterdir():
                with contextlib.suppress(OSError):
                    children = {int(c) for c in (task / "children").read_text().split()}
                    frontier += children - found
                    found |= children
    return found


def _kill_descendants() -> None:
    """Stop the whole tree first (a stopped process cannot fork a replacement), then kill it."""
    stopped: set[int] = set()
    for _ in range(100):
        fresh = _descendants() - stopped
        if not fresh:
            break
        for pid in fresh:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        stopped |= fresh
    for pid in stopped:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _private_mounts() -> None:
    """A run's own mount and IPC namespaces: a fresh ``/proc`` for its PID namespace and a fresh
    ``/dev/shm`` (POSIX shared memory and semaphores), and System V IPC of its own; all of it
    goes when the run's last process exits, so nothing passes to a later run and a full
    ``/dev/shm`` cannot break one."""
    linux.unshare(linux.CLONE_NEWNS | linux.CLONE_NEWIPC)
    linux.mount("proc", "/proc", "proc", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC)
    shm = "/dev/shm"  # noqa: S108 - the run's own, in its own mount namespace
    flags = linux.MS_NOSUID | linux.MS_NODEV
    linux.mount("tmpfs", shm, "tmpfs", flags, f"mode=1777,size={SHM_MB}m")


def _close_from(low: int, keep: tuple[int, ...]) -> None:
    """Close every descriptor from ``low`` up, except ``keep``."""
    for fd in sorted(k for k in keep if k >= low):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


@dataclass(frozen=True)
class Exec:
    """A child's target that replaces it with a program the sandbox chose: a built binary, a
    compiler, an interpreter of the language table (never one a request names). Failing to
    start it is the sandbox's failure, not the program's: ``spawn`` raises ``OSError`` (the
    request is ``sandbox_error``), so a scratch the kernel will not execute from (a ``noexec``
    mount) never turns a correct program into a wrong answer."""

    argv: tuple[str, ...]

    def start(self, report_fd: int) -> NoReturn:
        """Exec the program; if the kernel refuses, say why on ``report_fd`` and exit."""
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # Python ignores it; programs expect it
        try:
            os.execvp(self.argv[0], self.argv)  # noqa: S606 - the sandbox's own command
        except OSError as exc:
            os.write(report_fd, f"cannot run {self.argv[0]}: {exc}".encode())
        os._exit(127)


def exec_target(argv: list[str]) -> Exec:
    """A target that execs ``argv``."""
    return Exec(tuple(argv))


def _set_limits(limits: Limits) -> None:
    def cap(kind: int, value: int) -> None:
        resource.setrlimit(kind, (value, value))

    if limits.memory_mb > 0:
        cap(resource.RLIMIT_AS, limits.memory_mb << 20)
    cpu = max(1, math.ceil(limits.cpu_s))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    cap(resource.RLIMIT_FSIZE, limits.file_mb << 20)
    cap(resource.RLIMIT_NOFILE, limits.open_files)
    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_NPROC, limits.processes)


def _read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 4096):
        data += chunk
    return data
