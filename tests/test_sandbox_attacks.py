"""Hostile programs against every sandbox backend.

Each attack runs on each backend there is here (``local``: full isolation, ``weak``: rlimits,
seccomp, an own uid and Landlock where the kernel has it; ``docker``: the same worker in
containers of the sandbox image, skipped with the reason when no engine answers or the image is
not built, failed instead where CI provides them: ``tests/docker_support.py``); the attacks
follow the project's sandbox reference (sections 2 and 3.3). An attack passes when it is
contained with the expected outcome *and* the sandbox is healthy afterwards: no worker was lost
or restarted, every worker still answers ``print("alive")``, and no process of the pool's run
uids is left on the host (``_healthy`` checks all three after every test).

Host side effects are checked on the host (files that must not appear, a listener that must not
accept, processes that must not remain); secrets and markers are random per session, so a
program can only show them by reading them.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import socket
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import sandbox
from sandbox.backends import SandboxConfig, open_sandbox
from sandbox.model import Limits, RunRecord, RunRequest
from sandbox.pool import SLOTS_PER_POOL, UID_BASE, UID_SPAN
from sandbox.runner import Sandbox
from sandbox.runner import TestRun as ProgramRun
from sandbox.testcases import JudgeOptions
from sandbox.testcases import TestCase as Case
from sandbox.testcases import TestSuite as Suite
from tests import docker_support
from tests.process_support import alive, descendants

pytestmark = pytest.mark.timeout(60)

WORKERS = 2
MARKER_ENV = "ENVSERVER_SECRET_MARKER"
MARKER = "marker-" + secrets.token_hex(16)
ISOLATION = {"local": "full", "weak": "weak", "docker": "container"}
SHORT = Limits(wall_s=2)
HAS_GXX = shutil.which("g++") is not None
DEAD_PIDS_GRACE_S = 3.0


# -- fixtures --------------------------------------------------------------------------------------


@dataclass
class Box:
    """One backend's sandbox and what the tests know about it."""

    backend: str
    sb: Sandbox
    run_uids: range  # host uids the pool's runs may have (empty: not observable from here)

    @property
    def full(self) -> bool:
        return self.backend == "local"

    def run(self, source: str, limits: Limits = SHORT, **fields: Any) -> RunRecord:
        return self.sb.run(RunRequest(source=source, limits=limits, **fields))


@pytest.fixture(scope="module")
def secret_marker() -> Iterator[str]:
    """An environment marker of the test process, set before any sandbox starts."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(MARKER_ENV, MARKER)
        yield MARKER


def _host_uid_of_runs(box_sb: Sandbox) -> int:
    """The host uid a run has, from inside (its own user namespace's map, if any)."""
    probe = textwrap.dedent(
        """
        import os
        try:
            maps = open("/proc/self/uid_map").read().split("\\n")
        except OSError:
            maps = []
        print(os.getuid())
        print(*maps, sep="\\n")
        """
    )
    rec = box_sb.run(RunRequest(source=probe, limits=SHORT))
    assert rec.status == "ok", _show(rec)
    lines = rec.stdout.split("\n")
    uid = int(lines[0])
    if not any(line.split() for line in lines[1:]):
        return uid  # no user namespace map to read (weak isolation): the host uid itself
    for line in lines[1:]:
        if not line.split():
            continue
        inside, outside, count = (int(x) for x in line.split())
        if inside <= uid < inside + count:
            return outside + uid - inside
    raise AssertionError(f"no uid map covers uid {uid}: {rec.stdout!r}")


@pytest.fixture(scope="module", params=["local", "weak", "docker"])
def box(request: pytest.FixtureRequest, secret_marker: str) -> Iterator[Box]:
    """A pool of ``WORKERS`` workers of one backend (the marker is in the test's environment)."""
    backend: str = request.param
    assert os.environ[MARKER_ENV] == secret_marker
    config = SandboxConfig(backend=backend, workers=WORKERS)  # type: ignore[arg-type]
    with pytest.MonkeyPatch.context() as patch:
        if backend == "docker":  # the engine the container tests use (tests/docker_support.py)
            docker_support.require((config.docker_image,))
            patch.setenv("DOCKER_HOST", docker_support.docker_host())
        yield from _box(backend, config)


def _box(backend: str, config: SandboxConfig) -> Iterator[Box]:
    sb = open_sandbox(config)
    try:
        assert sb.isolation == ISOLATION[backend]
        # Safety first: the signal attacks below kill every pid they can, which is only
        # harmless if runs are an unprivileged uid of this pool's own range, never root.
        uids = {_host_uid_of_runs(sb) for _ in range(WORKERS)}
        assert all(uid != 0 and uid != os.getuid() for uid in uids), uids
        run_uids = range(0)
        if backend != "docker":
            span = SLOTS_PER_POOL * UID_SPAN
            assert all(uid >= UID_BASE for uid in uids), uids
            starts = {UID_BASE + (uid - UID_BASE) // span * span for uid in uids}
            assert len(starts) == 1, uids  # one pool, one block of uid ranges
            start = starts.pop()
            run_uids = range(start, start + span)
        yield Box(backend, sb, run_uids)
    finally:
        sb.close()


def _host_pids() -> list[Path]:
    """/proc/<pid> of every process on the host."""
    return [entry for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def _run_processes(uids: range) -> dict[int, str]:
    """Host processes whose real uid is a run uid of the pool (a slot's root, the worker
    itself under ``local``, is offset 0 of its slot's range and not a run)."""
    found: dict[int, str] = {}
    for entry in _host_pids():
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uid = int(fields["Uid"].split()[0])
        if uid in uids and (uid - UID_BASE) % UID_SPAN != 0:
            found[int(entry.name)] = f"uid={uid} {fields['Name'].strip()} {fields['State'].strip()}"
    return found


def _assert_no_run_processes(uids: range, grace_s: float = DEAD_PIDS_GRACE_S) -> None:
    """Within ``grace_s``, no process of a run uid is left: neither a living one (it could
    still act) nor a zombie (dead but unreaped: it holds a pid and counts against the uid's
    process limit)."""
    deadline = time.monotonic() + grace_s
    while (left := _run_processes(uids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    living = {pid: what for pid, what in left.items() if " Z " not in what}
    zombies = sorted(pid for pid in left if pid not in living)
    assert not living, f"processes of sandbox runs still run on the host: {living}"
    assert not zombies, f"{len(zombies)} unreaped zombies of sandbox runs: {left}"


@pytest.fixture(autouse=True)
def _healthy(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each attack: no worker lost, every worker answers, no run process left behind."""
    if "box" not in request.fixturenames:
        yield
        return
    box: Box = request.getfixturevalue("box")
    restarts = box.sb.pool.restarts
    yield
    for _ in range(WORKERS):  # the idle queue is FIFO: this reaches every worker
        rec = box.run('print("alive")')
        assert (rec.status, rec.stdout) == ("ok", "alive\n"), _show(rec)
        assert rec.isolation == ISOLATION[box.backend]
    assert box.sb.pool.restarts == restarts, "a sandbox worker was lost during the attack"
    _assert_no_run_processes(box.run_uids)


@pytest.fixture
def host_dir() -> Iterator[Path]:
    """A host directory any uid can reach and write (/tmp/..., mode 0777)."""
    path = Path(tempfile.mkdtemp(prefix="sbattack-"))
    path.chmod(0o777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _show(rec: RunRecord) -> str:
    """A record for an assertion message, with the ends of its outputs."""
    return (
        f"status={rec.status} exit={rec.exit_code} signal={rec.signal} wall={rec.wall_s:.3f} "
        f"detail={rec.detail!r}\nstdout: {rec.stdout[-1500:]!r}\nstderr: {rec.stderr[-1500:]!r}"
    )


# -- 1. network ------------------------------------------------------------------------------------


CONNECT = """
import socket
for family, address in {targets!r}:
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(1)
        s.connect(address)
        s.sendall(b"hello from the sandbox")
        print("CONNECTED", address)
    except Exception as exc:
        print("FAILED", address, type(exc).__name__, exc)
"""


def test_connect_to_host_loopback_fails(box: Box) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract = f"\0sbattack-{secrets.token_hex(8)}"
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        unix.bind(abstract)
        unix.listen(8)
        unix.setblocking(False)
        port = listener.getsockname()[1]
        targets = [
            (int(socket.AF_INET), ("127.0.0.1", port)),
            (int(socket.AF_INET6), ("::1", port)),
            (int(socket.AF_UNIX), abstract),  # abstract names belong to the network namespace
        ]
        rec = box.run(CONNECT.format(targets=targets))
        assert rec.status == "ok", _show(rec)
        assert "CONNECTED" not in rec.stdout, rec.stdout
        assert rec.stdout.count("FAILED") == len(targets), rec.stdout
        for sock in (listener, unix):
            with pytest.raises(BlockingIOError):
                sock.accept()  # nothing ever reached the host's listeners
    finally:
        listener.close()
        unix.close()


# -- 2. reading host files -------------------------------------------------------------------------


READ_FILES = """
import os
for path in {paths!r}:
    print("EXISTS", path, os.path.exists(path))
    try:
        with open(path, "rb") as f:
            print("READ", path, f.read(4096))
    except Exception as exc:
        print("DENIED", path, type(exc).__name__)
"""


@dataclass
class Secrets:
    text: str
    paths: list[Path]  # files that must stay unreadable
    hidden: list[Path]  # files that must not even exist inside (full isolation)


def _landlock() -> bool:
    """Whether weak isolation confines reads here (Landlock; see sandbox.landlock)."""
    try:
        from sandbox import landlock
    except ImportError:
        return False
    return landlock.abi() > 0


@pytest.fixture
def host_secrets(box: Box, tmp_path: Path, host_dir: Path) -> Secrets:
    """A secret in 0600 files (tmp_path, and a reachable host dir); for full isolation (and
    weak isolation under Landlock) also in a world-readable 0644 file in a world-readable
    directory, which full isolation must not even show."""
    text = "secret-" + secrets.token_hex(16)
    private = [tmp_path / "secret-0600", host_dir / "secret-0600"]
    for path in private:
        path.write_text(text + "\n")
        path.chmod(0o600)
    paths = list(private)
    if box.full or (box.backend == "weak" and _landlock()):
        public = host_dir / "secret-0644"
        public.write_text(text + "\n")
        public.chmod(0o644)
        paths.append(public)
    host_dir.chmod(0o755)
    return Secrets(text, paths, paths if box.full else [])


def _views(path: Path) -> list[str]:
    """A host file by its path, and through the test process's and PID 1's root links."""
    return [str(path), f"/proc/{os.getpid()}/root{path}", f"/proc/1/root{path}"]


def test_read_secret_file_outside_scratch(box: Box, host_secrets: Secrets) -> None:
    paths = [view for path in host_secrets.paths for view in _views(path)]
    rec = box.run(READ_FILES.format(paths=[*paths, "/etc/shadow"]))
    assert rec.status == "ok", _show(rec)
    assert host_secrets.text not in rec.stdout + rec.stderr
    assert "READ " not in rec.stdout, rec.stdout
    for path in host_secrets.hidden:
        assert f"EXISTS {path} False" in rec.stdout, rec.stdout


RACE_FETCH = """
import os, time
os.makedirs("a")
for i in range({count}):
    with open(f"a/loot{{i}}", "w") as f:
        f.write("decoy")
os.symlink({target!r}, "b")
os.rename("a", "d")
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # outlives the run: flips d between a directory and a link out
        for fd in (0, 1, 2):
            os.close(fd)
        end = time.time() + 2
        while time.time() < end:
            os.rename("d", "a")
            os.rename("b", "d")
            os.rename("d", "b")
            os.rename("a", "d")
        os._exit(0)
    os._exit(0)
os.wait()
time.sleep(0.02)
"""


def test_fetch_files_cannot_be_raced_to_a_host_file(box: Box, host_dir: Path) -> None:
    """``fetch_files`` is read by the worker, not the program: a program must not swap a
    directory for a symlink between the worker's check and its open (and so read through the
    worker's privileges a file it cannot read itself), nor make the fetch an infrastructure
    failure."""
    count = 64
    text = "secret-" + secrets.token_hex(16)
    for i in range(count):
        (host_dir / f"loot{i}").write_text(text)
        (host_dir / f"loot{i}").chmod(0o600)
    host_dir.chmod(0o755)
    program = RACE_FETCH.format(count=count, target=str(host_dir))
    names = [f"d/loot{i}" for i in range(count)]
    leaked: list[str] = []
    records = []
    for _ in range(8):
        rec = box.run(program, SHORT, fetch_files=names)
        records.append(rec)
        leaked += [n for n, data in rec.files.items() if text.encode() in base64.b64decode(data)]
    assert leaked == [], f"fetch_files returned a root-only host file {len(leaked)} times"
    failed = [_show(rec) for rec in records if rec.status != "ok"]
    assert failed == [], "\n".join(failed)


# -- 3. writing outside scratch --------------------------------------------------------------------


WRITE_FILES = """
for path in {paths!r}:
    try:
        with open(path, "w") as f:
            f.write("pwned")
        print("WROTE", path)
    except Exception as exc:
        print("DENIED", path, type(exc).__name__)
"""


def test_write_outside_scratch(box: Box, tmp_path: Path, host_dir: Path) -> None:
    tmp_path.chmod(0o777)
    name = "sbattack-" + secrets.token_hex(8)
    targets = [
        tmp_path / name,
        host_dir / name,
        Path("/usr/local") / name,
        Path("/etc") / name,
        Path("/tmp") / name,
    ]
    try:
        rec = box.run(WRITE_FILES.format(paths=[str(p) for p in targets]))
        assert rec.status == "ok", _show(rec)
        written = [str(p) for p in targets if p.exists()]
        assert written == [], f"the program wrote host files: {written}\n{rec.stdout}"
        assert "WROTE" not in rec.stdout, rec.stdout
    finally:
        for path in targets:
            path.unlink(missing_ok=True)


# -- 4. and 5. other processes, the server's environment -----------------------------------------


PROC_SNOOP = """
import json, os
try:
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
except OSError as exc:
    pids = [type(exc).__name__]
reads = {{}}
for path in {paths!r}:
    try:
        with open(path, "rb") as f:
            reads[path] = "OK " + f.read().decode("latin-1")
    except Exception as exc:
        reads[path] = "ERR " + type(exc).__name__
print(json.dumps({{"self": os.getpid(), "ppid": os.getppid(), "pids": pids, "reads": reads}}))
"""


def test_proc_of_other_processes(box: Box) -> None:
    me = os.getpid()
    paths = [f"/proc/{me}/environ", f"/proc/{me}/cmdline", "/proc/1/environ"]
    rec = box.run(PROC_SNOOP.format(paths=paths))
    assert rec.status == "ok", _show(rec)
    assert MARKER not in rec.stdout + rec.stderr
    seen = json.loads(rec.stdout)
    assert not seen["reads"][f"/proc/{me}/environ"].startswith("OK"), seen["reads"]
    if box.full:
        # A fresh PID namespace per run: the program sees itself only.
        assert seen["pids"] == [seen["self"]], seen
        assert me not in seen["pids"]
        assert seen["ppid"] == 0


ENV_DUMP = """
import os
print(dict(os.environ))
for path in ("/proc/self/environ", "/proc/1/environ", f"/proc/{os.getppid()}/environ"):
    try:
        print(path, open(path, "rb").read())
    except Exception as exc:
        print(path, type(exc).__name__)
"""


def test_server_environment_does_not_leak(box: Box) -> None:
    assert os.environ[MARKER_ENV] == MARKER  # set before the pool started
    rec = box.run(ENV_DUMP)
    assert rec.status == "ok", _show(rec)
    assert "PATH" in rec.stdout  # the dump ran
    assert MARKER not in rec.stdout + rec.stderr
    assert MARKER_ENV not in rec.stdout + rec.stderr


# -- 6. fork bombs ---------------------------------------------------------------------------------


FORK_BOMB = """
import os, time
end = time.time() + 60
while time.time() < end:
    try:
        os.fork()
    except OSError:
        pass
"""

ORPHAN_BOMB = """
import os, time
for _ in range(200):
    try:
        if os.fork() == 0:
            os.setsid()
            while True:
                try:
                    os.fork()
                except OSError:
                    time.sleep(0.01)
    except OSError:
        break
print("parent leaves")
"""


@pytest.mark.parametrize("program", [FORK_BOMB, ORPHAN_BOMB], ids=["loop", "orphans"])
def test_fork_bomb(box: Box, program: str) -> None:
    limits = Limits(wall_s=1, processes=64)
    started = time.monotonic()
    rec = box.run(program, limits)
    elapsed = time.monotonic() - started
    assert rec.status != "sandbox_error", _show(rec)
    if program is FORK_BOMB:
        assert rec.status == "timeout", _show(rec)
    else:
        assert "parent leaves" in rec.stdout, _show(rec)
    # Reaping 64 forking processes on a 2-core machine that runs the rest of the suite took up
    # to 1.8 s past the limit (2.832 s seen, the container tests beside it): the bound is the
    # kill's promptness, not a timing.
    assert rec.wall_s <= limits.wall_s + 2.5, _show(rec)
    assert elapsed <= limits.wall_s + 3, elapsed
    _assert_no_run_processes(box.run_uids)


FORKER = """
import os, time
kids = []
for _ in range(60):
    pid = os.fork()
    if pid == 0:
        time.sleep(0.2)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print("forked", len(kids))
"""


def test_fork_bomb_does_not_starve_the_next_run(box: Box) -> None:
    """What a bomb leaves behind (even dead, unreaped processes count against a uid's process
    limit) must not make the next, honest run on the same worker fail to fork: 61 processes
    of the 64 allowed."""
    limits = Limits(wall_s=3, processes=64)
    for _ in range(3):
        rec = box.run(ORPHAN_BOMB, limits)
        assert rec.status != "sandbox_error", _show(rec)
        for _ in range(WORKERS):  # the bomb's worker is among them
            honest = box.run(FORKER, limits)
            assert (honest.status, honest.stdout) == ("ok", "forked 60\n"), _show(honest)


# -- 7. memory -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "program",
    [
        "b = bytearray(4 << 30)\nprint(len(b))",
        "x = []\nwhile True:\n    x.append(bytearray(64 << 20))",
        "x = []\nwhile True:\n    x.append(b'y' * (1 << 20))",
    ],
    ids=["bytearray-4g", "list-of-chunks", "touched-pages"],
)
def test_memory_bomb(box: Box, program: str) -> None:
    rec = box.run(program, Limits(wall_s=5, memory_mb=512))
    assert rec.status in ("memory_limit", "runtime_error"), _show(rec)
    assert rec.status == "memory_limit" or "MemoryError" in rec.stderr, _show(rec)
    assert rec.memory_mb < 600, _show(rec)


# -- 8. and 9. time --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "program",
    [
        "while True:\n    pass",
        "import time\ntime.sleep(60)",
        "import signal, time\nfor s in (signal.SIGTERM, signal.SIGXCPU, signal.SIGINT):\n"
        "    signal.signal(s, signal.SIG_IGN)\ntime.sleep(60)",
        "import threading, time\nfor _ in range(8):\n"
        "    threading.Thread(target=lambda: [0 for _ in iter(int, 1)]).start()\ntime.sleep(60)",
    ],
    ids=["spin", "sleep", "sleep-ignoring-signals", "threads"],
)
def test_runs_past_the_limit_time_out(box: Box, program: str) -> None:
    limits = Limits(wall_s=1)
    started = time.monotonic()
    rec = box.run(program, limits)
    elapsed = time.monotonic() - started
    assert rec.status == "timeout", _show(rec)
    assert 0.5 <= rec.wall_s <= limits.wall_s + 0.5, _show(rec)
    assert elapsed <= limits.wall_s + 2.5, elapsed


# -- 10. output ------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_flood_of_output(box: Box, stream: str) -> None:
    program = f"import sys\nfor _ in range(100):\n    sys.{stream}.write('x' * (1 << 20))\n"
    limits = Limits(wall_s=10, output_bytes=256 << 10)
    started = time.monotonic()
    rec = box.run(program, limits)
    assert rec.status == "output_limit", rec.model_copy(update={"stdout": "", "stderr": ""})
    assert time.monotonic() - started < 8
    text = getattr(rec, stream)
    assert 0 < len(text.encode()) <= limits.output_bytes
    assert getattr(rec, f"{stream}_truncated") is True


# -- 11. signals -----------------------------------------------------------------------------------


KILL = """
import os, sys
print("start", flush=True)
for name, action in {actions}:
    try:
        action()
        print("SENT", name, flush=True)
    except OSError as exc:
        print("DENIED", name, type(exc).__name__, flush=True)
print("end", flush=True)
"""


@pytest.mark.parametrize(
    "actions",
    [
        '[("parent", lambda: os.kill(os.getppid(), 9))]',
        '[("init", lambda: os.kill(1, 9))]',
        '[("everyone", lambda: os.kill(-1, 9))]',
        '[("parent-group", lambda: os.killpg(os.getpgid(os.getppid()), 9))]',
        '[("stop-everyone", lambda: os.kill(-1, 19))]',
    ],
    ids=["parent", "init", "minus-one", "parent-group", "sigstop-all"],
)
def test_signal_parent_and_everyone(box: Box, actions: str) -> None:
    pool_pids = descendants(os.getpid())
    rec = box.run(KILL.format(actions=actions))
    assert rec.status != "sandbox_error", _show(rec)
    assert rec.stdout.startswith("start"), _show(rec)
    assert all(alive(pid) for pid in pool_pids), "a sandbox worker died"


def test_signal_host_processes(box: Box) -> None:
    """The test process and the pool's own processes by their host pids."""
    targets = sorted(descendants(os.getpid()) | {os.getpid()})
    assert targets
    actions = "[" + ", ".join(f'("{pid}", lambda: os.kill({pid}, 9))' for pid in targets) + "]"
    rec = box.run(KILL.format(actions=actions))
    assert rec.status == "ok", _show(rec)
    assert "SENT" not in rec.stdout, rec.stdout
    assert rec.stdout.count("DENIED") == len(targets), rec.stdout
    assert all(alive(pid) for pid in targets)


KILL_EVERYTHING = """
import os
me, killed = os.getpid(), []
pids = set(range(2, 5000))
try:
    pids |= {{int(p) for p in os.listdir("/proc") if p.isdigit()}}
except OSError:
    pass
for pid in sorted((pids | set({extra!r})) - {{me}}):
    try:
        os.kill(pid, 9)
        killed.append(pid)
    except OSError:
        pass
print("killed", killed, flush=True)
os.kill(-1, 9)
print("done")
"""


def test_run_cannot_kill_a_concurrent_run(box: Box) -> None:
    victim: dict[str, Any] = {}

    def sleeper() -> None:
        victim["rec"] = box.run("import time\ntime.sleep(1.5)\nprint('survived')", Limits(wall_s=5))
        victim["returned"] = time.monotonic()

    extra = sorted(descendants(os.getpid()) | {os.getpid()})
    thread = threading.Thread(target=sleeper)
    thread.start()
    try:
        time.sleep(0.4)  # the victim is running on the other worker
        rec = box.run(KILL_EVERYTHING.format(extra=extra), Limits(wall_s=5))
        attacked = time.monotonic()
    finally:
        thread.join(timeout=15)
    assert not thread.is_alive()
    assert attacked < victim["returned"], "the attack did not overlap the victim's run"
    assert rec.status != "sandbox_error", _show(rec)
    assert rec.stdout.startswith("killed"), _show(rec)
    survivor: RunRecord = victim["rec"]
    assert (survivor.status, survivor.stdout) == ("ok", "survived\n"), _show(survivor)
    assert all(alive(pid) for pid in extra)


# -- 12. daemons -----------------------------------------------------------------------------------


DAEMONS = """
import ctypes, os, time
for comm, detach in (({comm!r} + "c", True), ({comm!r} + "h", False)):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            ctypes.CDLL(None).prctl(15, comm.encode(), 0, 0, 0)  # PR_SET_NAME
            if detach:  # a proper daemon; the other one keeps the run's output pipes
                for fd in (0, 1, 2):
                    os.close(fd)
            time.sleep(3)
            with open(os.path.join({target!r}, comm), "w") as f:
                f.write("escaped")
            print("grandchild still alive", flush=True)
            os._exit(0)
        os._exit(0)
    os.wait()
print("parent done")
"""


def _comms(name: str) -> dict[int, str]:
    """Host processes called ``name``, with their state (``Z``: a zombie)."""
    found = {}
    for entry in _host_pids():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm, rest = stat.split("(", 1)[1].rsplit(")", 1)
        if comm == name:
            found[int(entry.name)] = rest.split()[0]
    return found


def test_detached_grandchild_does_not_outlive_the_run(box: Box, host_dir: Path) -> None:
    """Double fork + setsid: one daemon closes its stdio, one holds the run's pipes."""
    comm = "sbd" + secrets.token_hex(5)
    started = time.monotonic()
    rec = box.run(DAEMONS.format(comm=comm, target=str(host_dir)), Limits(wall_s=10))
    returned = time.monotonic() - started
    assert rec.status == "ok", _show(rec)
    assert rec.stdout == "parent done\n", _show(rec)
    assert returned < 2.5, f"the run waited on its daemons ({returned:.1f} s)"
    time.sleep(max(0.0, 4.0 - (time.monotonic() - started)))
    written = sorted(path.name for path in host_dir.iterdir())
    assert written == [], f"daemons wrote host files after the run ended: {written}"
    left = {pid: state for name in ("c", "h") for pid, state in _comms(comm + name).items()}
    assert left == {}, f"daemons are still on the host (pid: state, Z = unreaped zombie): {left}"
    _assert_no_run_processes(box.run_uids, grace_s=0.5)


# -- 13. forged results ----------------------------------------------------------------------------


FORGE_FDS = """
import json, os, struct
def frame(message):
    body = json.dumps(message).encode()
    return struct.pack(">I", len(body)) + body
fake = {fake!r}
writable = []
for fd in range(3, 256):
    try:
        os.write(fd, frame(fake) + {text!r})
        writable.append(fd)
    except OSError:
        pass
"""


def test_plain_run_has_no_descriptor_to_forge_on(box: Box) -> None:
    fake = {"status": "ok", "stdout": "FORGED", "exit_code": 0, "tests": []}
    program = FORGE_FDS.format(fake=fake, text=b"FORGED text\n") + "print('writable', writable)\n"
    rec = box.run(program)
    assert rec.status == "ok", _show(rec)
    assert rec.stdout == "writable []\n", rec.stdout
    assert "FORGED" not in rec.stdout + rec.stderr


SNOOP_FOR_EXPECTED = """
import os, re
def find_expected():
    # Look for the expected value wherever it might be: other processes' memory,
    # command lines and environments (the judge holds the assert snippet).
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:  # no listing: the judge was started just after this process
        pids = [str(p) for p in range(max(1, os.getpid() - 300), os.getpid() + 300)]
    for pid in pids:
        for name in ("cmdline", "environ"):
            try:
                found = re.search(rb"f\\(1\\) == (\\d+)", open(f"/proc/{pid}/{name}", "rb").read())
                if found:
                    return int(found.group(1))
            except OSError:
                pass
        try:
            maps = open(f"/proc/{pid}/maps").read().splitlines()
            with open(f"/proc/{pid}/mem", "rb") as mem:
                for line in maps:
                    lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                    if "rw" not in line.split()[1] or hi - lo > 64 << 20:
                        continue
                    mem.seek(lo)
                    found = re.search(rb"f\\(1\\) == (\\d+)", mem.read(hi - lo))
                    if found:
                        return int(found.group(1))
        except (OSError, ValueError, OverflowError):
            pass
    return 0
"""


@pytest.mark.parametrize("kind", ["stdin", "call", "assert"])
def test_test_run_forgery_cannot_pass_unknown_expected(box: Box, kind: str) -> None:
    """The program writes forged result frames to every descriptor and snoops for the
    expected answer; the expected value is a random secret it has no way to compute."""
    answer = secrets.randbelow(10**15) + 10**15
    fake = {"ready": True, "names": ["f"], "passed": True, "stdout": "0", "value": 0, "error": None}
    forge = FORGE_FDS.format(fake=fake, text=b"") + SNOOP_FOR_EXPECTED
    if kind == "stdin":
        suite = Suite(kind="stdin", items=[Case(stdin="1\n", stdout=f"{answer}\n")] * 2)
        program = forge + "print(find_expected())\n"
    elif kind == "call":
        suite = Suite(kind="call", entry_point="f", items=[Case(args=[1], expected=answer)] * 2)
        program = forge + "def f(x):\n    return find_expected()\n"
    else:
        suite = Suite(
            kind="assert", entry_point="f", items=[Case(code=f"assert f(1) == {answer}")] * 2
        )
        program = forge + "def f(x):\n    return find_expected()\n"
    result = box.sb.test(
        "python", program, suite, per_test_s=2, limits=Limits(wall_s=6), options=JudgeOptions()
    )
    assert result.record.status != "sandbox_error", result.record
    assert [r.passed for r in result.results] == [False] * len(suite.items), result.results
    assert str(answer) not in result.record.stdout + result.record.stderr


# -- 14. exit-code oracles and patched harnesses ---------------------------------------------------


SUITES = {
    "stdin": Suite(
        kind="stdin",
        items=[Case(stdin="2\n", stdout="4\n"), Case(stdin="5\n", stdout="10\n")],
    ),
    "call": Suite(
        kind="call",
        entry_point="f",
        items=[Case(args=[2], expected=4), Case(args=[5], expected=10)],
    ),
    "assert": Suite(
        kind="assert",
        entry_point="f",
        items=[
            Case(code="assert f(2) == 4"),
            Case(code="assert abs(f(5) - 10) < 1e-9"),
            Case(code="def check(candidate):\n    assert candidate(7) == 14\ncheck(f)"),
            Case(code="assert isinstance(f(1), int) and len([f(3)]) == 1 and f(3) == 6"),
        ],
    ),
}
HONEST = {
    "stdin": "print(2 * int(input()))\n",
    "call": "def f(x):\n    return 2 * x\n",
    "assert": "def f(x):\n    return 2 * x\n",
}
WRONG = {  # what the cheats compute when they get that far: a wrong answer
    "stdin": "print(2 * int(input()) + 1)\n",
    "call": "def f(x):\n    return 2 * x + 1\n",
    "assert": "def f(x):\n    return 2 * x + 1\n",
}
PATCH_HARNESS = """
import builtins, sys
import sandbox.frames as frames
import sandbox.harness as harness
real_write = frames.write
def lying_write(fd, message, _real=real_write):
    if isinstance(message, dict):
        message = {**message, "passed": True, "error": None, "exit_code": 0}
    _real(fd, message)
frames.write = lying_write
harness.frames.write = lying_write
harness.judge = lambda names: None
harness._error = lambda exc: ""
harness.run_main = lambda source: 0
"""
PATCH_BUILTINS = """
import builtins
class Never(BaseException):
    pass
builtins.AssertionError = Never
builtins.abs = lambda x: 0
builtins.isinstance = lambda *a: True
builtins.len = lambda x: 1
builtins.print = lambda *a, **k: None
"""
SHADOW_BUILTINS = """
def abs(x):
    return 0
def isinstance(*a):
    return True
def len(x):
    return 1
"""
CHEATS = {
    "sys-exit": lambda kind: "import sys\nsys.exit(0)\n" + HONEST[kind],
    "os-exit": lambda kind: "import os\nos._exit(0)\n" + HONEST[kind],
    "raise-systemexit": lambda kind: "raise SystemExit\n" + HONEST[kind],
    "exit-in-function": lambda kind: (
        "import os\nx = input()\nos._exit(0)\n"
        if kind == "stdin"
        else "import os\ndef f(x):\n    os._exit(0)\n"
    ),
    "systemexit-in-function": lambda kind: (
        "x = input()\nraise SystemExit(0)\n"
        if kind == "stdin"
        else "def f(x):\n    raise SystemExit(0)\n"
    ),
    # PID 1 of a namespace ignores its own SIGKILL: then the cheat goes on with a wrong answer.
    "kill-self": lambda kind: (
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n" + WRONG[kind]
    ),
    "patch-harness": lambda kind: PATCH_HARNESS + WRONG[kind],
    "patch-builtins": lambda kind: PATCH_BUILTINS + WRONG[kind],
    "shadow-builtins": lambda kind: SHADOW_BUILTINS + WRONG[kind],
}


def _judge(box: Box, kind: str, program: str) -> ProgramRun:
    return box.sb.test(
        "python",
        program,
        SUITES[kind],
        per_test_s=2,
        limits=Limits(wall_s=8),
        options=JudgeOptions(),
    )


@pytest.mark.parametrize("kind", list(SUITES))
def test_honest_program_passes(box: Box, kind: str) -> None:
    """The control: the suites below are passable."""
    result = _judge(box, kind, HONEST[kind])
    assert result.record.status == "ok", result.record
    assert [r.passed for r in result.results] == [True] * len(SUITES[kind].items), result


@pytest.mark.parametrize("kind", list(SUITES))
@pytest.mark.parametrize("cheat", list(CHEATS))
def test_cheats_earn_nothing(box: Box, cheat: str, kind: str) -> None:
    result = _judge(box, kind, CHEATS[cheat](kind))
    assert result.record.status != "sandbox_error", result.record
    passed = [r.passed for r in result.results]
    assert passed == [False] * len(SUITES[kind].items), (passed, result.results)


# -- compiled programs -----------------------------------------------------------------------------


CPP_FORK_BOMB = """
#include <unistd.h>
int main() { for (;;) fork(); }
"""

CPP_READ = """
#include <cstdio>
int main() {
    const char* paths[] = {%s};
    for (const char* path : paths) {
        FILE* f = std::fopen(path, "rb");
        if (!f) { std::printf("DENIED %%s\\n", path); continue; }
        char buf[4096];
        size_t n = std::fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        std::printf("READ %%s %%s\\n", path, buf);
        std::fclose(f);
    }
}
"""


@pytest.mark.skipif(not HAS_GXX, reason="g++ is not installed")
def test_cpp_fork_bomb(box: Box) -> None:
    limits = Limits(wall_s=1, processes=64)
    rec = box.sb.run(RunRequest(language="cpp", source=CPP_FORK_BOMB, limits=limits))
    assert rec.compile is None or rec.compile.status == "ok", rec.compile
    assert rec.status == "timeout", _show(rec)
    # As in test_fork_bomb: the bound is that the kill comes, not how fast a loaded machine
    # reaps 64 forking processes (1.568 s seen under the suite; 3.920 s in a full .ci/run).
    assert rec.wall_s <= limits.wall_s + 4.0, _show(rec)
    _assert_no_run_processes(box.run_uids)


@pytest.mark.skipif(not HAS_GXX, reason="g++ is not installed")
def test_cpp_read_secret(box: Box, host_secrets: Secrets) -> None:
    paths = [view for path in host_secrets.paths for view in _views(path)]
    source = CPP_READ % ", ".join(json.dumps(p) for p in paths)
    rec = box.sb.run(RunRequest(language="cpp", source=source, limits=SHORT))
    assert rec.status == "ok", _show(rec)
    assert host_secrets.text not in rec.stdout + rec.stderr
    assert rec.stdout.count("DENIED") == len(paths), rec.stdout


@pytest.mark.skipif(not HAS_GXX, reason="g++ is not installed")
def test_cpp_include_secret_at_compile_time(box: Box, host_secrets: Secrets) -> None:
    """The compiler runs in the sandbox too: an #include of a host file must not quote it."""
    for path in host_secrets.paths:
        source = f'#include "{path}"\nint main() {{ return 0; }}\n'
        rec = box.sb.run(RunRequest(language="cpp", source=source, limits=SHORT))
        assert rec.status == "compile_error", _show(rec)
        assert rec.compile is not None
        everything = rec.stdout + rec.stderr + rec.compile.stdout + rec.compile.stderr
        assert host_secrets.text not in everything


# -- 15. memory of many processes together (issue 14, item 3) --------------------------------------


MANY_HOGS = """
import os, time
kids = []
for _ in range({children}):
    pid = os.fork()
    if pid == 0:
        block = bytearray({each_mb} << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep({hold_s})
        os._exit(0)
    kids.append(pid)
killed = 0
for pid in kids:
    _, status = os.waitpid(pid, 0)
    killed += os.WIFSIGNALED(status)
print("killed", killed, flush=True)
"""


def _resident_mb(uids: range) -> float:
    """Memory of every host process of a run uid together (proportional set size: pages
    shared between them count once), MiB."""
    total_kb = 0
    for pid in _run_processes(uids):
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in rollup.splitlines():
            if line.startswith("Pss:"):
                total_kb += int(line.split()[1])
    return total_kb / 1024


class _Sampler(threading.Thread):
    """Samples, from the host, what a pool's runs hold together while a run goes on."""

    def __init__(self, uids: range) -> None:
        super().__init__(daemon=True)
        self.uids, self.peak_mb, self.done = uids, 0.0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.02):
            self.peak_mb = max(self.peak_mb, _resident_mb(self.uids))


def test_memory_of_many_processes_is_capped_together(box: Box) -> None:
    """16 children of 400 MiB each under a 1 GiB limit: the run cannot hold 6.4 GiB, the
    record says it hit its memory limit and reports its real peak (not one process's)."""
    if box.backend == "docker":
        pytest.skip("the container's own memory limit caps the run; not observable here")
    limits = Limits(wall_s=30, memory_mb=1024)
    sampler = _Sampler(box.run_uids)
    sampler.start()
    try:
        rec = box.run(MANY_HOGS.format(children=16, each_mb=400, hold_s=2), limits)
    finally:
        sampler.done.set()
        sampler.join()
    assert sampler.peak_mb > 300, "the sampler saw none of the run's memory"
    # The sampler reads the processes one after another, not at one instant: on a loaded
    # machine one read before a child is killed and another after its sibling grew into the
    # freed pages add up past the limit (1,214 MiB seen in a full .ci/run). The cgroup's own
    # peak below (rec.memory_mb) is the exact check; this one says the run never held much more.
    assert sampler.peak_mb <= limits.memory_mb * 1.25, sampler.peak_mb
    assert rec.status == "memory_limit", _show(rec)
    assert 400 <= rec.memory_mb <= limits.memory_mb * 1.05, _show(rec)
    assert int(rec.stdout.split()[1]) >= 1, _show(rec)  # children were killed for it


def test_memory_of_processes_within_the_limit_is_reported_together(box: Box) -> None:
    """Four children of 100 MiB at once: ok, and the record's peak counts all four."""
    if box.backend == "docker":
        pytest.skip("per-run cgroups are a local backend's")
    rec = box.run(MANY_HOGS.format(children=4, each_mb=100, hold_s=2), Limits(wall_s=20))
    assert (rec.status, rec.stdout) == ("ok", "killed 0\n"), _show(rec)
    assert rec.memory_mb >= 4 * 100, _show(rec)


# -- 16. /dev/shm and System V IPC between runs (issue 14, item 4) --------------------------------


SHM_WRITE = """
import ctypes, os
try:
    with open("/dev/shm/{name}", "w") as f:
        f.write("{secret}")
    print("WROTE", flush=True)
except OSError as exc:
    print("DENIED", type(exc).__name__, flush=True)
libc = ctypes.CDLL(None, use_errno=True)
print("SYSV", libc.shmget({key}, 4096, 0o1000 | 0o666), flush=True)
"""

SHM_READ = """
import ctypes, os
try:
    print("LIST", os.listdir("/dev/shm"))
    print("READ", open("/dev/shm/{name}").read())
except OSError as exc:
    print("DENIED", type(exc).__name__)
libc = ctypes.CDLL(None, use_errno=True)
print("SYSV", libc.shmget({key}, 4096, 0o666))
"""


def _host_shm_files(uids: range) -> list[str]:
    return [
        entry.name
        for entry in Path("/dev/shm").iterdir()  # the host's, inspected
        if entry.stat().st_uid in uids
    ]


def _host_sysv_keys(key: int) -> list[str]:
    return [line for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
            if line.split() and int(line.split()[0]) == key]  # fmt: skip


def test_shm_and_sysv_ipc_do_not_pass_to_a_later_run(box: Box) -> None:
    name, secret, key = f"sb-{secrets.token_hex(6)}", secrets.token_hex(16), 0x5B00 + os.getpid()
    for _ in range(WORKERS):  # a write on every worker...
        wrote = box.run(SHM_WRITE.format(name=name, secret=secret, key=key))
        assert wrote.status == "ok", _show(wrote)
    for _ in range(WORKERS):  # ...then a read on every worker
        rec = box.run(SHM_READ.format(name=name, key=key))
        assert rec.status == "ok", _show(rec)
        assert secret not in rec.stdout, _show(rec)
        assert "SYSV -1" in rec.stdout, _show(rec)
    assert not _host_shm_files(box.run_uids)
    assert not _host_sysv_keys(key)


SHM_FILL = """
import os
try:
    with open("/dev/shm/fill", "wb") as f:
        while True:
            f.write(b"x" * (1 << 20))
except OSError as exc:
    print("STOPPED", type(exc).__name__, flush=True)
os.fork() == 0 and __import__("time").sleep(30)  # a child keeps it open
"""

SHM_USE = """
import multiprocessing
from multiprocessing import shared_memory
lock = multiprocessing.Lock()
with lock:
    block = shared_memory.SharedMemory(create=True, size=1 << 20)
    block.buf[0] = 7
    print("OK", block.buf[0])
    block.close()
    block.unlink()
"""


def test_a_full_dev_shm_does_not_break_later_runs(box: Box) -> None:
    for _ in range(WORKERS):
        rec = box.run(SHM_FILL, Limits(wall_s=2))
        assert "STOPPED" in rec.stdout, _show(rec)
    if box.full:
        for _ in range(WORKERS):
            honest = box.run(SHM_USE)
            assert (honest.status, honest.stdout) == ("ok", "OK 7\n"), _show(honest)
    assert not _host_shm_files(box.run_uids)


# -- 17. the host's layout (issue 14, item 6) --------------------------------------------------


LAYOUT = """
import json, os, sys
seen = {{"executable": sys.executable, "path": sys.path, "env": dict(os.environ)}}
modules = list(sys.modules.values())
for name, read in (
    ("root", lambda: os.listdir("/")),
    ("maps", lambda: open("/proc/self/maps").read()),
    ("files", lambda: sorted({{getattr(m, "__file__", None) or "" for m in modules}})),
    ("cmdline", lambda: open("/proc/self/cmdline", "rb").read().decode(errors="replace")),
    ("exe", lambda: os.readlink("/proc/self/exe")),
    ("home", lambda: os.listdir({home!r})),
    ("checkout", lambda: os.listdir({checkout!r})),
):
    try:
        seen[name] = read()
    except OSError as exc:
        seen[name] = "DENIED " + type(exc).__name__
print(json.dumps(seen))
"""


def _host_layout() -> list[str]:
    """Host paths a run must not learn: the interpreter's and venv's homes, the checkout."""
    names = {
        os.path.realpath(sys.prefix),
        os.path.realpath(sys.base_prefix),
        str(Path(sandbox.__file__).resolve().parents[1]),
        str(Path.home()),
    }
    return sorted(n for n in names if not n.startswith("/usr"))


def test_the_host_layout_does_not_show_through(box: Box) -> None:
    checkout = str(Path(__file__).resolve().parents[1])
    rec = box.run(LAYOUT.format(home=str(Path.home()), checkout=checkout), Limits(wall_s=10))
    assert rec.status == "ok", _show(rec)
    seen = json.loads(rec.stdout)
    if box.full:
        for name in _host_layout():
            assert name not in rec.stdout + rec.stderr, (name, seen)
        assert not {"root", "work", "home"} & set(seen["root"]), seen["root"]
        assert seen["home"].startswith("DENIED") and seen["checkout"].startswith("DENIED")
        return
    # Weak isolation cannot move the runtime; Landlock keeps the run from looking around.
    worker = box.sb.pool.workers()[0]
    if worker is None or not getattr(worker, "landlock", True):
        pytest.skip("no Landlock here")
    for name in ("root", "maps", "home", "checkout"):
        assert str(seen[name]).startswith("DENIED"), (name, seen[name])
