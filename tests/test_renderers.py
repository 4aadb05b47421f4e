"""Renderers come with their families' declarations and are checked there; their templates load
in the playground's template environment."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from environments.family import Contents, Family, FamilyError
from environments.renderer import ListedActions, Renderer
from envserver.playground import page_templates
from envserver.registry import discover
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


def plugin(monkeypatch: pytest.MonkeyPatch, renderers: dict[str, object]) -> str:
    """A plugin module of the counter family with these renderers; its name."""
    fake = types.ModuleType("fake_family")
    contents = Contents(environments=(drawn.CounterEnv(),), renderers=renderers)  # type: ignore[arg-type]
    fake.FAMILY = Family(name="test.counter", load=lambda: contents)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    return fake.__name__


@pytest.mark.parametrize(
    ("renderers", "error"),
    [
        ({"nowhere": drawn.CounterRenderer()}, "renderer for 'nowhere': the family has no such"),
        ({"test.counter": object()}, r"renderers\['test.counter'\] is an object, not a Renderer"),
        # The counter lists no actions in its spec: a renderer of listed actions disagrees.
        (
            {"test.counter": ListedActions("valid_actions")},
            r"renderer for 'test.counter' lists .* spec names info\[None\]",
        ),
    ],
)
def test_a_renderer_for_no_environment_or_without_its_parts_is_a_bug(
    monkeypatch: pytest.MonkeyPatch, renderers: dict[str, object], error: str
) -> None:
    with pytest.raises(FamilyError, match=f"^family 'test.counter': {error}"):
        discover([plugin(monkeypatch, renderers)])


def test_a_listed_actions_renderer_is_the_one_its_spec_names() -> None:
    # Declared twice (Tamarin's spec and its renderer): the registry checks that they agree.
    registry = discover()
    for env_id, renderer in registry.renderers.items():
        assert isinstance(renderer, Renderer)
        if isinstance(renderer, ListedActions):
            assert renderer.key == registry.envs[env_id].spec.actions_key


CORE = Path(__file__).resolve().parents[1] / "envserver"
# Families being built elsewhere, named here so the core cannot start naming them either.
UPCOMING = ("alfworld", "sbol", "evo")
# "code" is also an English word, SandboxFusion's and OpenEnv's field and an HTML element: these
# name no family.
NOT_THE_FAMILY = re.compile(
    r"exit code|untrusted code|return code|status code|\bcode: str\b|self\.code\b|\bcode = |=code\b"
    r"|</?code\b|^code \{"  # HTML's <code> element and its style
    r'|"code": '  # the key of OpenEnv's error messages
    # Python's math module
    r"|^import math$|^from math import [\w, ]+$|(?<![\w.])math\.(isfinite\(|inf\b)"
)


def test_the_core_names_no_family() -> None:
    families = {path.parent.name for path in (CORE.parent / "environments").glob("*/__init__.py")}
    assert {"math", "webshop"} <= families
    # A family's name, or its environment's ("EvoEnv").
    names = "|".join(sorted(families | set(UPCOMING)))
    words = re.compile(rf"\b({names})(env)?\b", re.IGNORECASE)
    found = [
        f"{path.relative_to(CORE.parent)}:{number}: {line.strip()}"
        for path in sorted(CORE.rglob("*"))
        if path.suffix in (".py", ".html")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if words.search(NOT_THE_FAMILY.sub("", line))
    ]
    assert found == []
