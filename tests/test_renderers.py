"""Renderers are found in the families' packages and checked there; their templates load in the
playground's template environment."""

from __future__ import annotations

import types

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
        _collect(module(RENDERERS={"nowhere": drawn.CounterRenderer()}), Registry())
    with pytest.raises(ValueError, match="lacks templates"):
        _collect(
            module(ENVIRONMENTS=drawn.ENVIRONMENTS, RENDERERS={"test.counter": object()}),
            Registry(),
        )
    twice = Registry()
    _collect(module(ENVIRONMENTS=drawn.ENVIRONMENTS, RENDERERS=drawn.RENDERERS), twice)
    with pytest.raises(ValueError, match="a second one"):
        _collect(module(RENDERERS=drawn.RENDERERS), twice)
