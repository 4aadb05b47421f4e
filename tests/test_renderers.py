"""Renderers are found in the families' packages and checked there; their templates load in the
playground's template environment."""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

from envserver.playground import page_templates
from envserver.registry import Registry, _collect, discover
from tests.plugins import drawn


def test_renderers_are_discovered_with_their_environments() -> None:
    registry = discover(["tests.plugins.drawn"])
    assert {"webshop", "test.counter"} <= set(registry.renderers)
    assert set(registry.renderers) <= set(registry.envs)
    templates = page_templates(registry)
    for renderer in registry.renderers.values():
        assert (renderer.templates / renderer.template).is_file()
        templates.get_template(renderer.template)  # parses, and its imports resolve
    templates.get_template("play/episode.html")


def module(**exports: object) -> types.ModuleType:
    fake = types.ModuleType("fake_family")
    for name, value in exports.items():
        setattr(fake, name, value)
    return fake


def test_a_renderer_for_no_environment_or_without_its_parts_is_a_bug() -> None:
    with pytest.raises(ValueError, match="no such environment"):
        _collect(module(RENDERERS={"nowhere": drawn.CounterRenderer()}), "fake", Registry())
    with pytest.raises(ValueError, match="lacks templates"):
        _collect(
            module(ENVIRONMENTS=drawn.ENVIRONMENTS, RENDERERS={"test.counter": object()}),
            "fake",
            Registry(),
        )
    twice = Registry()
    _collect(module(ENVIRONMENTS=drawn.ENVIRONMENTS, RENDERERS=drawn.RENDERERS), "fake", twice)
    with pytest.raises(ValueError, match="a second one"):
        _collect(module(RENDERERS=drawn.RENDERERS), "fake", twice)


CORE = Path(__file__).resolve().parents[1] / "envserver"
# Families being built elsewhere, named here so the core cannot start naming them either.
UPCOMING = ("alfworld", "sbol", "evo")
# "code" is also an English word, SandboxFusion's and OpenEnv's field and an HTML element: these
# name no family.
NOT_THE_FAMILY = re.compile(
    r"exit code|untrusted code|return code|status code|\bcode: str\b|self\.code\b|\bcode = |=code\b"
    r"|</?code\b|^code \{"  # HTML's <code> element and its style
    r'|"code": '  # the key of OpenEnv's error messages
    r"|^import math$|(?<![\w.])math\.isfinite\("  # Python's math module
)


def test_the_core_names_no_family() -> None:
    families = {path.parent.name for path in (CORE.parent / "environments").glob("*/__init__.py")}
    assert {"math", "webshop"} <= families
    words = re.compile(rf"\b({'|'.join(sorted(families | set(UPCOMING)))})\b", re.IGNORECASE)
    found = [
        f"{path.relative_to(CORE.parent)}:{number}: {line.strip()}"
        for path in sorted(CORE.rglob("*"))
        if path.suffix in (".py", ".html")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if words.search(NOT_THE_FAMILY.sub("", line))
    ]
    assert found == []
