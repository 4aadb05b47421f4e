"""Discovers the families: environments from ``environments.*``, verifiers from ``verifiers.*``,
and the playground renderers families export (``RENDERERS``, see ``environments.renderer``).

A family whose import fails (typically a missing optional extra) is recorded as disabled with
the reason, and the rest of the service starts normally.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType

import environments
import verifiers
from environments.base import Environment
from environments.renderer import Renderer
from envserver.config import Settings
from verifiers.base import Verifier

log = logging.getLogger("envserver")
_OWN_PACKAGES = ("envserver", "environments", "verifiers", "sandbox", "clients")
_ENV_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*(?:/[A-Za-z0-9][A-Za-z0-9_.\-]*)*")


class UnknownEnvironment(LookupError):
    """No environment has this id."""


class UnknownVerifier(LookupError):
    """No verifier has this name."""


@dataclass
class Registry:
    """Environments by id, verifiers by name, renderers by environment id, and the families that
    could not load."""

    envs: dict[str, Environment] = field(default_factory=dict)
    verifiers: dict[str, Verifier] = field(default_factory=dict)
    renderers: dict[str, Renderer] = field(default_factory=dict)
    disabled: dict[str, str] = field(default_factory=dict)
    modules: list[str] = field(default_factory=list)

    def env(self, env_id: str) -> Environment:
        """The environment ``env_id``; raises ``UnknownEnvironment`` with a helpful message."""
        try:
            return self.envs[env_id]
        except KeyError:
            reason = self.disabled_reason(env_id)
            if reason is not None:
                raise UnknownEnvironment(f"environment {env_id!r} is disabled: {reason}") from None
            raise UnknownEnvironment(
                f"unknown environment {env_id!r}; GET /v1/envs lists them"
            ) from None

    def disabled_reason(self, env_id: str) -> str | None:
        """Why the family of ``env_id`` is not served (a missing extra, say); None when it is
        served or unknown."""
        return self.disabled.get(env_id.split("/", maxsplit=1)[0])

    def verifier(self, name: str) -> Verifier:
        """The verifier ``name``; raises ``UnknownVerifier`` with a helpful message."""
        try:
            return self.verifiers[name]
        except KeyError:
            if name in self.disabled:
                raise UnknownVerifier(
                    f"verifier {name!r} is disabled: {self.disabled[name]}"
                ) from None
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
        reason = f"missing optional dependency {missing!r}: pip install 'envserver[{family}]'"
        registry.disabled[family] = reason
        log.warning("family %s disabled: %s", family, reason)
        return None
    registry.modules.append(name)
    return module


def _collect(module: ModuleType | None, registry: Registry) -> None:
    if module is None:
        return
    checks = [getattr(module, "VERIFIER", None), *getattr(module, "VERIFIERS", ())]
    for verifier in checks:
        if isinstance(verifier, Verifier):
            if verifier.name in registry.verifiers:
                raise ValueError(f"two verifiers are named {verifier.name!r}")
            registry.verifiers[verifier.name] = verifier
    for env in getattr(module, "ENVIRONMENTS", ()):
        env_id = env.spec.id
        if not _ENV_ID.fullmatch(env_id) or env_id in registry.envs:
            raise ValueError(f"environment id {env_id!r} is malformed or not unique")
        registry.envs[env_id] = env
    renderers = getattr(module, "RENDERERS", {})
    for env_id, renderer in renderers.items():
        if env_id not in registry.envs or env_id in registry.renderers:
            raise ValueError(f"renderer for {env_id!r}: no such environment, or a second one")
        if not isinstance(renderer, Renderer):
            raise ValueError(f"renderer for {env_id!r} lacks templates, template or context")
        registry.renderers[env_id] = renderer


def discover(plugins: Sequence[str] = ()) -> Registry:
    """Import every family once (and each plugin module) and index what they export.

    Raises ValueError on duplicate or malformed ids: that is a bug, not a missing extra.
    """
    registry = Registry()
    for name, _ in _submodules(verifiers):
        _collect(_import(f"verifiers.{name}", name, registry), registry)
    for name, is_package in _submodules(environments):
        if is_package:
            _collect(_import(f"environments.{name}", name, registry), registry)
    for plugin in plugins:
        _collect(_import(plugin, plugin, registry), registry)
    return registry


@cache
def get_registry() -> Registry:
    """The process-wide registry, discovered on first use (in the server and in each worker,
    which inherit the same ``ENVSERVER_PLUGINS``)."""
    return discover(Settings().plugins)
