"""Discovers the families: environments from ``environments.*``, verifiers from ``verifiers.*``,
the playground renderers families export (``RENDERERS``, see ``environments.renderer``), and
their extensions of the service (``EXTENSION``, see ``environments.extension``), whose resources
it opens and closes in each serving process.

A family whose import fails (typically a missing optional extra) is recorded as disabled with
the reason and the fix, and the rest of the service starts normally; so is every environment or
verifier a family names in its ``UNAVAILABLE`` (data, binary or setting this server lacks).
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

from fastapi import APIRouter

import environments
import verifiers
from environments.base import DynamicEnvironments, Environment
from environments.extension import Extension, Resources
from environments.renderer import Renderer
from envserver.config import Settings
from verifiers.base import Unavailable, Verifier

log = logging.getLogger("envserver")
_OWN_PACKAGES = ("envserver", "environments", "verifiers", "sandbox", "clients")
_ENV_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*(?:/[A-Za-z0-9][A-Za-z0-9_.\-]*)*")


class UnknownEnvironment(LookupError):
    """No environment has this id."""


class UnknownVerifier(LookupError):
    """No verifier has this name."""


class Disabled(LookupError):
    """The environment or verifier exists but this server cannot serve it; ``why`` says why and
    how to enable it."""

    def __init__(self, what: str, why: Unavailable) -> None:
        super().__init__(what, why)
        self.what = what
        self.why = why

    def __str__(self) -> str:
        return f"{self.what} is not available on this server: {self.why}"


@dataclass
class Registry:
    """Environments by id, verifiers by name, renderers by environment id, what is disabled
    (families that could not load, by family name; environments and verifiers that cannot serve
    here, by id or name), and the families' extensions by family name. While it is ``open``
    (in a serving process) it holds their resources and the dynamic sources made from them."""

    envs: dict[str, Environment] = field(default_factory=dict)
    verifiers: dict[str, Verifier] = field(default_factory=dict)
    renderers: dict[str, Renderer] = field(default_factory=dict)
    disabled: dict[str, Unavailable] = field(default_factory=dict)
    modules: list[str] = field(default_factory=list)
    extensions: dict[str, Extension[Any, Any]] = field(default_factory=dict)
    resources: dict[str, Resources] = field(default_factory=dict)
    dynamic: list[DynamicEnvironments] = field(default_factory=list)

    def open(self, settings: Settings) -> None:
        """Open every extension's resources in this process, from its settings model built with
        the server's ``data_dir``, and make their dynamic sources. Called where a process starts
        serving (the app's lifespan, a pool worker's start): after any fork, never at import."""
        if self.resources:
            raise RuntimeError("the families' resources are open already in this process")
        try:
            for family, extension in self.extensions.items():
                opened = extension.open(extension.settings_model(data_dir=settings.data_dir))
                self.resources[family] = opened
                source = extension.dynamic(opened)
                if source is not None:
                    if not isinstance(source, DynamicEnvironments):
                        raise ValueError(f"{family}'s dynamic source lacks find or listing")
                    self.dynamic.append(source)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close what ``open`` opened (each resource once, in reverse order)."""
        self.dynamic.clear()
        while self.resources:
            self.resources.popitem()[1].close()

    @contextmanager
    def opened(self, settings: Settings) -> Iterator[Registry]:
        """This registry, open for the block (a command or test that serves in-process)."""
        self.open(settings)
        try:
            yield self
        finally:
            self.close()

    def routers(self) -> list[APIRouter]:
        """The extensions' routers, mounted next to the core's."""
        return [router for extension in self.extensions.values() for router in extension.routers()]

    def env(self, env_id: str) -> Environment:
        """The environment ``env_id``; raises ``Disabled`` when this server cannot serve it,
        ``UnknownEnvironment`` when no family defines it."""
        try:
            return self.envs[env_id]
        except KeyError:
            for source in self.dynamic:  # raises EnvironmentGone for a retired one
                found = source.find(env_id)
                if found is not None:
                    return found
            why = self.disabled_reason(env_id)
            if why is not None:
                raise Disabled(f"environment {env_id!r}", why) from None
            raise UnknownEnvironment(
                f"unknown environment {env_id!r}; GET /v1/envs lists them"
            ) from None

    def serves(self, env_id: str) -> bool:
        """Whether ``env_id`` is served now, statically or by a family's dynamic source."""
        try:
            self.env(env_id)
        except LookupError:
            return False
        return True

    def dynamic_envs(self) -> list[Environment]:
        """The environments the families' dynamic sources serve now."""
        return [env for source in self.dynamic for env in source.listing()]

    def disabled_reason(self, env_id: str) -> Unavailable | None:
        """Why ``env_id`` (or its whole family) is not served here, and the fix; None when it
        is served or unknown."""
        for name in (env_id, env_id.split("/", maxsplit=1)[0]):
            if name in self.disabled:
                return self.disabled[name]
        return None

    def verifier(self, name: str) -> Verifier:
        """The verifier ``name``; raises ``Disabled`` when this server cannot serve it,
        ``UnknownVerifier`` when no family defines it."""
        try:
            return self.verifiers[name]
        except KeyError:
            for key in (name, name.split(".", maxsplit=1)[0]):
                if key in self.disabled:
                    raise Disabled(f"verifier {name!r}", self.disabled[key]) from None
            raise UnknownVerifier(f"unknown verifier {name!r}; GET /v1/envs lists them") from None


def _submodules(package: ModuleType) -> Iterator[tuple[str, bool]]:
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            yield info.name, info.ispkg


def _import(name: str, family: str, registry: Registry) -> ModuleType | None:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing in _OWN_PACKAGES or not missing:
            raise
        why = Unavailable(
            f"missing optional dependency {missing!r}", f"pip install 'envserver[{family}]'"
        )
        registry.disabled[family] = why
        log.warning("family %s disabled: %s", family, why)
        return None
    registry.modules.append(name)
    return module


def _collect(module: ModuleType | None, family: str, registry: Registry) -> None:
    if module is None:
        return
    unavailable: dict[str, Unavailable] = getattr(module, "UNAVAILABLE", {})
    registry.disabled.update(unavailable)
    checks = [getattr(module, "VERIFIER", None), *getattr(module, "VERIFIERS", ())]
    for verifier in checks:
        if isinstance(verifier, Verifier):
            if verifier.name in registry.verifiers:
                raise ValueError(f"two verifiers are named {verifier.name!r}")
            if verifier.name not in unavailable:
                registry.verifiers[verifier.name] = verifier
    for env in getattr(module, "ENVIRONMENTS", ()):
        env_id = env.spec.id
        if not _ENV_ID.fullmatch(env_id) or env_id in registry.envs:
            raise ValueError(f"environment id {env_id!r} is malformed or not unique")
        if env_id not in unavailable:
            registry.envs[env_id] = env
    _collect_extension(module, family, registry)
    for env_id, renderer in getattr(module, "RENDERERS", {}).items():
        if env_id in unavailable:
            continue
        if env_id not in registry.envs or env_id in registry.renderers:
            raise ValueError(f"renderer for {env_id!r}: no such environment, or a second one")
        if not isinstance(renderer, Renderer):
            raise ValueError(f"renderer for {env_id!r} lacks templates, template or context")
        registry.renderers[env_id] = renderer


def _collect_extension(module: ModuleType, family: str, registry: Registry) -> None:
    extension = getattr(module, "EXTENSION", None)
    if extension is not None:
        if not isinstance(extension, Extension) or family in registry.extensions:
            raise ValueError(f"{module.__name__}.EXTENSION is not an Extension, or a second one")
        registry.extensions[family] = extension


def discover(plugins: Sequence[str] = ()) -> Registry:
    """Import every family once (and each plugin module) and index what they export.

    Raises ValueError on duplicate or malformed ids: that is a bug, not a missing extra.
    """
    registry = Registry()
    for name, _ in _submodules(verifiers):
        _collect(_import(f"verifiers.{name}", name, registry), name, registry)
    for name, is_package in _submodules(environments):
        if is_package:
            _collect(_import(f"environments.{name}", name, registry), name, registry)
    for plugin in plugins:
        _collect(_import(plugin, plugin, registry), plugin, registry)
    return registry


@cache
def get_registry() -> Registry:
    """The process-wide registry, discovered on first use (in the server and in each worker,
    which inherit the same ``ENVSERVER_PLUGINS``)."""
    return discover(Settings().plugins)
