"""A scratch directory the kernel will not execute from (Docker mounts a tmpfs ``noexec`` unless
told otherwise) is the sandbox's failure, never the program's: a worker whose builds cannot run
refuses to start with the reason, and a build that cannot be executed later is
``sandbox_error``, so a correct C++ program never scores 0.

A real ``noexec`` tmpfs is mounted for each test (as root; skipped with the reason elsewhere),
and the weak backend keeps its scratch and builds on it, as it does under ``/tmp`` in a container.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.backends import SandboxConfig, open_sandbox
from sandbox.model import Limits, RunRequest
from verifiers.code import CodeOptions, check

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

CPP = """#include <cstdio>
int main() { int a, b; std::scanf("%d %d", &a, &b); std::printf("%d\\n", a + b); }
"""
REFERENCE = {
    "language": "cpp",
    "tests": {
        "kind": "stdin",
        "items": [{"stdin": "2 3", "stdout": "5"}, {"stdin": "10 -4", "stdout": "6"}],
    },
}


def _mount(path: Path, options: str) -> None:
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"{options},size=64m,mode=0755", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (root with CAP_SYS_ADMIN needed): {done.stderr}")


@pytest.fixture
def tmpfs() -> Iterator[Path]:
    """A tmpfs of this test's own (mounted exec; ``_remount`` changes that), where the runs'
    uids can reach it (pytest's own directories are 0700)."""
    mount = Path(tempfile.mkdtemp(prefix="envserver-scratch-test-"))
    mount.chmod(0o711)
    _mount(mount, "exec")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)
    mount.rmdir()


def _remount(path: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(path)], check=True)


def test_a_worker_whose_builds_cannot_run_refuses_to_start_with_the_reason(tmpfs: Path) -> None:
    _remount(tmpfs, "noexec")
    with pytest.raises(OSError, match=r"cannot execute what the sandbox builds.*noexec"):
        open_sandbox(SandboxConfig(backend="weak", workers=1, workdir=str(tmpfs / "w")))


def test_a_build_that_cannot_be_executed_is_a_sandbox_error_never_a_zero(tmpfs: Path) -> None:
    sandbox = open_sandbox(SandboxConfig(backend="weak", workers=1, workdir=str(tmpfs / "w")))
    try:
        correct = f"```cpp\n{CPP}```"
        assert check(correct, REFERENCE, CodeOptions(), sandbox=sandbox).reward == 1.0
        _remount(tmpfs, "noexec")  # the scratch changes under a running worker
        request = RunRequest(language="cpp", source=CPP, stdin="1 1\n", limits=Limits(wall_s=20))
        record = sandbox.run(request)
        assert record.status == "sandbox_error", record
        assert "Permission denied" in record.detail, record.detail
        # A fresh source (no cached build), judged by the code verifier: error, not 0.
        fresh = f"```cpp\n// another build\n{CPP}```"
        score = check(fresh, REFERENCE, CodeOptions(), sandbox=sandbox)
        assert (score.status, score.reward) == ("error", None), score
        # Python runs in the warm worker, with no exec: it is unaffected.
        python = sandbox.run(RunRequest(source="print(6 * 7)", limits=Limits(wall_s=20)))
        assert (python.status, python.stdout) == ("ok", "42\n"), python
    finally:
        sandbox.close()
