"""The one way to run a *trusted* external program: a prover, a model checker, an engine.

Untrusted code runs in the isolated workers of this package; the programs here are ours to
trust (their inputs are not), so they get no namespaces, but every one of them starts the same
way: in its own session (a stop reaches its children, e.g. Tamarin's Maude), with resource
limits (address space, CPU, no core dumps), no stdin, and a lifetime tied to the process that
started it (``PR_SET_PDEATHSIG`` from one long-lived spawning thread, and a kill at exit), so a
killed worker leaves no tool behind. That thread is the process's own: it starts with the first
tool and a forked child starts its own (a thread does not survive ``fork``: a child that
inherited the parent's executor would queue on a thread that does not exist and wait for ever),
so importing this module starts nothing. ``run`` reports a program that overruns its time as
``ToolTimeout`` (a ``TimeoutError``, which callers score as ``timeout``); ``start`` gives a
long-lived program (an interactive server) whose output is drained into a ``Tail``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import resource
import signal
import subprocess
import threading
import time
import weakref
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO

from sandbox.linux import PR_SET_PDEATHSIG, prctl

_TAIL_LINES = 60


@dataclass(frozen=True)
class ToolLimits:
    """Per-process limits of a tool (None: unlimited). ``memory_mb`` caps the address space of
    each process the tool starts, ``cpu_s`` its CPU seconds."""

    memory_mb: int | None = 8192
    cpu_s: int | None = None


class ToolTimeout(TimeoutError):
    """The tool ran past its time and was stopped (its whole session killed and reaped)."""


@dataclass(frozen=True)
class ToolResult:
    """How a finished tool run ended."""

    exit_code: int
    stdout: str
    stderr: str
    seconds: float


# PR_SET_PDEATHSIG fires when the *thread* that forked the child exits, not the process: a tool
# started from a short-lived request thread would die with that thread. Every tool is forked
# from one thread per process, which lives as long as the process; it is started on first use.
_spawner: ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()
_LIVE: weakref.WeakSet[subprocess.Popen[bytes]] = weakref.WeakSet()


def _spawner_here() -> ThreadPoolExecutor:
    """This process's spawning thread, started on first use."""
    global _spawner  # noqa: PLW0603 - one per process, reset in a forked child
    with _spawner_lock:
        if _spawner is None:
            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tool-spawn")
        return _spawner


def _forget_parent() -> None:  # pragma: no cover - runs in a forked child
    """In a forked child: the parent's spawner has no thread here and its tools are not this
    process's children (nor its to stop at exit); the lock may have been held mid-fork."""
    global _spawner, _spawner_lock
    _spawner, _spawner_lock = None, threading.Lock()
    _LIVE.clear()


os.register_at_fork(after_in_child=_forget_parent)


def _child_setup(limits: ToolLimits) -> None:  # pragma: no cover - runs between fork and exec
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if limits.memory_mb is not None:
        size = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    if limits.cpu_s is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))


def _spawn(
    args: Sequence[str], cwd: str | None, env: Mapping[str, str] | None, limits: ToolLimits
) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(  # noqa: S603 - a configured tool with our own arguments
        list(args),
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: _child_setup(limits),  # noqa: PLW1509 - the spawner forks alone
    )
    _LIVE.add(process)
    return process


def start(
    args: Sequence[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    limits: ToolLimits | None = None,
) -> subprocess.Popen[bytes]:
    """Start a tool in its own session with ``limits``; stdout and stderr are pipes the caller
    must read (``communicate``, or a ``Tail``). Raises OSError when it cannot start."""
    return _spawner_here().submit(_spawn, args, cwd, env, limits or ToolLimits()).result()


def stop(process: subprocess.Popen[bytes]) -> None:
    """Kill the tool's whole session, reap it and close its pipes; idempotent."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    process.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()
    _LIVE.discard(process)


def run(
    args: Sequence[str],
    *,
    timeout_s: float,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    limits: ToolLimits | None = None,
) -> ToolResult:
    """Run a tool to completion and return its exit code and output (decoded, errors
    replaced). Raises ``ToolTimeout`` after ``timeout_s`` (the session is killed first) and
    OSError when it cannot start."""
    started = time.perf_counter()
    process = start(args, cwd=cwd, env=env, limits=limits)
    try:
        out, err = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise ToolTimeout(f"{args[0]} ran past {timeout_s:g} s and was stopped") from None
    finally:
        if process.returncode is None:
            stop(process)
        _LIVE.discard(process)
    return ToolResult(
        process.returncode,
        out.decode(errors="replace"),
        err.decode(errors="replace"),
        time.perf_counter() - started,
    )


class Tail:
    """The last lines a long-lived tool wrote on its pipes, drained by daemon threads (a pipe
    nobody reads fills up and blocks the tool)."""

    def __init__(self, streams: Iterable[IO[bytes] | None], lines: int = _TAIL_LINES) -> None:
        self._lines: deque[str] = deque(maxlen=lines)
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._drain, args=(stream,), daemon=True, name="tool-tail")
            for stream in streams
            if stream is not None
        ]
        for thread in self._threads:
            thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(ValueError, OSError):
            for raw in iter(stream.readline, b""):
                with self._lock:
                    self._lines.append(raw.decode(errors="replace").rstrip("\n"))

    def text(self, wait_s: float = 0.0) -> str:
        """The tail so far; ``wait_s`` lets the readers catch up with a tool that exited."""
        for thread in self._threads:
            thread.join(timeout=wait_s)
        with self._lock:
            return "\n".join(self._lines)


@atexit.register
def _stop_all() -> None:  # pragma: no cover - runs at interpreter exit
    for process in list(_LIVE):
        stop(process)
