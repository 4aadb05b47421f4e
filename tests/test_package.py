"""The habits of a maintained package: a licence file for the declared licence, typed packages,
one source for the version, and benchmarks that run without the tests."""

from __future__ import annotations

import ast
import tomllib

import envserver
from tests.server import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGES = ("envserver", "verifiers", "environments", "sandbox", "clients")


def test_the_licence_file_is_the_declared_licence() -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def test_every_package_is_marked_typed_and_ships_the_marker() -> None:
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["*"]
    assert [p for p in PACKAGES if not (ROOT / p / "py.typed").is_file()] == []


def test_the_version_has_one_source() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "envserver.__version__"
    }
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## {envserver.__version__}" in changelog


def test_benchmarks_import_nothing_from_the_tests() -> None:
    found = []
    for path in sorted((ROOT / "benchmarks").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            found += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "tests"]
    assert found == []


def test_pre_commit_runs_what_ci_runs() -> None:
    config = (ROOT / ".pre-commit-config.yaml").read_text()
    makefile = (ROOT / "Makefile").read_text()
    for command in ("ruff check", "ruff format --check", "mypy"):
        assert f"$(BIN)/{command}" in makefile and f".venv/bin/{command}" in config, command
