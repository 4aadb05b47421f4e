"""sandbox/tools.py: trusted external programs start one way, with limits, in their own session,
and die with the process that started them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from sandbox import tools
from sandbox.tools import ToolLimits, ToolTimeout
from tests.process_support import alive


def test_run_returns_output_and_exit_code() -> None:
    result = tools.run(
        [sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); exit(3)"],
        timeout_s=30,
    )
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert result.seconds > 0


def test_a_tool_that_overruns_is_a_timeout_and_its_whole_session_dies(tmp_path: Path) -> None:
    # The tool starts a grandchild (as Tamarin starts Maude) and both sleep.
    pids = tmp_path / "pids"
    code = textwrap.dedent(f"""
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pids)!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
        time.sleep(60)
    """)
    started = time.monotonic()
    with pytest.raises(ToolTimeout) as caught:
        tools.run([sys.executable, "-c", code], timeout_s=1.5)
    assert isinstance(caught.value, TimeoutError)
    assert time.monotonic() - started < 10
    for pid in map(int, pids.read_text().split()):
        deadline = time.monotonic() + 5
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), f"process {pid} of the stopped tool survived"


def test_the_memory_limit_applies_to_the_tool() -> None:
    grab = "b = bytearray(400 * 1024 * 1024); print('got it')"
    capped = tools.run([sys.executable, "-c", grab], timeout_s=30, limits=ToolLimits(256))
    assert capped.exit_code != 0 and "MemoryError" in capped.stderr
    free = tools.run([sys.executable, "-c", grab], timeout_s=30, limits=ToolLimits(2048))
    assert free.exit_code == 0 and free.stdout == "got it\n"


def test_the_cpu_limit_applies_to_the_tool() -> None:
    spin = tools.run(
        [sys.executable, "-c", "while True: pass"], timeout_s=30, limits=ToolLimits(None, 1)
    )
    assert spin.exit_code in (-signal.SIGXCPU, -signal.SIGKILL)


def test_a_tool_has_no_stdin_and_its_own_session() -> None:
    code = "import os, sys; print(os.getsid(0) == os.getpid(), repr(sys.stdin.read()))"
    result = tools.run([sys.executable, "-c", code], timeout_s=30)
    assert result.stdout == "True ''\n"


def test_a_long_lived_tool_started_from_a_short_thread_outlives_the_thread() -> None:
    # PR_SET_PDEATHSIG follows the forking thread: tools fork from one long-lived thread.
    started: list[subprocess.Popen[bytes]] = []
    thread = threading.Thread(
        target=lambda: started.append(
            tools.start(
                [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"]
            )
        )
    )
    thread.start()
    thread.join()
    process = started[0]
    tail = tools.Tail((process.stdout, process.stderr))
    try:
        time.sleep(1.0)
        assert process.poll() is None, "the tool died with the thread that asked for it"
        deadline = time.monotonic() + 10
        while "up" not in tail.text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tail.text() == "up"
    finally:
        tools.stop(process)
    assert process.returncode == -signal.SIGKILL
    tools.stop(process)  # idempotent


def test_tools_die_with_the_process_that_started_them(tmp_path: Path) -> None:
    # A worker that starts a tool and is then killed leaves no tool behind.
    pid_file = tmp_path / "tool.pid"
    worker = textwrap.dedent(f"""
        import sys, time
        from sandbox import tools
        process = tools.start([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(process.pid))
        time.sleep(60)
    """)
    parent = subprocess.Popen([sys.executable, "-c", worker], cwd=Path(__file__).parents[1])
    try:
        deadline = time.monotonic() + 20
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the worker did not start its tool"
            time.sleep(0.05)
        tool = int(pid_file.read_text())
        assert alive(tool)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 5
        while alive(tool) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(tool), "the tool outlived its worker"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_a_forked_child_starts_tools_on_its_own_spawner() -> None:
    """A child forked after its parent ran a tool runs tools too: the parent's spawning thread
    does not exist in the child, which once queued on it for ever (issue 24: the pool's workers,
    forked from a fork server that had run a prover at import, never became ready)."""
    assert tools.run(["true"], timeout_s=30).exit_code == 0  # the parent's spawner runs
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        signal.alarm(30)  # a hang ends the child instead of the test run
        result = tools.run(["echo", "child"], timeout_s=20)
        os.write(write, result.stdout.encode())
        os._exit(result.exit_code)
    os.close(write)
    deadline = time.monotonic() + 60
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if done[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as said:
        assert said.read() == b"child\n"
    assert done[0] == pid and os.waitstatus_to_exitcode(done[1]) == 0, done
