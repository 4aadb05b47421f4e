"""A sandbox worker ("zygote"): a warm, isolated Python process that runs programs on request.

The pool starts one per slot (``python -m sandbox.zygote``) and talks to it in frames on two
pipes. The worker sets up its isolation once (``isolation``), pre-imports common modules, then
for each request forks a child per program: a fresh PID namespace with its own ``/proc`` (so no
grandchild outlives the run), all inherited descriptors closed, its own session, an
unprivileged uid, rlimits, the worker's seccomp filter, a private scratch directory, a
wall-clock limit.
Python runs in the fork itself (no exec: imports are already paid); other languages exec.

Requests and replies are plain JSON (see ``sandbox.model`` for the schema the pool validates).
The worker never judges: it returns outputs, and the trusted side compares them.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import errno
import fcntl
import gc
import hashlib
import importlib
import json
import math
import os
import resource
import select
import shutil
import signal
import socket
import stat
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from sandbox import (
    cgroups,
    frames,
    harness,
    isolation,
    landlock,
    languages,
    linux,
    probe,
    runtime,
    seccomp,
)

WARM_MODULES = (
    "array", "bisect", "cmath", "collections", "copy", "dataclasses", "datetime", "decimal",
    "enum", "fractions", "functools", "hashlib", "heapq", "io", "itertools", "json", "math",
    "numbers", "operator", "random", "re", "statistics", "string", "textwrap", "typing",
    "unittest",
)  # fmt: skip
CACHE_ENTRIES = 128
OOM_NOTE = "killed: the run's processes together went over its memory limit"
TAIL = 4096  # bytes of stderr kept when a frame carries an error
SHM_MB = 64  # each run's private /dev/shm (full isolation)
_HIGH_FD = 100


@dataclass(frozen=True)
class Limits:
    """Per-run limits (the pool fills in defaults)."""

    wall_s: float
    cpu_s: float
    memory_mb: int
    output_bytes: int
    file_mb: int
    processes: int
    open_files: int

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Limits:
        """From the request's JSON."""
        return cls(**{name: raw[name] for name in cls.__dataclass_fields__})


PROBE_LIMITS = Limits(
    wall_s=60, cpu_s=60, memory_mb=2048, output_bytes=1 << 16, file_mb=16, processes=64,
    open_files=256,
)  # fmt: skip


@dataclass
class _Stream:
    """One output pipe, read without blocking, kept up to ``cap`` bytes."""

    fd: int
    cap: int
    data: bytearray = field(default_factory=bytearray)
    total: int = 0
    open: bool = True

    def pull(self) -> None:
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
        return self.total > self.cap

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


@dataclass
class _Proc:
    """A running child and what has been seen of it."""

    pid: int
    pidfd: int
    out: _Stream
    err: _Stream
    channel: socket.socket | None
    started: float
    reader: frames.FrameReader = field(default_factory=lambda: frames.FrameReader(16 << 20))
    pending: list[Any] = field(default_factory=list)
    status: int | None = None
    rusage: Any = None
    ended: float = 0.0
    killed_for: str = ""
    channel_error: str = ""


class Worker:
    """The request loop of one zygote."""

    def __init__(
        self,
        layout: isolation.Layout,
        control: tuple[int, int],
        *,
        group: cgroups.RunGroup | None = None,
        keep_fds: tuple[int, ...] = (),
        library_path: str = "",
    ) -> None:
        self.layout = layout
        self.control_in, self.control_out = control
        self.full = layout.isolation == "full"
        self.pidns = os.open("/proc/self/ns/pid", os.O_RDONLY) if self.full else -1
        # Without namespaces, Landlock is what hides the host filesystem from runs.
        self.landlock = None if self.full else landlock.ruleset(*isolation.weak_paths(layout))
        self.group = group  # the slot's memory cgroup: caps a run's processes together
        self.keep_fds = keep_fds  # descriptors every run keeps (``runtime.bridge``)
        self.library_path = library_path
        self.oom_seen = 0
        self.runs = 0
        # On the worker itself: every run inherits it.
        seccomp.load(seccomp.compile_filter(private_ipc=self.full))

    # -- the loop ------------------------------------------------------------------------------

    def serve(self) -> None:
        """Answer requests until the pool hangs up."""
        while True:
            try:
                request = frames.read(self.control_in)
            except frames.FrameError:
                return
            try:
                reply = self.handle(request)
            except Exception as exc:
                reply = {"status": "sandbox_error", "detail": f"{type(exc).__name__}: {exc}"}
            frames.write(self.control_out, reply)

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request: ``ping`` or ``run``."""
        if request.get("op") == "ping":
            return {"status": "ok", "isolation": self.layout.isolation, "pid": os.getpid()}
        language = languages.get(request["language"])
        _preload(language.preload)
        scratch = self._scratch()
        try:
            try:
                record = self._execute(language, request, scratch)
            finally:
                self._cleanup()  # from here on no process of the run touches the scratch dir
            if request.get("fetch_files"):
                record["files"] = _fetch(scratch, request["fetch_files"])
            record["isolation"] = self.layout.isolation
            return record
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _execute(
        self, language: languages.Language, request: dict[str, Any], scratch: Path
    ) -> dict[str, Any]:
        limits = Limits.of(request["limits"])
        self._write_files(scratch, request.get("files") or {})
        binary, compiled = self._build(language, request["source"], scratch, request)
        if compiled is not None and binary is None:
            return {**compiled, "status": "compile_error", "compile": compiled}
        self.begin(limits)
        if request.get("tests") is None:
            record = self._run_once(language, request, binary, scratch, limits)
        else:
            record = self._run_tests(language, request, binary, scratch, limits)
        record["compile"] = compiled
        return self.charge(record)

    # -- memory --------------------------------------------------------------------------------

    def begin(self, limits: Limits) -> None:
        """Before a phase (build, run): the group's limit, a fresh peak and OOM count."""
        if self.group is not None:
            self.group.start(limits.memory_mb)
            self.oom_seen = 0

    def charge(self, record: dict[str, Any]) -> dict[str, Any]:
        """A phase's record with the group's figures: the peak of all the run's processes
        together, and ``memory_limit`` when the kernel killed any of them for the limit (for a
        test run, the tests whose process it killed say so instead: see ``failure``)."""
        if self.group is None:
            return record
        record["memory_mb"] = round(max(record["memory_mb"], self.group.peak_mb()), 3)
        if "tests" in record:
            return record
        if self.group.oom_kills() and record["status"] in ("ok", "runtime_error"):
            record["status"] = "memory_limit"
            record["stderr"] = (record["stderr"] + "\n" + OOM_NOTE).lstrip("\n")
        return record

    def failure(self, proc: _Proc, reply: dict[str, Any] | None) -> dict[str, Any]:
        """A test's result when its process gave no answer (killed for the run's memory?)."""
        result = _failure(proc, reply)
        if self.group is not None and result["status"] == "runtime_error":
            kills = self.group.oom_kills()
            if kills > self.oom_seen:
                self.oom_seen = kills
                result.update(status="memory_limit", error=OOM_NOTE)
        return result

    # -- files and builds ----------------------------------------------------------------------

    def _scratch(self) -> Path:
        self.runs += 1
        path = Path(self.layout.scratch, f"run{self.runs}")
        path.mkdir(mode=0o700)
        self._own(path)
        return path

    def _own(self, path: Path) -> None:
        if self.layout.run_uid is not None:
            os.chown(path, self.layout.run_uid, self.layout.run_uid)

    def _write_files(self, scratch: Path, files: dict[str, str]) -> None:
        for name, content in files.items():
            target = scratch / name  # names were checked by the pool: relative, no '..'
            for parent in reversed(target.relative_to(scratch).parents):
                if not (scratch / parent).exists():
                    (scratch / parent).mkdir()
                    self._own(scratch / parent)
            target.write_bytes(base64.b64decode(content))
            self._own(target)

    def _build(
        self, language: languages.Language, source: str, scratch: Path, request: dict[str, Any]
    ) -> tuple[str | None, dict[str, Any] | None]:
        """Write the source; for a compiled language, the cached binary (None if the build
        failed) and the compile record (None on a cache hit or for interpreted languages)."""
        (scratch / language.source_file).write_text(source)
        self._own(scratch / language.source_file)
        if not language.compiled:
            return None, None
        digest = hashlib.sha256(repr((language.compile, source)).encode()).hexdigest()[:32]
        cached = Path(self.layout.cache, digest)
        if cached.exists():
            os.utime(cached)
            return str(cached), None
        argv = [a.format(src=language.source_file, bin="main") for a in language.compile]
        limits = Limits.of(request["compile_limits"])
        self.begin(limits)
        proc = self.spawn(_exec(argv), b"", scratch, limits)
        record = self.charge(self.finish(proc, limits))
        if record["status"] != "ok":
            return None, record
        try:  # the binary is the build's output: read it without following links
            with os.fdopen(_open_beneath(scratch, "main"), "rb") as built:
                cached.write_bytes(built.read())
        except OSError as exc:
            return None, {**record, "status": "runtime_error", "stderr": f"no binary: {exc}"}
        cached.chmod(0o755)
        self._evict()
        return str(cached), record

    def _evict(self) -> None:
        entries = sorted(Path(self.layout.cache).iterdir(), key=lambda p: p.stat().st_mtime)
        for stale in entries[:-CACHE_ENTRIES]:
            stale.unlink(missing_ok=True)

    # -- runs ----------------------------------------------------------------------------------

    def _target(
        self, language: languages.Language, source: str, binary: str | None
    ) -> Callable[[], None]:
        if language.warm:
            return lambda: harness.flush_and_exit(harness.run_main(source))
        argv = [binary] if binary else [a.format(src=language.source_file) for a in language.run]
        return _exec(argv)

    def _run_once(
        self,
        language: languages.Language,
        request: dict[str, Any],
        binary: str | None,
        scratch: Path,
        limits: Limits,
    ) -> dict[str, Any]:
        stdin = str(request.get("stdin") or "").encode()
        proc = self.spawn(self._target(language, request["source"], binary), stdin, scratch, limits)
        return self.finish(proc, limits)

    def _run_tests(
        self,
        language: languages.Language,
        request: dict[str, Any],
        binary: str | None,
        scratch: Path,
        limits: Limits,
    ) -> dict[str, Any]:
        """All tests of one program: in one warm process for Python, one exec each otherwise.
        After a test times out the rest are not run and count as timeouts."""
        tests, source = request["tests"], request["source"]
        items = tests["items"]
        session = _TestSession(self, scratch, limits, float(tests["per_test_s"]))
        if not language.warm:
            results = session.each_exec(self._target(language, source, binary), items)
        elif tests["kind"] == "stdin":
            results = session.script(source, items)
        elif tests["kind"] == "call":
            results = session.calls(source, str(tests["entry_point"]), items)
        else:
            results = session.asserts(source, tests.get("entry_point"), items)
        results += [_timeout_result()] * (len(items) - len(results))
        for proc in session.procs:
            if proc.status is None or proc.out.open:
                self.finish(proc, limits, closing=True)
        return {"status": "ok", "tests": results, **_summary(session.procs)}

    def ask(self, proc: _Proc, message: dict[str, Any], deadline: float) -> dict[str, Any]:
        """Send one test to a harness process; its result as the trusted side will see it."""
        started = time.monotonic()
        try:
            assert proc.channel is not None
            frames.write(proc.channel.fileno(), message)
        except OSError:
            return self.failure(proc, None)
        reply = self.await_frame(proc, deadline)
        elapsed = time.monotonic() - started
        if reply is None:
            return {**self.failure(proc, None), "time_s": elapsed}
        return {**_harness_result(reply), "time_s": elapsed}

    def await_frame(self, proc: _Proc, deadline: float) -> dict[str, Any] | None:
        """The next frame from ``proc``'s channel; None when it died, hung up or ran out of time
        (then it is killed and ``killed_for`` says why)."""
        while not proc.pending:
            if proc.channel is None or proc.status is not None or proc.channel_error:
                return None
            if time.monotonic() >= deadline:
                self.kill(proc, "timeout")
                return None
            self._pump(proc, deadline)
        frame = proc.pending.pop(0)
        return frame if isinstance(frame, dict) else None

    # -- process plumbing ----------------------------------------------------------------------

    def spawn(
        self,
        target: Callable[[], Any],
        stdin: bytes,
        scratch: Path,
        limits: Limits,
        *,
        channel: bool = False,
        peer: socket.socket | None = None,
    ) -> _Proc:
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
        proc = _Proc(
            pid=pid,
            pidfd=os.pidfd_open(pid),
            out=_Stream(out_r, limits.output_bytes),
            err=_Stream(err_r, limits.output_bytes),
            channel=ours,
            started=time.monotonic(),
        )
        for fd in (out_r, err_r):
            os.set_blocking(fd, False)
        setup = _read_all(setup_r)
        os.close(setup_r)
        if setup != b"1":
            self.kill(proc, "sandbox_error")
            self._reap(proc)
            raise OSError(f"sandbox set-up failed: {setup.decode(errors='replace')[:500]}")
        proc.started = time.monotonic()
        return proc

    def _child(
        self,
        target: Callable[[], Any],
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
            os.chdir(scratch)
            os.environ.clear()
            os.environ.update(
                PATH="/usr/local/bin:/usr/bin:/bin",
                HOME=str(scratch),
                TMPDIR=str(scratch),
                LANG="C.UTF-8",
                PYTHONDONTWRITEBYTECODE="1",
            )
            if self.library_path:  # the runtime's interpreter, when a run starts it again
                os.environ["LD_LIBRARY_PATH"] = self.library_path
            os.write(setup_fd, b"1")
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

    def _pump(self, proc: _Proc, deadline: float) -> None:
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
                self._reap(proc)
        if (proc.out.over or proc.err.over) and not proc.killed_for:
            self.kill(proc, "output_limit")

    def _pull_channel(self, proc: _Proc) -> None:
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

    def finish(self, proc: _Proc, limits: Limits, *, closing: bool = False) -> dict[str, Any]:
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
            self._pump(proc, deadline)
        self._reap(proc)
        drain_until = time.monotonic() + 0.5  # holders of the pipes died with the namespace
        while (proc.out.open or proc.err.open) and time.monotonic() < drain_until:
            self._pump(proc, drain_until)
        for stream in (proc.out, proc.err):
            os.close(stream.fd)
            stream.open = False
        os.close(proc.pidfd)
        return _record(proc, limits, self.layout.isolation)

    def kill(self, proc: _Proc, reason: str) -> None:
        if not proc.killed_for:
            proc.killed_for = reason
        with contextlib.suppress(ProcessLookupError):
            if self.full:
                os.kill(proc.pid, signal.SIGKILL)  # PID 1 of its namespace: all of it dies
            else:
                os.killpg(proc.pid, signal.SIGKILL)

    def _reap(self, proc: _Proc) -> None:
        if proc.status is not None:
            return
        _, status, usage = os.wait4(proc.pid, 0)
        proc.status, proc.rusage, proc.ended = status, usage, time.monotonic()

    def probe(self, packages: bool) -> str | None:
        """Run the start-up probe (``sandbox.probe``) as a run; None when runs can use the
        runtime, else why not."""
        scratch = self._scratch()
        try:
            self.begin(PROBE_LIMITS)
            target = probe.program(probe.modules(packages), probe.tools())
            proc = self.spawn(target, b"", scratch, PROBE_LIMITS)
            return probe.verdict(self.charge(self.finish(proc, PROBE_LIMITS)))
        finally:
            self._cleanup()
            shutil.rmtree(scratch, ignore_errors=True)

    def _cleanup(self) -> None:
        """After a request: no process of the run survives, and none is left unreaped (zombies
        still count against the uid's process limit). With a PID namespace the kernel has
        killed them all; without one, every descendant stays in the worker's tree (it is a
        subreaper), so the tree is frozen and killed here, daemons included."""
        if not self.full:
            _kill_descendants()
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                time.sleep(0.001)


class _TestSession:
    """The processes of one program's test run, and its budgets: ``per_test`` for each answer,
    the program's ``wall_s`` for all of them."""

    def __init__(self, worker: Worker, scratch: Path, limits: Limits, per_test: float) -> None:
        self.worker, self.scratch, self.limits, self.per_test = worker, scratch, limits, per_test
        self.deadline = time.monotonic() + limits.wall_s
        self.procs: list[_Proc] = []

    def _due(self) -> float:
        return min(self.deadline, time.monotonic() + self.per_test)

    def start(
        self, target: Callable[[], Any], peer: socket.socket | None = None
    ) -> tuple[_Proc, dict[str, Any] | None]:
        """A harness process and its first frame (``ready``, or why not)."""
        proc = self.worker.spawn(target, b"", self.scratch, self.limits, channel=True, peer=peer)
        self.procs.append(proc)
        return proc, self.worker.await_frame(proc, self._due())

    def ask_all(self, proc: _Proc, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One answer per message, stopping after a timeout."""
        results = []
        for message in messages:
            result = self.worker.ask(proc, message, self._due())
            results.append(result)
            if result["status"] == "timeout":
                break
        return results

    def each_exec(
        self, target: Callable[[], None], items: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """stdin tests of a non-warm language: one exec per test."""
        results: list[dict[str, Any]] = []
        for item in items:
            budget = self._due() - time.monotonic()
            if budget <= 0:
                break
            limits = _with_wall(self.limits, budget)
            proc = self.worker.spawn(target, str(item["stdin"]).encode(), self.scratch, limits)
            self.procs.append(proc)
            record = self.worker.finish(proc, limits)
            results.append(_from_record(record))
            if record["status"] == "timeout":
                break
        return results

    def script(self, source: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """stdin tests of Python: all in one warm process, restarted after a crash."""
        cap = self.limits.output_bytes
        results: list[dict[str, Any]] = []
        proc: _Proc | None = None
        for item in items:
            if proc is None or proc.status is not None or proc.channel_error:
                proc, ready = self.start(_harness(harness.run_script, source, cap))
                if not ready or not ready.get("ready"):
                    failed = self.worker.failure(proc, ready)
                    return results + [failed] * (len(items) - len(results))
            result = self.worker.ask(proc, {"stdin": item["stdin"]}, self._due())
            results.append(result)
            if result["status"] == "timeout":
                break
        return results

    def _server(self, source: str) -> tuple[_Proc, dict[str, Any] | None]:
        return self.start(_harness(harness.serve, source))

    def calls(
        self, source: str, entry_point: str, items: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Function-call tests: the program defined once, then called per test."""
        server, ready = self._server(source)
        if not ready or not ready.get("ready"):
            return [self.worker.failure(server, ready)] * len(items)
        messages = [
            {"call": entry_point, "args": item["args"], "kwargs": item.get("kwargs", {})}
            for item in items
        ]
        return self.ask_all(server, messages)

    def asserts(
        self, source: str, entry_point: str | None, items: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Assert snippets, run in a judge process that never runs the program: its calls of the
        program's functions travel to a serving process on a socket between the two."""
        server, ready = self._server(source)
        if not ready or not ready.get("ready") or server.channel is None:
            return [self.worker.failure(server, ready)] * len(items)
        names = [str(name) for name in ready.get("names", [])]
        peer, server.channel = server.channel, None
        judge, _ = self.start(_harness(harness.judge, names), peer=peer)
        peer.close()
        messages = [{"code": item["code"], "entry_point": entry_point} for item in items]
        return self.ask_all(judge, messages)


def _preload(modules: tuple[str, ...]) -> None:
    """A language's preloaded modules, imported into the worker itself the first time: every
    later run forks with them loaded. A failed import is the sandbox's failure, not the run's."""
    fresh = [name for name in modules if name not in sys.modules]
    for name in fresh:
        importlib.import_module(name)
    if fresh:
        gc.freeze()  # as after start-up: runs' collections skip the new objects' pages


def _harness(mode: Callable[..., None], *args: Any) -> Callable[[], None]:
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


def _open_beneath(root: Path, name: str) -> int:
    """A read descriptor for the regular file ``root/name``, following no symlink on the way
    (a run may have swapped any component for a link to a host file)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        *parents, last = Path(name).parts
        for part in parents:
            if part == "..":
                raise OSError(errno.EPERM, "no '..' in fetched paths")
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        found = os.open(last, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(found).st_mode):
        os.close(found)
        raise OSError(errno.EINVAL, f"{name} is not a regular file")
    return found


def _fetch(scratch: Path, names: list[str]) -> dict[str, str]:
    """The files a request asked back (those that exist and are regular files), base64."""
    found: dict[str, str] = {}
    for name in names:
        try:
            with os.fdopen(_open_beneath(scratch, name), "rb") as file:
                found[name] = base64.b64encode(file.read(8 << 20)).decode()
        except OSError:
            continue
    return found


def _exec(argv: list[str]) -> Callable[[], None]:
    def run() -> None:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # Python ignores it; programs expect it
        try:
            os.execvp(argv[0], argv)  # noqa: S606 - argv comes from the language table
        except OSError as exc:
            os.write(2, f"cannot run {argv[0]}: {exc}\n".encode())
            os._exit(127)

    return run


def _with_wall(limits: Limits, wall_s: float) -> Limits:
    fields = {name: getattr(limits, name) for name in Limits.__dataclass_fields__}
    return Limits(**{**fields, "wall_s": wall_s, "cpu_s": min(limits.cpu_s, wall_s + 1)})


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


_MEMORY_MARKERS = ("MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory")


def _status(proc: _Proc, limits: Limits) -> str:
    if proc.killed_for in ("timeout", "output_limit"):
        return proc.killed_for
    status = proc.status or 0
    cpu = _cpu(proc)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGXCPU, signal.SIGKILL) and cpu >= limits.cpu_s - 0.05:
            return "timeout"
        if sig == signal.SIGXFSZ:
            return "output_limit"
    code = os.waitstatus_to_exitcode(status)
    if code == 0 and not proc.killed_for:
        return "ok"
    tail = proc.err.text()[-TAIL:]
    if any(marker in tail for marker in _MEMORY_MARKERS):
        return "memory_limit"
    return "runtime_error"


def _cpu(proc: _Proc) -> float:
    usage = proc.rusage
    return float(usage.ru_utime + usage.ru_stime) if usage is not None else 0.0


def _record(proc: _Proc, limits: Limits, isolation_level: str) -> dict[str, Any]:
    status = proc.status or 0
    return {
        "status": _status(proc, limits),
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "stdout": proc.out.text(),
        "stderr": proc.err.text(),
        "stdout_truncated": proc.out.over,
        "stderr_truncated": proc.err.over,
        "wall_s": round((proc.ended or time.monotonic()) - proc.started, 6),
        "cpu_s": round(_cpu(proc), 6),
        "memory_mb": round(proc.rusage.ru_maxrss / 1024, 3) if proc.rusage is not None else 0.0,
        "isolation": isolation_level,
    }


def _summary(procs: list[_Proc]) -> dict[str, Any]:
    """The whole program's figures for a test run (all its processes)."""
    return {
        "exit_code": None,
        "signal": None,
        "stdout": "".join(p.out.text() for p in procs)[-TAIL:],
        "stderr": "".join(p.err.text() for p in procs)[-TAIL:],
        "stdout_truncated": any(p.out.over for p in procs),
        "stderr_truncated": any(p.err.over for p in procs),
        "wall_s": round(sum((p.ended or p.started) - p.started for p in procs), 6),
        "cpu_s": round(sum(_cpu(p) for p in procs), 6),
        "memory_mb": max((p.rusage.ru_maxrss / 1024 for p in procs if p.rusage), default=0.0),
    }


def _from_record(record: dict[str, Any]) -> dict[str, Any]:
    """A per-test result from a whole-process record (one exec per test)."""
    result: dict[str, Any] = {
        "status": record["status"],
        "stdout": record["stdout"],
        "time_s": record["wall_s"],
    }
    if record["status"] != "ok":
        result["error"] = record["stderr"][-TAIL:] or f"exit code {record['exit_code']}"
    return result


def _harness_result(reply: dict[str, Any]) -> dict[str, Any]:
    """A per-test result from a harness frame (content untrusted: typed loosely, judged later)."""
    if "passed" in reply:
        return {
            "status": "ok",
            "passed": reply["passed"] is True,
            "error": str(reply.get("error") or "")[:TAIL],
        }
    if "value" in reply:
        return {"status": "ok", "value": reply["value"]}
    if "stdout" in reply:
        error = reply.get("error")
        result: dict[str, Any] = {"status": "ok", "stdout": str(reply["stdout"])}
        if reply.get("dropped"):
            result["status"] = "output_limit"
        elif error or reply.get("exit_code") not in (0, None):
            kind = (
                "memory_limit"
                if error and str(error).startswith("MemoryError")
                else "runtime_error"
            )
            result.update(
                status=kind, error=str(error or f"exit code {reply.get('exit_code')}")[:TAIL]
            )
        return result
    return {
        "status": "runtime_error",
        "error": str(reply.get("error") or "malformed result")[:TAIL],
    }


def _failure(proc: _Proc, reply: dict[str, Any] | None) -> dict[str, Any]:
    """The result of a test whose process gave no answer."""
    if reply is not None and reply.get("error"):
        return {"status": "runtime_error", "error": str(reply["error"])[:TAIL], "time_s": 0.0}
    if proc.killed_for in ("timeout", "output_limit"):
        return {"status": proc.killed_for, "error": "", "time_s": 0.0}
    stderr = proc.err.text()[-TAIL:]
    kind = "memory_limit" if any(m in stderr for m in _MEMORY_MARKERS) else "runtime_error"
    detail = proc.channel_error or "the program ended before answering"
    return {"status": kind, "error": (stderr or detail)[:TAIL], "time_s": 0.0}


def _timeout_result() -> dict[str, Any]:
    return {"status": "timeout", "error": "not run: an earlier test timed out", "time_s": 0.0}


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``python -m sandbox.zygote --isolation full|weak ...``.

    Full isolation starts twice: the launch (host paths, host uid) opens the slot's cgroup,
    enters the namespaces and the minimal root, then re-executes the interpreter from its
    neutral path inside (``--inner``), so that nothing of the worker points at the host."""
    parser = argparse.ArgumentParser(prog="sandbox.zygote")
    parser.add_argument("--isolation", choices=("full", "weak"), required=True)
    parser.add_argument("--uid-base", type=int, default=200_000)
    parser.add_argument("--scratch-mb", type=int, default=512)
    parser.add_argument("--workdir", default="")
    parser.add_argument("--cgroup", default="", help="the slot's memory cgroup, VERSION:PATH")
    parser.add_argument("--probe-packages", action="store_true", help="probe numpy, sympy too")
    parser.add_argument("--inner", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner:
        state = json.loads(args.inner)
        control = (int(state["control"][0]), int(state["control"][1]))
        for fd in control:
            os.set_inheritable(fd, False)
        linux.prctl(linux.PR_SET_PDEATHSIG, signal.SIGKILL)
        group = cgroups.RunGroup.adopt(state["group"]) if state["group"] else None
        runtime.enter(state["site"])
        _start(args, isolation.full_layout(), control, group, state["library_path"])
        return
    # The control channel moves to high descriptors; 0 reads nothing, 1 goes to the log.
    control = (fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 10), fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 10))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    try:
        group = cgroups.RunGroup.open(args.cgroup) if args.cgroup else None
        if args.isolation == "full":
            neutral = runtime.neutral()
            isolation.enter_full(args.uid_base, args.scratch_mb, neutral)
            _reexec(args, neutral, control, group)
        layout = isolation.enter_weak(args.workdir, args.uid_base + isolation.SANDBOX_UID)
        linux.prctl(linux.PR_SET_CHILD_SUBREAPER, 1)  # orphans of a run come back to us
    except OSError as exc:
        _refuse(control, f"set-up failed: {exc}")
    _start(args, layout, control, group, "")


def _reexec(
    args: argparse.Namespace,
    neutral: runtime.Runtime,
    control: tuple[int, int],
    group: cgroups.RunGroup | None,
) -> None:
    """Become the worker again, from the runtime's neutral path inside the minimal root."""
    for fd in control:
        os.set_inheritable(fd, True)
    state = {
        "control": list(control),
        "group": group.handoff() if group is not None else "",
        "site": list(neutral.site),
        "library_path": neutral.library_path,
    }
    arguments = ["--isolation", "full", "--inner", json.dumps(state)]
    if args.probe_packages:
        arguments.append("--probe-packages")
    os.execve(  # noqa: S606 - the server's own interpreter, at its path inside
        neutral.python, neutral.argv(arguments), neutral.env(dict(os.environ))
    )


def _start(
    args: argparse.Namespace,
    layout: isolation.Layout,
    control: tuple[int, int],
    group: cgroups.RunGroup | None,
    library_path: str,
) -> None:
    """Warm up, check that runs can use the runtime, say hello, serve."""
    for name in WARM_MODULES:
        importlib.import_module(name)
    keep: tuple[int, ...] = ()
    try:
        if layout.run_uid is not None and layout.isolation != "full":
            hidden = runtime.unreachable(runtime.sys_path_dirs(), layout.run_uid)
            keep = tuple(runtime.bridge(hidden))
        worker = Worker(layout, control, group=group, keep_fds=keep, library_path=library_path)
        problem = worker.probe(args.probe_packages)
    except OSError as exc:
        _refuse(control, f"set-up failed: {exc}")
    if problem is not None:
        _refuse(control, problem)
    hello: dict[str, Any] = {"status": "ok", "isolation": layout.isolation, "pid": os.getpid()}
    hello["landlock"] = worker.landlock is not None
    hello["memory_cap"] = "cgroup" if group is not None else "address-space"
    if layout.isolation == "weak":
        hello["run_uid"] = layout.run_uid
    frames.write(control[1], hello)
    # Everything the worker holds now is shared with every run's fork; frozen objects are
    # skipped by a run's garbage collections, which would otherwise copy their pages.
    gc.freeze()
    with contextlib.suppress(OSError):
        worker.serve()


def _refuse(control: tuple[int, int], detail: str) -> NoReturn:
    frames.write(control[1], {"status": "sandbox_error", "detail": detail})
    sys.exit(3)


if __name__ == "__main__":
    main()
