"""A sandbox worker ("zygote"): a warm, isolated Python process that runs programs on request;
this module is its request loop (process handling is ``sandbox.children``, the shaping of
results ``sandbox.records``).

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
import os
import shutil
import signal
import socket
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from sandbox import (
    cgroups,
    frames,
    harness,
    isolation,
    languages,
    linux,
    probe,
    records,
    runtime,
    seccomp,
)
from sandbox.children import (
    Child,
    Children,
    Limits,
    exec_target,
    harness_target,
    with_wall,
)

WARM_MODULES = (
    "array", "bisect", "cmath", "collections", "copy", "dataclasses", "datetime", "decimal",
    "enum", "fractions", "functools", "hashlib", "heapq", "io", "itertools", "json", "math",
    "numbers", "operator", "random", "re", "statistics", "string", "textwrap", "typing",
    "unittest",
)  # fmt: skip
CACHE_ENTRIES = 128
records.OOM_NOTE = "killed: the run's processes together went over its memory limit"
PROBE_LIMITS = Limits(
    wall_s=60, cpu_s=60, memory_mb=2048, output_bytes=1 << 16, file_mb=16, processes=64,
    open_files=256,
)  # fmt: skip


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
        self.group = group  # the slot's memory cgroup: caps a run's processes together
        self.children = Children(layout, group=group, keep_fds=keep_fds, library_path=library_path)
        self.oom_seen = 0
        self.runs = 0
        # On the worker itself: every run inherits it.
        seccomp.load(seccomp.compile_apart(private_ipc=self.children.full))

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
                self.children.cleanup()  # no process of the run touches the scratch dir now
            if request.get("fetch_files"):
                record["files"] = _fetch(scratch, request["fetch_files"])
            record["isolation"] = self.layout.isolation
            return record
        finally:
            _remove_scratch(scratch, language.source_file)

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
            record["stderr"] = (record["stderr"] + "\n" + records.OOM_NOTE).lstrip("\n")
        return record

    def failure(self, proc: Child, reply: dict[str, Any] | None) -> dict[str, Any]:
        """A test's result when its process gave no answer (killed for the run's memory?)."""
        result = records.failure(proc, reply)
        if self.group is not None and result["status"] == "runtime_error":
            kills = self.group.oom_kills()
            if kills > self.oom_seen:
                self.oom_seen = kills
                result.update(status="memory_limit", error=records.OOM_NOTE)
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
        _write_source(scratch / language.source_file, source.encode(), self.layout.run_uid)
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
        proc = self.children.spawn(exec_target(argv), b"", scratch, limits)
        record = self.charge(self.children.finish(proc, limits))
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
        return exec_target(argv)

    def _run_once(
        self,
        language: languages.Language,
        request: dict[str, Any],
        binary: str | None,
        scratch: Path,
        limits: Limits,
    ) -> dict[str, Any]:
        stdin = str(request.get("stdin") or "").encode()
        proc = self.children.spawn(
            self._target(language, request["source"], binary), stdin, scratch, limits
        )
        return self.children.finish(proc, limits)

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
            results = session.eachexec_target(self._target(language, source, binary), items)
        elif tests["kind"] == "stdin":
            results = session.script(source, items)
        elif tests["kind"] == "call":
            results = session.calls(source, str(tests["entry_point"]), items)
        else:
            results = session.asserts(source, tests.get("entry_point"), items)
        results += [records.timeout_result()] * (len(items) - len(results))
        for proc in session.procs:
            if proc.status is None or proc.out.open:
                self.children.finish(proc, limits, closing=True)
        return {"status": "ok", "tests": results, **records.summary(session.procs)}

    def ask(self, proc: Child, message: dict[str, Any], deadline: float) -> dict[str, Any]:
        """Send one test to a harness process; its result as the trusted side will see it."""
        started = time.monotonic()
        try:
            assert proc.channel is not None
            frames.write(proc.channel.fileno(), message)
        except OSError:
            return self.failure(proc, None)
        reply = self.children.await_frame(proc, deadline)
        elapsed = time.monotonic() - started
        if reply is None:
            return {**self.failure(proc, None), "time_s": elapsed}
        return {**records.harness_result(reply), "time_s": elapsed}

    def probe(self, packages: bool) -> str | None:
        """Run the start-up probe (``sandbox.probe``) as a run; None when runs can use the
        runtime, else why not."""
        scratch = self._scratch()
        try:
            self.begin(PROBE_LIMITS)
            target = probe.program(probe.modules(packages), probe.tools())
            proc = self.children.spawn(target, b"", scratch, PROBE_LIMITS)
            return probe.verdict(self.charge(self.children.finish(proc, PROBE_LIMITS)))
        finally:
            self.children.cleanup()
            shutil.rmtree(scratch, ignore_errors=True)


class _TestSession:
    """The processes of one program's test run, and its budgets: ``per_test`` for each answer,
    the program's ``wall_s`` for all of them."""

    def __init__(self, worker: Worker, scratch: Path, limits: Limits, per_test: float) -> None:
        self.worker, self.scratch, self.limits, self.per_test = worker, scratch, limits, per_test
        self.children = worker.children
        self.deadline = time.monotonic() + limits.wall_s
        self.procs: list[Child] = []

    def _due(self) -> float:
        return min(self.deadline, time.monotonic() + self.per_test)

    def start(
        self, target: Callable[[], Any], peer: socket.socket | None = None
    ) -> tuple[Child, dict[str, Any] | None]:
        """A harness process and its first frame (``ready``, or why not)."""
        proc = self.children.spawn(target, b"", self.scratch, self.limits, channel=True, peer=peer)
        self.procs.append(proc)
        return proc, self.children.await_frame(proc, self._due())

    def ask_all(self, proc: Child, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One answer per message, stopping after a timeout."""
        results = []
        for message in messages:
            result = self.worker.ask(proc, message, self._due())
            results.append(result)
            if result["status"] == "timeout":
                break
        return results

    def eachexec_target(
        self, target: Callable[[], None], items: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """stdin tests of a non-warm language: one exec per test."""
        results: list[dict[str, Any]] = []
        for item in items:
            budget = self._due() - time.monotonic()
            if budget <= 0:
                break
            limits = with_wall(self.limits, budget)
            proc = self.children.spawn(target, str(item["stdin"]).encode(), self.scratch, limits)
            self.procs.append(proc)
            record = self.children.finish(proc, limits)
            results.append(records.from_record(record))
            if record["status"] == "timeout":
                break
        return results

    def script(self, source: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """stdin tests of Python: all in one warm process, restarted after a crash."""
        cap = self.limits.output_bytes
        results: list[dict[str, Any]] = []
        proc: Child | None = None
        for item in items:
            if proc is None or proc.status is not None or proc.channel_error:
                proc, ready = self.start(harness_target(harness.run_script, source, cap))
                if not ready or not ready.get("ready"):
                    failed = self.worker.failure(proc, ready)
                    return results + [failed] * (len(items) - len(results))
            result = self.worker.ask(proc, {"stdin": item["stdin"]}, self._due())
            results.append(result)
            if result["status"] == "timeout":
                break
        return results

    def _server(self, source: str) -> tuple[Child, dict[str, Any] | None]:
        return self.start(harness_target(harness.serve, source))

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
        judge, _ = self.start(harness_target(harness.judge, names), peer=peer)
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


def _write_source(path: Path, data: bytes, uid: int | None) -> None:
    """Write ``path`` (in a run's scratch directory, before the run starts), owned by ``uid``:
    plain system calls, as every Python object the worker touches between forks costs it a page
    fault of copy-on-write."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if uid is not None:
            os.fchown(fd, uid, uid)
    finally:
        os.close(fd)


def _remove_scratch(scratch: Path, source_file: str) -> None:
    """Remove a run's scratch directory: most runs leave only their source, which two system
    calls remove; anything else (or a source the run replaced by a directory) takes ``rmtree``
    (which follows no link)."""
    with contextlib.suppress(OSError):
        (scratch / source_file).unlink()
    try:
        scratch.rmdir()
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)


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
    hello["landlock"] = worker.children.landlock is not None
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
