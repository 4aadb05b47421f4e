"""The start-up probe: can a run really use the runtime?

A worker whose runs cannot import the standard library (Python installed under a directory the
run's uid cannot enter, say) would turn every correct program into a wrong answer with status
``ok``. Before it reports ready, each worker runs one program the way it runs any other (same
uid, limits, filesystem view) that imports common standard-library modules, the packages the
families need where the server has them (``numpy``, ``sympy``: checked by the first worker of a
pool only, as they take a while), starts each installed tool of the language table and, where a
compiled language is installed, executes a stand-in build from where the worker keeps its builds
(a ``noexec`` scratch would fail every compiled program). Any failure keeps the worker from
starting, with the reason.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
from collections.abc import Callable
from pathlib import Path

from sandbox import languages

STDLIB = (
    "abc", "argparse", "array", "ast", "asyncio", "base64", "bisect", "calendar", "cmath",
    "collections", "concurrent.futures", "contextlib", "copy", "csv", "dataclasses", "datetime",
    "decimal", "difflib", "enum", "fractions", "functools", "gzip", "hashlib", "heapq", "io",
    "itertools", "json", "logging", "math", "multiprocessing", "numbers", "operator", "pickle",
    "pprint", "queue", "random", "re", "statistics", "string", "struct", "subprocess",
    "textwrap", "threading", "typing", "unittest", "uuid", "xml.etree.ElementTree", "zlib",
)  # fmt: skip
PACKAGES = ("numpy", "sympy")
BUILD_NAME = "probe-build"


def modules(packages: bool) -> list[str]:
    """What to import: the standard library list, and the packages this interpreter has."""
    wanted = list(STDLIB)
    if packages:
        wanted += [name for name in PACKAGES if importlib.util.find_spec(name) is not None]
    return wanted


def tools() -> list[str]:
    """The language table's programs that are installed (each must start inside a run)."""
    return sorted({lang.tool for lang in languages.LANGUAGES if lang.tool and lang.available()})


def builds() -> bool:
    """Whether runs here execute what the sandbox builds (a compiled language is installed)."""
    return any(lang.compiled and lang.available() for lang in languages.LANGUAGES)


def place_build(cache: str) -> str:
    """A stand-in for a build, written where the worker keeps its builds: an executable script
    (the kernel refuses to start it from a ``noexec`` mount, as it would a binary); its path."""
    path = Path(cache, BUILD_NAME)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)  # the run's uid executes it
    return str(path)


def program(names: list[str], programs: list[str], build: str) -> Callable[[], None]:
    """A run's target: try each import and tool, and executing ``build`` (unless ''), print the
    failures as JSON, exit."""

    def run() -> None:
        import subprocess  # noqa: PLC0415 - in the run: it brings threading (see ``sandbox``)

        failures: dict[str, str] = {}
        for name in names:
            try:
                importlib.import_module(name)
            except BaseException as exc:  # every failure is a finding
                failures[name] = f"{type(exc).__name__}: {exc}"[:300]
        for tool in programs:
            try:
                subprocess.run(  # noqa: S603 - a tool of the language table
                    [tool, "--version"], capture_output=True, check=True, timeout=20
                )
            except (OSError, subprocess.SubprocessError) as exc:
                failures[tool] = f"{type(exc).__name__}: {exc}"[:300]
        if build:
            try:
                subprocess.run([build], capture_output=True, check=True, timeout=20)  # noqa: S603
            except (OSError, subprocess.SubprocessError) as exc:
                failures[BUILD_NAME] = f"{type(exc).__name__}: {exc}"[:300]
        os.write(1, json.dumps(failures).encode())
        os._exit(0)

    return run


def verdict(record: dict[str, object]) -> str | None:
    """None when the probe run found nothing wrong, else what is wrong."""
    if record.get("status") != "ok":
        tail = str(record.get("stderr") or "")[-500:]
        return f"the probe program did not finish ({record.get('status')}): {tail}"
    try:
        failures = json.loads(str(record.get("stdout") or ""))
    except json.JSONDecodeError:
        return f"the probe program printed garbage: {str(record.get('stdout'))[:200]!r}"
    if not failures:
        return None
    if BUILD_NAME in failures:
        return (
            f"runs cannot execute what the sandbox builds ({failures[BUILD_NAME]}): the scratch "
            "directory's filesystem is probably mounted noexec (Docker mounts a tmpfs noexec "
            "unless its options say exec); give the sandbox a scratch directory that allows exec"
        )
    listed = "; ".join(f"{name}: {error}" for name, error in sorted(failures.items())[:8])
    return (
        f"runs cannot use the runtime ({len(failures)} failed: {listed}). The interpreter or its "
        "packages are probably not readable by the sandbox's uid (installed under a 0700 home "
        "directory?): install Python where other users can read it, or use full isolation"
    )
