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

Why the worker forks its runs itself, measured (``benchmarks/sandbox_ab.py``): a fork and exit
of an interpreter carrying the warm modules costs about 1.6 ms of CPU (0.6 in the parent, 1.0 in
the child), more than the namespace floor's whole run; the worker's own bookkeeping adds about
330 copy-on-write faults a request (0.8 ms). A lean forking process beside the worker would
still carry the warm modules (the run executes in its fork), so it could save only those faults
and a quarter of the fork, against two more frames and descriptor passing a run: a fifth more
runs a second at best, for a second process per slot to keep alive. Not built.

Requests arrive as JSON frames and are typed at the door (``sandbox.jobs``); replies are plain
JSON records (``sandbox.model`` has the schema the pool validates). A test run is
``sandbox.testrun``'s. The worker never judges: it returns outputs, and the trusted side
compares them.
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
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from sandbox import (
    cgroups,
    frames,
    harness,
    isolation,
    jobs,
    languages,
    linux,
    probe,
    runtime,
    seccomp,
)
from sandbox.children import Children, Exec, exec_target
from sandbox.jobs import Limits
from sandbox.memory import RunMemory
from sandbox.testrun import TestSession

WARM_MODULES = (
    "array", "bisect", "cmath", "collections", "copy", "dataclasses", "datetime", "decimal",
    "enum", "fractions", "functools", "hashlib", "heapq", "io", "itertools", "json", "math",
    "numbers", "operator", "random", "re", "statistics", "string", "textwrap", "typing",
    "unittest",
)  # fmt: skip
CACHE_ENTRIES = 128
PROBE_LIMITS = Limits(
    wall_s=60, cpu_s=60, memory_mb=2048, output_bytes=1 << 16, file_mb=16, processes=64,
    open_files=256,
)  # fmt: skip


class Worker:
    """The request loop of one zygote. Calls go one way: the worker runs a request with its
    ``Children`` (processes), ``RunMemory`` (the slot's cgroup) and, for tests, a
    ``TestSession``; none of them calls back."""

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
        self.memory = RunMemory(group)
        self.children = Children(layout, group=group, keep_fds=keep_fds, library_path=library_path)
        self.runs = 0
        # On the worker itself: every run inherits it.
        seccomp.load(seccomp.compile_apart(private_ipc=self.children.full))

    # -- the loop ------------------------------------------------------------------------------

    def serve(self) -> None:
        """Answer requests until the pool hangs up."""
        while True:
            try:
                frame = frames.read(self.control_in)
            except frames.FrameError:
                return
            try:
                reply = self.handle(jobs.parse(frame))
            except Exception as exc:
                reply = {"status": "sandbox_error", "detail": f"{type(exc).__name__}: {exc}"}
            frames.write(self.control_out, reply)

    def handle(self, job: jobs.RunJob | jobs.Ping) -> dict[str, Any]:
        """One request: a ping or a run."""
        if isinstance(job, jobs.Ping):
            return {"status": "ok", "isolation": self.layout.isolation, "pid": os.getpid()}
        language = languages.get(job.language)
        _preload(language.preload)
        scratch = self._scratch()
        try:
            try:
                record = self._execute(language, job, scratch)
            finally:
                self.children.cleanup()  # no process of the run touches the scratch dir now
            if job.fetch_files:
                record["files"] = _fetch(scratch, job.fetch_files)
            record["isolation"] = self.layout.isolation
            return record
        finally:
            _remove_scratch(scratch, language.source_file)

    def _execute(
        self, language: languages.Language, job: jobs.RunJob, scratch: Path
    ) -> dict[str, Any]:
        self._write_files(scratch, job.files)
        binary, compiled = self._build(language, job, scratch)
        if compiled is not None and binary is None:
            return {**compiled, "status": "compile_error", "compile": compiled}
        self.memory.begin(job.limits)
        if job.tests is None:
            target = self._target(language, job.source, binary)
            stdin = job.stdin.encode()
            proc = self.children.spawn(target, stdin, scratch, job.limits)
            record = self.children.finish(proc, job.limits)
        else:
            session = TestSession(self.children, self.memory, scratch, job.limits, job.tests)
            exec_each = None if language.warm else self._command(language, binary)
            record = session.run(job.source, exec_each)
        record["compile"] = compiled
        return self.memory.charge(record)

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
        self, language: languages.Language, job: jobs.RunJob, scratch: Path
    ) -> tuple[str | None, dict[str, Any] | None]:
        """Write the source; for a compiled language, the cached binary (None if the build
        failed) and the compile record (None on a cache hit or for interpreted languages)."""
        _write_source(scratch / language.source_file, job.source.encode(), self.layout.run_uid)
        if not language.compiled:
            return None, None
        digest = hashlib.sha256(repr((language.compile, job.source)).encode()).hexdigest()[:32]
        cached = Path(self.layout.cache, digest)
        if cached.exists():
            os.utime(cached)
            return str(cached), None
        argv = [a.format(src=language.source_file, bin="main") for a in language.compile]
        limits = job.compile_limits
        self.memory.begin(limits)
        proc = self.children.spawn(exec_target(argv), b"", scratch, limits)
        record = self.memory.charge(self.children.finish(proc, limits))
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
    ) -> Callable[[], None] | Exec:
        """What a run's process does: Python runs the source in the fork itself, the others
        exec (the built binary, or the interpreter on the source file)."""
        if language.warm:
            return lambda: harness.flush_and_exit(harness.run_main(source))
        return self._command(language, binary)

    def _command(self, language: languages.Language, binary: str | None) -> Exec:
        """The exec of a language that is not warm: the built binary, or the interpreter on the
        source file."""
        argv = [binary] if binary else [a.format(src=language.source_file) for a in language.run]
        return exec_target(argv)

    def probe(self, packages: bool) -> str | None:
        """Run the start-up probe (``sandbox.probe``) as a run; None when runs can use the
        runtime, else why not."""
        scratch = self._scratch()
        try:
            build = probe.place_build(self.layout.cache) if probe.builds() else ""
            self.memory.begin(PROBE_LIMITS)
            target = probe.program(probe.modules(packages), probe.tools(), build)
            proc = self.children.spawn(target, b"", scratch, PROBE_LIMITS)
            return probe.verdict(self.memory.charge(self.children.finish(proc, PROBE_LIMITS)))
        finally:
            self.children.cleanup()
            shutil.rmtree(scratch, ignore_errors=True)
            Path(self.layout.cache, probe.BUILD_NAME).unlink(missing_ok=True)


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
