"""A family whose optional dependency is not installed: the registry must disable it (with the
declared install line as the fix), not crash, and load nothing of it."""

from pathlib import Path

from environments.family import Contents, Family


def _contents() -> Contents:
    raise AssertionError("a family whose requirements are missing is never loaded")


FAMILY = Family(
    name="test.needs_missing",
    load=_contents,
    requires=("envserver_tests_missing_dependency",),
    install="envserver-tests-missing-dependency",
    suite=Path(__file__).with_suffix(".redteam.toml"),
)
