"""The runtime a run sees: the start-up probe, a runtime under a 0700 home, the weak warning.

The audit's setup is reproduced here: a virtual environment inside a directory only its owner
may enter (a 0700 home), whose interpreter the workers run. Runs, under another uid, must still
import the standard library (weak isolation reaches it through descriptors the worker opened,
full isolation binds it at neutral paths); where a file stays unreadable to them, the workers
refuse to start with the reason instead of scoring correct programs 0.
"""

from __future__ import annotations

import importlib.util
import logging
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyseccomp
import pytest

import sandbox
from sandbox import probe
from sandbox.backends import SandboxConfig, open_sandbox
from sandbox.model import Limits, RunRequest
from sandbox.pool import LocalFactory, SandboxPool
from sandbox.runner import Sandbox
from sandbox.runner import TestRun as ProgramRun
from sandbox.testcases import JudgeOptions, TestSuite

pytestmark = pytest.mark.timeout(120)

CHECKOUT = Path(sandbox.__file__).resolve().parents[1]
USES_THE_STDLIB = """
import asyncio, csv, heapq, io, logging, pickle, queue
rows = list(csv.reader(io.StringIO(input())))
q = queue.Queue()
for value in rows[0]:
    q.put(int(value))
total = 0
while not q.empty():
    total += q.get()
logging.getLogger("x").debug("quiet")
print(asyncio.run(asyncio.sleep(0, result=pickle.loads(pickle.dumps(total)))))
"""
SUITE = TestSuite.model_validate(
    {
        "kind": "stdin",
        "items": [{"stdin": "1,2,3", "stdout": "6"}, {"stdin": "40,2", "stdout": "42"}],
    }
)


@pytest.fixture(scope="module")
def private_venv() -> Iterator[Path]:
    """A venv inside a 0700 directory, able to run the workers (the sandbox package through a
    .pth line, pyseccomp copied in); its python."""
    home = Path(tempfile.mkdtemp(prefix="sbhome-"))
    venv = home / "venv"
    subprocess.run(
        [sys._base_executable, "-m", "venv", "--without-pip", str(venv)],
        check=True,
        capture_output=True,
    )
    (site,) = venv.glob("lib/python3*/site-packages")
    (site / "checkout.pth").write_text(f"{CHECKOUT}\n")
    shutil.copy(pyseccomp.__file__, site)
    home.chmod(0o700)
    try:
        yield venv / "bin" / "python"
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def workdir() -> Iterator[Path]:
    """Weak isolation's scratch space: a directory the runs' uids can traverse."""
    path = Path(tempfile.mkdtemp(prefix="sbwork-"))
    path.chmod(0o711)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _sandbox(level: str, python: Path, workdir: Path) -> Sandbox:
    return Sandbox(SandboxPool(LocalFactory(level, str(workdir), python=str(python)), 1))


def _uses_the_stdlib(box: Sandbox) -> ProgramRun:
    return box.test(
        "python",
        USES_THE_STDLIB,
        SUITE,
        per_test_s=10,
        limits=Limits(wall_s=30),
        options=JudgeOptions(),
    )


def _hidden_from_others(path: Path) -> bool:
    """Whether some directory above ``path`` keeps other users out (a 0700 home)."""
    return any(not parent.stat().st_mode & 0o001 for parent in path.resolve().parents)


@pytest.mark.parametrize("backend", ["weak", "local"])
def test_a_correct_program_using_the_stdlib_passes_with_this_interpreter(backend: str) -> None:
    """The server's own interpreter (on the CI machines: pyenv's, under a 0700 /root)."""
    box = open_sandbox(SandboxConfig(backend=backend, workers=1))  # type: ignore[arg-type]
    try:
        run = _uses_the_stdlib(box)
        assert run.passed == 2, (_hidden_from_others(Path(sys.base_prefix)), run)
    finally:
        box.close()


@pytest.mark.parametrize("level", ["weak", "full"])
def test_runs_import_the_stdlib_when_the_runtime_is_under_a_0700_home(
    level: str, private_venv: Path, workdir: Path
) -> None:
    box = _sandbox(level, private_venv, workdir)
    try:
        assert box.isolation == level
        run = _uses_the_stdlib(box)
        assert run.passed == 2, run
        record = box.run(RunRequest(source="import sys, json; print(json.dumps(sys.path))"))
        assert record.status == "ok", record
        if level == "full":  # weak isolation cannot move the runtime; it only has to work
            assert str(private_venv.parents[1]) not in record.stdout, record.stdout
    finally:
        box.close()


@pytest.mark.parametrize("level", ["weak", "full"])
def test_workers_refuse_to_start_when_runs_cannot_import_a_package(
    level: str, private_venv: Path, workdir: Path
) -> None:
    """A package file only root can read (installed with umask 077): the probe, run as a run,
    fails to import it, and the worker does not start, saying why."""
    (site,) = private_venv.parents[1].glob("lib/python3*/site-packages")
    package = site / "sympy"
    package.mkdir()
    (package / "__init__.py").write_text("VALUE = 1\n")
    (package / "__init__.py").chmod(0o600)
    try:
        with pytest.raises(OSError, match=r"runs cannot use the runtime .*sympy: PermissionError"):
            _sandbox(level, private_venv, workdir)
    finally:
        shutil.rmtree(package)


def test_the_probe_lists_what_it_checks() -> None:
    names = probe.modules(packages=True)
    assert {"queue", "csv", "pickle", "logging", "asyncio"} <= set(names)
    assert ("numpy" in names) == _has("numpy")
    assert "numpy" not in probe.modules(packages=False)
    assert "bash" in probe.tools()


def _has(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def test_the_probe_verdict_names_the_failures() -> None:
    assert probe.verdict({"status": "ok", "stdout": "{}"}) is None
    failed = probe.verdict({"status": "ok", "stdout": '{"csv": "ModuleNotFoundError: csv"}'})
    assert failed is not None and "csv: ModuleNotFoundError" in failed
    crashed = probe.verdict({"status": "timeout", "stderr": "stuck"})
    assert crashed is not None and "timeout" in crashed


def test_the_weak_backend_is_logged_as_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="envserver.sandbox"):
        weak = open_sandbox(SandboxConfig(backend="weak", workers=1))
        weak.close()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("WEAK isolation" in r.getMessage() for r in warnings), caplog.records


def test_full_isolation_runs_the_worker_from_neutral_paths() -> None:
    box = open_sandbox(SandboxConfig(backend="local", workers=1))
    try:
        record = box.run(RunRequest(source="import sys, os; print(sys.executable, os.getcwd())"))
        assert record.status == "ok", record
        executable = record.stdout.split()[0]
        assert executable.startswith(("/opt/envserver-runtime/", "/usr/")), record.stdout
        exited = box.run(RunRequest(source="print('bye'); exit(3)"))  # site's builtins exist
        assert (exited.status, exited.exit_code, exited.stdout) == ("runtime_error", 3, "bye\n")
        spawned = box.run(
            RunRequest(
                source="import subprocess, sys\n"
                "print(subprocess.run([sys.executable, '-c', 'print(7)'], capture_output=True,"
                " text=True).stdout.strip())"
            )
        )
        assert (spawned.status, spawned.stdout) == ("ok", "7\n"), spawned
    finally:
        box.close()
