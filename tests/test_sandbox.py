"""The sandbox's parts and its run semantics: values, frames, judging, languages, records,
test runs, the worker pool's recovery. Attacks are in ``test_sandbox_attacks``."""

from __future__ import annotations

import base64
import json
import math
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from sandbox import frames, languages, values
from sandbox.backends import SandboxConfig, open_sandbox
from sandbox.model import Limits, RunRequest
from sandbox.pool import Overloaded, SandboxPool, local_factory
from sandbox.remote import RemoteSandbox, SandboxSocketServer
from sandbox.runner import MatrixRequest, Sandbox, SandboxInputError
from sandbox.testcases import (
    JudgeOptions,
    TestCase,
    TestSuite,
    stdout_matches,
    values_match,
)

HAS_GXX = shutil.which("g++") is not None
FAST = Limits(wall_s=3)

# --- values -----------------------------------------------------------------------------------

plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=10)
    | st.binary(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.frozensets(st.integers(), max_size=3)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        | st.dictionaries(st.integers(), inner, max_size=3)
    ),
    max_leaves=20,
)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)  # type: ignore[attr-defined]
    return a == b


@given(plain)
def test_values_round_trip_through_json(value: object) -> None:
    encoded = values.encode(value)
    decoded = values.decode(frames.FrameReader().feed(frames.pack(encoded))[0])
    assert _same(decoded, value)


def test_values_refuse_what_is_not_plain_data() -> None:
    class Liar(int):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = int.__hash__

    for value in (Liar(3), object(), [1, {2, (3, lambda: 0)}], range(3)):
        with pytest.raises(values.NotPlainData):
            values.encode(value)
    with pytest.raises(values.NotPlainData):
        values.encode(list(range(100)), max_nodes=50)
    nested: list[object] = []
    for _ in range(5000):
        nested = [nested]
    with pytest.raises(values.NotPlainData, match="deeply"):
        values.encode(nested)


@pytest.mark.parametrize(
    "payload",
    [{"$q": 1}, {"$t": 5}, {"$d": [[[1], 2]]}, {"$b": "!!"}, {"$f": "pi"}, {"$c": [1]}, 3j],
)
def test_values_refuse_malformed_payloads(payload: object) -> None:
    with pytest.raises(values.NotPlainData):
        values.decode(payload)


# --- frames -----------------------------------------------------------------------------------


def test_frames_reassemble_split_chunks_and_refuse_garbage() -> None:
    data = frames.pack({"a": 1}) + frames.pack([2, 3])
    reader = frames.FrameReader()
    got = [frame for byte in data for frame in reader.feed(bytes([byte]))]
    assert got == [{"a": 1}, [2, 3]]
    assert reader.pending == 0
    with pytest.raises(frames.FrameError, match="exceeds"):
        frames.FrameReader(max_bytes=10).feed(frames.pack("x" * 100))
    with pytest.raises(frames.FrameError, match="not JSON"):
        frames.FrameReader().feed(b"\x00\x00\x00\x03abc")
    with pytest.raises(frames.FrameError):
        frames.FrameReader().feed(b"\x00\x00\x00\x0f" + b"[" * 15)  # truncated JSON
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(frames.FrameError):
        frames.FrameReader().feed(len(deep).to_bytes(4, "big") + deep)


# --- judging ----------------------------------------------------------------------------------


def test_stdout_comparison_modes() -> None:
    tokens, lines, exact = (JudgeOptions(whitespace=w) for w in ("tokens", "lines", "exact"))
    assert stdout_matches("1 2\n3\n", "1  2 3", tokens)
    assert not stdout_matches("1 2\n3\n", "1  2 3", lines)
    assert stdout_matches("1 2  \n3\n\n", "1 2\n3", lines)
    assert not stdout_matches("1 2\n", "1 2", exact)
    assert stdout_matches("1 2", "1 2", exact)
    assert not stdout_matches("12", "1 2", tokens)
    assert not stdout_matches("", "0", tokens)
    tolerant = JudgeOptions(float_tolerance=1e-6)
    assert stdout_matches("0.3333333", "0.33333333333", tolerant)
    assert not stdout_matches("0.3334", "0.33333333333", tolerant)
    assert not stdout_matches("0.3333333", "0.33333333333", tokens)
    assert stdout_matches("nan", "nan", tolerant)
    assert not stdout_matches("abc", "abd", tolerant)


def test_value_comparison() -> None:
    assert values_match([1, (2, 3)], [1, [2, 3]], None)
    assert not values_match(True, 1, None)
    assert not values_match(1, True, None)
    assert values_match(1, 1.0, None)
    assert not values_match(0.1 + 0.2, 0.3, None)
    assert values_match(0.1 + 0.2, 0.3, 1e-9)
    assert not values_match({"a": 1}, {"a": 1, "b": 2}, None)
    assert values_match({1, 2}, {2, 1}, None)
    assert not values_match("1", 1, None)
    assert values_match(float("nan"), float("nan"), 1e-9)


def test_suites_are_checked_when_built() -> None:
    with pytest.raises(ValidationError, match="needs 'stdin'"):
        TestSuite(kind="stdin", items=[TestCase(stdout="1")])
    with pytest.raises(ValidationError, match="entry_point"):
        TestSuite(kind="call", items=[TestCase(args=[1], expected=1)])
    with pytest.raises(ValidationError, match="malformed"):
        TestSuite(kind="call", entry_point="f", items=[TestCase(args=[{"$t": 3}], expected=1)])
    with pytest.raises(ValidationError, match="needs 'code'"):
        TestSuite(kind="assert", items=[TestCase(code="")])
    with pytest.raises(ValidationError):
        TestSuite(kind="call", entry_point="os.system('x')", items=[TestCase(args=[])])
    with pytest.raises(ValidationError):
        TestSuite(kind="stdin", items=[])
    suite = TestSuite(kind="stdin", items=[TestCase(stdin="1", stdout="secret")])
    assert "secret" not in str(suite.inputs())


def test_requests_refuse_bad_files_and_limits() -> None:
    for name in ("/etc/passwd", "../x", "a/../../x", "", "."):
        with pytest.raises(ValidationError):
            RunRequest(source="", files={name: ""})
    with pytest.raises(ValidationError, match="base64"):
        RunRequest(source="", files={"a": "not base64!"})
    with pytest.raises(ValidationError):
        RunRequest(source="", fetch_files=["../../etc/passwd"])
    with pytest.raises(ValidationError):
        Limits(wall_s=0)
    with pytest.raises(ValidationError):
        Limits(memory_mb=10**9)
    with pytest.raises(ValidationError):
        RunRequest(source="x" * 1_000_001)


def test_languages_table() -> None:
    assert languages.get("Python3").name == "python"
    assert languages.get("c++").compiled
    with pytest.raises(languages.UnknownLanguage, match="cobol"):
        languages.get("cobol")


# --- runs -------------------------------------------------------------------------------------


def test_statuses_of_a_run(local_sandbox: Sandbox) -> None:
    def run(source: str, **limits: float) -> str:
        return local_sandbox.run(RunRequest(source=source, limits=Limits(**limits))).status

    assert run("print(1)") == "ok"
    assert run("raise ValueError") == "runtime_error"
    assert run("import sys; sys.exit(3)") == "runtime_error"
    assert run("import ctypes; ctypes.string_at(0)") == "runtime_error"  # a real SIGSEGV
    assert run("while True: pass", wall_s=1) == "timeout"
    assert run("while True: pass", wall_s=5, cpu_s=1) == "timeout"
    assert run("x = bytearray(3 << 30)", memory_mb=256) == "memory_limit"
    assert run("print('x' * 5000)", output_bytes=1024) == "output_limit"
    assert run("open('big', 'wb').write(b'x' * (3 << 20))", file_mb=1) in (
        "runtime_error",
        "output_limit",
    )


def test_a_record_reports_outputs_resources_and_isolation(local_sandbox: Sandbox) -> None:
    source = "import sys\ndata = sys.stdin.read()\nprint(data[::-1])\nprint('err', file=sys.stderr)"
    record = local_sandbox.run(RunRequest(source=source, stdin="abc"))
    assert record.status == "ok" and record.exit_code == 0
    assert record.stdout == "cba\n" and record.stderr == "err\n"
    assert record.isolation == "full" == local_sandbox.isolation
    assert 0 < record.wall_s < 3 and record.memory_mb > 1
    spin = local_sandbox.run(RunRequest(source="while True: pass", limits=Limits(wall_s=1)))
    assert spin.cpu_s > 0.05 and spin.signal == signal.SIGKILL
    loud = local_sandbox.run(
        RunRequest(source="print('y' * 10**6)", limits=Limits(output_bytes=2048))
    )
    assert loud.stdout_truncated and len(loud.stdout) == 2048


def test_files_in_and_out_and_no_symlink_escape(local_sandbox: Sandbox) -> None:
    source = (
        "import os\n"
        "print(open('data/in.txt').read())\n"
        "open('out.txt', 'w').write('result')\n"
        "os.symlink('/etc/hostname', 'link')\n"
    )
    record = local_sandbox.run(
        RunRequest(
            source=source,
            files={"data/in.txt": base64.b64encode(b"hello").decode()},
            fetch_files=["out.txt", "link", "missing"],
        )
    )
    assert record.status == "ok", record.stderr
    assert record.stdout == "hello\n"
    assert base64.b64decode(record.files["out.txt"]) == b"result"
    assert "link" not in record.files and "missing" not in record.files


def test_every_run_starts_from_a_clean_scratch_directory(local_sandbox: Sandbox) -> None:
    source = "import os\nprint(sorted(os.listdir('.')))\nopen('left_behind', 'w').write('x')"
    first = local_sandbox.run(RunRequest(source=source))
    second = local_sandbox.run(RunRequest(source=source))
    assert first.stdout == second.stdout == "['main.py']\n"


def test_scratch_directories_are_removed_whatever_a_run_leaves() -> None:
    """Most runs leave only their source, removed by two system calls; whatever else a run
    leaves (files, directories, its source replaced by a directory, a link out) goes too, and
    nothing the link points to."""
    tmp_path = Path(tempfile.mkdtemp(prefix="envserver-scratch-test-"))
    tmp_path.chmod(0o711)  # the weak run's uid traverses it to its scratch directory
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    leavers = [
        "print(1)",
        "open('left', 'w').write('x')",
        "import os\nos.makedirs('a/b/c')\nopen('a/b/c/f', 'w').write('x')",
        "import os\nos.remove('main.py')\nos.mkdir('main.py')\nopen('main.py/f', 'w').write('x')",
        f"import os\nos.remove('main.py')\nos.symlink({str(outside)!r}, 'main.py')",
    ]
    sandbox = open_sandbox(SandboxConfig(backend="weak", workers=1, workdir=str(tmp_path / "w")))
    try:
        for source in leavers:
            record = sandbox.run(RunRequest(source=source))
            assert record.status == "ok", record.stderr
            assert not list((tmp_path / "w" / "slot0" / "scratch").iterdir()), source
        assert outside.read_text() == "keep"
    finally:
        sandbox.close()
        shutil.rmtree(tmp_path)


@pytest.mark.parametrize("backend", ["local", "weak"])
def test_a_run_has_exactly_its_environment(backend: str) -> None:
    """The worker keeps the run's variables itself and a run only drops the worker's own and
    sets its home: the result is the same environment as a run built from nothing."""
    source = "import os, json; print(json.dumps([dict(os.environ), os.getcwd()]))"
    sandbox = open_sandbox(SandboxConfig(backend=backend, workers=1))  # type: ignore[arg-type]
    try:
        for _ in range(2):
            record = sandbox.run(RunRequest(source=source))
            env, cwd = json.loads(record.stdout)
            assert env.pop("HOME") == env.pop("TMPDIR") == cwd
            env.pop("LD_LIBRARY_PATH", None)  # the runtime's, where the interpreter needs it
            assert env == {
                "PATH": "/usr/local/bin:/usr/bin:/bin",
                "LANG": "C.UTF-8",
                "PYTHONDONTWRITEBYTECODE": "1",
            }
    finally:
        sandbox.close()


@pytest.mark.parametrize("backend", ["local", "weak"])
def test_workers_do_not_carry_threading(backend: str) -> None:
    """``threading`` re-initialises itself in every forked child (about 110 page faults of
    copy-on-write, a fifth of a trivial run's): the worker must not have imported it, while a
    run still can."""
    sandbox = open_sandbox(SandboxConfig(backend=backend, workers=1))  # type: ignore[arg-type]
    try:
        names = "('threading', 'subprocess', 'logging')"
        loaded = sandbox.run(
            RunRequest(source=f"import sys; print([m for m in {names} if m in sys.modules])")
        )
        assert loaded.status == "ok" and loaded.stdout == "[]\n", loaded
        threaded = sandbox.run(
            RunRequest(
                source="import threading\nt = threading.Thread(target=print, args=('x',))\n"
                "t.start()\nt.join()"
            )
        )
        assert threaded.status == "ok" and threaded.stdout == "x\n", threaded
    finally:
        sandbox.close()


@pytest.mark.skipif(not HAS_GXX, reason="g++ is not installed")
def test_cpp_builds_once_per_source_and_reports_compile_errors(local_sandbox: Sandbox) -> None:
    source = '#include <cstdio>\nint main(){int a,b;scanf("%d %d",&a,&b);printf("%d\\n",a*b);}'
    first = local_sandbox.run(RunRequest(language="cpp", source=source, stdin="6 7"))
    assert first.status == "ok" and first.stdout == "42\n"
    records = [
        local_sandbox.run(RunRequest(language="cpp", source=source, stdin="2 3")) for _ in range(4)
    ]
    assert all(r.stdout == "6\n" for r in records)
    # At least one of the repeats hit a worker's cache (two workers, five runs).
    assert any(r.compile is None for r in [first, *records])
    broken = local_sandbox.run(RunRequest(language="cpp", source="int main( {"))
    assert broken.status == "compile_error"
    assert broken.compile is not None and "error" in broken.compile.stderr
    crash = local_sandbox.run(RunRequest(language="cpp", source="int main(){int*p=0;return *p;}"))
    assert crash.status == "runtime_error" and crash.signal == signal.SIGSEGV


def test_bash_runs(local_sandbox: Sandbox) -> None:
    record = local_sandbox.run(
        RunRequest(language="bash", source="read x; echo $((x + 1))", stdin="41")
    )
    assert record.status == "ok" and record.stdout == "42\n"


def test_input_errors(local_sandbox: Sandbox) -> None:
    with pytest.raises(SandboxInputError, match="unknown language"):
        local_sandbox.run(RunRequest(language="cobol", source="x"))
    suite = TestSuite(kind="call", entry_point="f", items=[TestCase(args=[1], expected=1)])
    with pytest.raises(SandboxInputError, match="need Python"):
        local_sandbox.test("bash", "f", suite, per_test_s=1, limits=FAST, options=JudgeOptions())
    garbage = local_sandbox.run(RunRequest(source="\x00\xff\ufffe garbage"))
    assert garbage.status == "runtime_error"


# --- test runs --------------------------------------------------------------------------------


def _judge(sandbox: Sandbox, source: str, suite: TestSuite, language: str = "python") -> list[bool]:
    run = sandbox.test(
        language, source, suite, per_test_s=1, limits=Limits(wall_s=10), options=JudgeOptions()
    )
    return [result.passed for result in run.results]


STDIN = TestSuite(
    kind="stdin",
    items=[TestCase(stdin=f"{a} {b}\n", stdout=f"{a + b}\n") for a, b in ((1, 2), (5, 5), (0, 7))],
)


def test_stdin_tests_share_one_process_without_sharing_state(local_sandbox: Sandbox) -> None:
    adder = "import sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)"
    assert _judge(local_sandbox, adder, STDIN) == [True, True, True]
    # Module-level state does not leak from one test into the next.
    stateful = (
        "count = globals().get('count', 0) + 1\n"
        "a, b = map(int, input().split())\n"
        "print(a + b + count - 1)"
    )
    assert _judge(local_sandbox, stateful, STDIN) == [True, True, True]
    assert _judge(local_sandbox, "print(3)", STDIN) == [True, False, False]
    # A crash on one test does not lose the others: the program restarts.
    crashy = "import os\na, b = map(int, input().split())\nif a == 5: os._exit(1)\nprint(a + b)"
    assert _judge(local_sandbox, crashy, STDIN) == [True, False, True]


def test_a_hanging_test_times_out_and_the_rest_are_not_rerun(local_sandbox: Sandbox) -> None:
    source = "a, b = map(int, input().split())\nwhile a == 5: pass\nprint(a + b)"
    run = local_sandbox.test(
        "python", source, STDIN, per_test_s=0.5, limits=Limits(wall_s=10), options=JudgeOptions()
    )
    assert [r.status for r in run.results] == ["ok", "timeout", "timeout"]
    assert run.results[0].passed and not run.results[2].passed
    assert run.record.wall_s < 3


def test_call_tests_compare_return_values_in_the_trusted_process(local_sandbox: Sandbox) -> None:
    suite = TestSuite(
        kind="call",
        entry_point="pairs",
        items=[
            TestCase(args=[2], expected=values.encode([(0, 1)])),
            TestCase(
                args=[3], kwargs={"offset": 1}, expected=values.encode([(1, 2), (1, 3), (2, 3)])
            ),
            TestCase(args=[-1], expected=[]),
        ],
    )
    good = (
        "def pairs(n, offset=0):\n"
        "    if n < 0: raise ValueError('negative')\n"
        "    return [(i + offset, j + offset) for i in range(n) for j in range(i + 1, n)]"
    )
    assert _judge(local_sandbox, good, suite) == [True, True, False]
    lying = (
        "class Any(list):\n    def __eq__(self, o): return True\n"
        "def pairs(n, offset=0): return Any()"
    )
    assert _judge(local_sandbox, lying, suite) == [False, False, False]
    method = TestSuite(
        kind="call", entry_point="Solution.twice", items=[TestCase(args=[4], expected=8)]
    )
    assert _judge(
        local_sandbox, "class Solution:\n    def twice(self, x): return 2 * x", method
    ) == [True]


def test_assert_tests_run_in_a_judge_that_never_runs_the_program(local_sandbox: Sandbox) -> None:
    suite = TestSuite(
        kind="assert",
        entry_point="add",
        items=[
            TestCase(code="assert add(1, 2) == 3"),
            TestCase(
                code="def check(candidate):\n    assert candidate(2, 2) == 4\n"
                "    assert candidate(0, 0) == 0\ncheck(candidate)"
            ),
            TestCase(code="import math\nassert math.isclose(add(0.1, 0.2), 0.3)"),
            TestCase(
                code="try:\n    add('a', 1)\nexcept TypeError:\n    pass\n"
                "else:\n    raise AssertionError"
            ),
        ],
    )
    assert _judge(local_sandbox, "def add(a, b):\n    return a + b", suite) == [True] * 4
    assert _judge(local_sandbox, "def add(a, b):\n    return a - b", suite) == [
        False,
        False,
        False,
        True,
    ]
    # The program cannot reach the judge's asserts to neutralise them.
    patcher = (
        "import builtins\nbuiltins.AssertionError = type('X', (Exception,), {})\n"
        "def add(a, b):\n    return 0"
    )
    assert _judge(local_sandbox, patcher, suite)[:3] == [False, False, False]


def test_programs_that_do_not_load_fail_every_test(local_sandbox: Sandbox) -> None:
    suite = TestSuite(kind="call", entry_point="f", items=[TestCase(args=[1], expected=1)] * 3)
    run = local_sandbox.test(
        "python", "raise SystemExit(0)", suite, per_test_s=1, limits=FAST, options=JudgeOptions()
    )
    assert [r.passed for r in run.results] == [False] * 3
    assert all(r.status == "runtime_error" for r in run.results)
    missing = local_sandbox.test(
        "python", "def g(x): return x", suite, per_test_s=1, limits=FAST, options=JudgeOptions()
    )
    assert not any(r.passed for r in missing.results)
    assert "KeyError" in missing.results[0].error or "f" in missing.results[0].error


@pytest.mark.skipif(not HAS_GXX, reason="g++ is not installed")
def test_cpp_stdin_tests(local_sandbox: Sandbox) -> None:
    source = "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<std::endl;}"
    assert _judge(local_sandbox, source, STDIN, language="cpp") == [True, True, True]


def test_matrix(local_sandbox: Sandbox) -> None:
    request = MatrixRequest(
        programs=["a, b = map(int, input().split())\nprint(a + b)", "print(3)", "while True: pass"],
        tests=STDIN,
        per_test_s=0.5,
    )
    result = local_sandbox.matrix(request)
    assert result.matrix == [[True, True, True], [True, False, False], [False, False, False]]
    assert [c.status for c in result.cells[2]] == ["timeout"] * 3
    assert result.programs[0].passed == 3 and result.isolation == "full"


# --- the pool ---------------------------------------------------------------------------------


def test_a_worker_that_dies_mid_run_is_replaced_and_its_request_is_a_sandbox_error() -> None:
    sandbox = open_sandbox(SandboxConfig(backend="local", workers=1))
    try:
        first = sandbox.run(RunRequest(source="print(1)"))
        assert first.status == "ok"
        worker = sandbox.pool.workers()[0]  # the only worker
        assert worker is not None
        with ThreadPoolExecutor(1) as threads:
            sleeper = RunRequest(source="import time; time.sleep(30)", limits=Limits(wall_s=20))
            running = threads.submit(sandbox.run, sleeper)
            _until(lambda: sandbox.pool.busy == 1)
            time.sleep(0.2)  # the request is in the worker's hands
            os.killpg(worker.process.pid, signal.SIGKILL)  # type: ignore[attr-defined]
            lost = running.result()
        assert lost.status == "sandbox_error" and lost.detail
        again = sandbox.run(RunRequest(source="print(3)"))
        assert again.status == "ok" and again.stdout == "3\n"
        assert sandbox.pool.restarts == 1
    finally:
        sandbox.close()


def test_a_worker_that_dies_while_idle_costs_no_request_and_comes_back_unasked() -> None:
    sandbox = open_sandbox(SandboxConfig(backend="local", workers=1))
    try:
        worker = sandbox.pool.workers()[0]
        assert worker is not None and sandbox.pool.health().alive == 1
        os.killpg(worker.process.pid, signal.SIGKILL)  # type: ignore[attr-defined]
        _until(lambda: sandbox.pool.health().alive == 0 or sandbox.pool.restarts == 1)
        _until(lambda: sandbox.pool.restarts == 1 and sandbox.pool.health().alive == 1)
        assert sandbox.pool.workers()[0] is not worker
        record = sandbox.run(RunRequest(source="print(2)"))
        assert (record.status, record.stdout) == ("ok", "2\n")
    finally:
        sandbox.close()


def test_a_full_queue_is_refused() -> None:
    pool = SandboxPool(local_factory("full", ""), 1, max_waiting=1)
    sandbox = Sandbox(pool)
    slow = RunRequest(source="import time; time.sleep(1.5)")
    try:
        with ThreadPoolExecutor(2) as threads:
            running = threads.submit(sandbox.run, slow)
            _until(lambda: pool.busy == 1)
            waiting = threads.submit(sandbox.run, slow)
            _until(lambda: pool.waiting == 1)
            with pytest.raises(Overloaded):
                sandbox.run(RunRequest(source="print(1)"))
            assert running.result().status == waiting.result().status == "ok"
    finally:
        sandbox.close()


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 5
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_weak_backend_reports_itself() -> None:
    sandbox = open_sandbox(SandboxConfig(backend="weak", workers=1))
    try:
        record = sandbox.run(RunRequest(source="import os; print(os.getuid())"))
        assert record.isolation == "weak" == sandbox.isolation
        assert record.status == "ok" and int(record.stdout) != 0
    finally:
        sandbox.close()


# --- the server's sandbox over its socket -----------------------------------------------------


def test_remote_sandbox_offers_the_same_methods(local_sandbox: Sandbox, tmp_path: Path) -> None:
    server = SandboxSocketServer(local_sandbox, str(tmp_path / "s.sock"))
    try:
        remote = RemoteSandbox(server.path)
        assert remote.isolation == "full"
        assert remote.run(RunRequest(source="print(6 * 7)")).stdout == "42\n"
        records = remote.run_many([RunRequest(source=f"print({i})") for i in range(5)])
        assert [r.stdout for r in records] == [f"{i}\n" for i in range(5)]
        adder = "a, b = map(int, input().split())\nprint(a + b)"
        run = remote.test("python", adder, STDIN, per_test_s=1, limits=FAST, options=JudgeOptions())
        assert run.passed == 3
        result = remote.matrix(MatrixRequest(programs=[adder, "print(3)"], tests=STDIN))
        assert result.matrix == [[True] * 3, [True, False, False]]
        with pytest.raises(SandboxInputError, match="cobol"):
            remote.run(RunRequest(language="cobol", source=""))
    finally:
        server.close()
    assert not (tmp_path / "s.sock").exists()


def test_the_code_verifier_scores_error_when_the_sandbox_is_gone(tmp_path: Path) -> None:
    from verifiers.code import VERIFIER, CodeOptions, check

    score = check(
        *VERIFIER.example,
        CodeOptions(),
        sandbox=RemoteSandbox(str(tmp_path / "nobody-listens.sock")),
    )
    assert score.status == "error" and score.reward is None


def test_a_weak_worker_lost_mid_run_takes_its_daemons_along() -> None:
    sandbox = open_sandbox(SandboxConfig(backend="weak", workers=1))
    daemon = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(30)\n"
        "print(os.getuid(), flush=True)\n"
        "time.sleep(30)\n"
    )
    try:
        worker = sandbox.pool.workers()[0]
        assert worker is not None and worker.run_uid is not None  # type: ignore[attr-defined]
        uid = worker.run_uid  # type: ignore[attr-defined]
        with ThreadPoolExecutor(1) as threads:
            running = threads.submit(
                sandbox.run, RunRequest(source=daemon, limits=Limits(wall_s=20))
            )
            _until(lambda: len(_processes_of(uid)) >= 2)
            worker.close()  # what the pool does to a worker that hangs or garbles
            assert running.result().status == "sandbox_error"
        _until(lambda: not _processes_of(uid))
    finally:
        sandbox.close()


def _processes_of(uid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            if f"\nUid:\t{uid}\t" in status and "State:\tZ" not in status:
                found.append(int(entry.name))
    return found


NAMESPACE_ESCAPES = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def errno_of(result):
    return ctypes.get_errno() if result != 0 else 0
print(errno_of(libc.unshare(0x10000000)))  # CLONE_NEWUSER: the one an unprivileged uid could
print(errno_of(libc.unshare(0x00020000)))  # CLONE_NEWNS
print(errno_of(libc.unshare(0x20000000)))  # CLONE_NEWPID
print(errno_of(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)))
print(errno_of(libc.setns(os.open("/proc/self/ns/pid", os.O_RDONLY), 0x20000000)))
print(errno_of(libc.ptrace(16, 1, 0, 0)))  # PTRACE_ATTACH
"""


@pytest.mark.parametrize("backend", ["local", "weak"])
def test_runs_cannot_enter_or_make_namespaces_or_mount(
    local_sandbox: Sandbox, backend: str
) -> None:
    sandbox = local_sandbox if backend == "local" else open_sandbox(SandboxConfig(backend="weak"))
    try:
        record = sandbox.run(RunRequest(source=NAMESPACE_ESCAPES))
    finally:
        if sandbox is not local_sandbox:
            sandbox.close()
    assert record.status == "ok", record.stderr
    assert all(int(code) in (1, 13) for code in record.stdout.split()), record.stdout  # EPERM


def test_the_socket_survives_garbage_and_bad_requests(
    local_sandbox: Sandbox, tmp_path: Path
) -> None:
    import socket

    server = SandboxSocketServer(local_sandbox, str(tmp_path / "s.sock"))
    try:
        for payload in (b"\xff\xff\xff\xff" + b"x" * 10, b"\x00\x00\x00\x05{oops", b"junk"):
            with socket.socket(socket.AF_UNIX) as raw:
                raw.connect(server.path)
                raw.sendall(payload)
                raw.shutdown(socket.SHUT_WR)
                assert raw.recv(100) == b""  # the server hangs up; nothing is run
        with socket.socket(socket.AF_UNIX) as raw:
            raw.connect(server.path)
            frames.write(raw.fileno(), {"method": "format_disk", "params": {}})
            assert "unknown method" in frames.read(raw.fileno())["input_error"]
            frames.write(raw.fileno(), {"method": "run", "params": {"source": 1}})
            assert "input_error" in frames.read(raw.fileno())
        assert RemoteSandbox(server.path).run(RunRequest(source="print(1)")).stdout == "1\n"
    finally:
        server.close()
