"""The families this process serves, loaded from their declarations (``environments.family``):
environments by id, verifiers by name, playground renderers, the families' extensions of the
service (whose resources it opens and closes in each serving process), their search spaces, and
what is disabled here and why.

``discover(plugins)`` reads every declaration (``envserver.families``), then loads each family
whose optional dependencies are installed and checks what it brings: a wrong type, an id outside
the family's namespace or taken twice, or two declarations of one thing that disagree is a
``FamilyError`` naming the family. A family whose dependencies are missing is disabled with the
reason and its install line, and the rest of the service starts normally; so is whatever a family
withholds (``Contents.unavailable``: data, a binary or a setting this server lacks).

The caller builds the registry from its own settings and hands it on (the app to its service,
each pool worker from the settings it is given after the fork); nothing here reads the process's
environment.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter

from environments.base import DynamicEnvironments, Environment, SingleTurnScoring
from environments.extension import Extension, Resources
from environments.family import (
    Contents,
    EnvironmentId,
    Family,
    FamilyError,
    FamilyName,
    OptionValue,
    VerifierName,
    Withheld,
    is_a,
    owner,
)
from environments.renderer import ListedActions, Renderer
from environments.search import SearchSpace
from envserver.config import Settings, family_settings
from envserver.families import declared
from verifiers.base import Unavailable, Verifier

log = logging.getLogger("envserver")
_OWN_PACKAGES = ("envserver", "environments", "verifiers", "sandbox", "clients")
_FAMILY_PACKAGES = ("environments", "verifiers", "sandbox")
"""The packages a family's modules live in, beside its own (a plugin's)."""
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
    """Every declared family by name (loaded or not), environments by id, verifiers by name,
    renderers by environment id, what is disabled (typed ids: a family that could not load, an
    environment, a verifier or an option value a family withholds), and the families'
    extensions and search spaces by family name. While it is ``open`` (in a serving process) it
    holds the extensions' resources and the dynamic sources made from them."""

    families: dict[str, Family] = field(default_factory=dict)
    envs: dict[str, Environment] = field(default_factory=dict)
    verifiers: dict[str, Verifier] = field(default_factory=dict)
    renderers: dict[str, Renderer] = field(default_factory=dict)
    disabled: dict[Withheld, Unavailable] = field(default_factory=dict)
    modules: list[str] = field(default_factory=list)
    """The loaded modules of the families' packages, for the pool's fork server to import once."""
    extensions: dict[str, Extension[Any, Any]] = field(default_factory=dict)
    searches: dict[str, SearchSpace] = field(default_factory=dict)
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
                opened = extension.open(
                    family_settings(extension.settings_model, settings.data_dir)
                )
                self.resources[family] = opened
                source = extension.dynamic(opened)
                if source is not None:
                    if not isinstance(source, DynamicEnvironments):
                        raise FamilyError(
                            f"family {family!r}: its dynamic source lacks find or listing"
                        )
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

    def withheld(self, what: EnvironmentId | VerifierName) -> Unavailable | None:
        """Why ``what`` is not served here (withheld itself, or its family could not load), and
        the fix; None when it is served or unknown."""
        why = self.disabled.get(what)
        if why is None:
            family = owner(list(self.families.values()), str(what))
            if family is not None:
                why = self.disabled.get(FamilyName(family.name))
        return why

    def disabled_reason(self, env_id: str) -> Unavailable | None:
        """Why the environment ``env_id`` is not served here, and the fix; None when it is
        served or unknown."""
        return self.withheld(EnvironmentId(env_id))

    def family_of(self, identifier: str) -> str:
        """The name of the family whose namespace holds ``identifier`` (an environment id or a
        verifier name; ``environments.family.owner``), or "" for none."""
        found = owner(list(self.families.values()), identifier)
        return found.name if found is not None else ""

    def verifier(self, name: str) -> Verifier:
        """The verifier ``name``; raises ``Disabled`` when this server cannot serve it,
        ``UnknownVerifier`` when no family defines it."""
        try:
            return self.verifiers[name]
        except KeyError:
            why = self.withheld(VerifierName(name))
            if why is not None:
                raise Disabled(f"verifier {name!r}", why) from None
            raise UnknownVerifier(f"unknown verifier {name!r}; GET /v1/envs lists them") from None


def discover(plugins: Sequence[str] = ()) -> Registry:
    """The registry of every declared family (``envserver.families``: the entry points, then
    the modules in ``plugins``), each loaded here unless its dependencies are missing.

    Raises ``FamilyError`` for a declaration or contents that cannot be used: a bug, not a
    missing extra.
    """
    registry = Registry()
    for family in declared(plugins):
        registry.families[family.name] = family
    for family in registry.families.values():
        _load(family, registry)
    registry.modules = sorted(set(registry.modules))
    for env in registry.envs.values():
        named = env.spec.verifier
        served = named is None or named in registry.verifiers
        if not served and registry.withheld(VerifierName(str(named))) is None:
            raise FamilyError(
                f"family {registry.family_of(env.spec.id)!r}: environment {env.spec.id!r} "
                f"scores with verifier {named!r}, which no family serves"
            )
    if not registry.families:
        log.warning("no family is declared: is envserver installed (pip install -e .)?")
    return registry


def _disable(registry: Registry, family: Family, reason: str) -> None:
    fix = f"pip install '{family.install}'" if family.install else "install it"
    why = Unavailable(reason, fix)
    registry.disabled[FamilyName(family.name)] = why
    log.warning("family %s disabled: %s", family.name, why)


def _load(family: Family, registry: Registry) -> None:
    if missing := family.missing():
        _disable(registry, family, f"missing optional dependency {', '.join(map(repr, missing))}")
        return
    top = (getattr(family.load, "__module__", None) or "").split(".")[0]
    own = {*_OWN_PACKAGES, top}
    try:
        contents = family.load()
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if not top or top in own:
            raise FamilyError(f"family {family.name!r}: loading it failed: {exc}") from exc
        # A dependency ``requires`` does not name (one of theirs, a broken install).
        _disable(registry, family, f"missing optional dependency {top!r}")
        return
    except FamilyError:
        raise
    except Exception as exc:
        raise FamilyError(
            f"family {family.name!r}: loading it failed: {type(exc).__name__}: {exc}"
        ) from exc
    # The pool's fork server imports these once, so its workers start with them (and the
    # libraries they import) loaded: every loaded module of the packages a family's modules
    # live in, not only those this load imported. A second discovery in one process (the CLI's
    # preflight, then the app's) imports nothing new, and its fork server needs them all alike.
    packages = {*_FAMILY_PACKAGES, top}
    registry.modules += [m for m in sys.modules if m.split(".")[0] in packages]
    _register(family, contents, registry)


def _problem(family: Family, message: str) -> FamilyError:
    return FamilyError(f"family {family.name!r}: {message}")


def _not_a(family: Family, what: str, value: object, expected: str) -> FamilyError:
    return _problem(family, f"{what} is {is_a(value)}, not {expected}")


def _items(family: Family, what: str, value: object) -> Sequence[Any]:
    if not isinstance(value, tuple | list):
        raise _not_a(family, what, value, "a tuple")
    return value


def _mapping(family: Family, what: str, value: object) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise _not_a(family, what, value, "a mapping")
    return value


def _own(registry: Registry, family: Family, what: str, identifier: str) -> None:
    """``identifier`` must be in ``family``'s namespace, and no longer declared name's."""
    found = owner(list(registry.families.values()), identifier)
    if found is None:
        name = family.name
        raise _problem(
            family, f"{what} {identifier!r} is outside its namespace ({name}, {name}/… or {name}.…)"
        )
    if found is not family:
        raise _problem(
            family,
            f"{what} {identifier!r} belongs to family {found.name!r} (the longest declared name "
            "it starts with)",
        )


def _register(family: Family, contents: object, registry: Registry) -> None:
    if not isinstance(contents, Contents):
        raise _not_a(family, "what load() returned", contents, "an environments.family.Contents")
    envs: dict[str, Environment] = {}
    for index, env in enumerate(_items(family, "environments", contents.environments)):
        if not isinstance(env, Environment):
            raise _not_a(family, f"environments[{index}]", env, "an Environment")
        _check_env(family, env, registry, envs)
        envs[env.spec.id] = env
    unavailable = _unavailable(family, contents.unavailable, envs, registry)
    registry.disabled.update(unavailable)
    registry.envs.update(
        (env_id, env) for env_id, env in envs.items() if EnvironmentId(env_id) not in unavailable
    )
    for verifier in _verifiers(family, contents.verifiers, registry):
        if VerifierName(verifier.name) not in unavailable:
            registry.verifiers[verifier.name] = verifier
    for env_id, renderer in _mapping(family, "renderers", contents.renderers).items():
        _check_renderer(family, env_id, renderer, envs)
        if EnvironmentId(env_id) not in unavailable:
            registry.renderers[env_id] = renderer
    if contents.extension is not None:
        if not isinstance(contents.extension, Extension):
            raise _not_a(family, "extension", contents.extension, "an Extension")
        registry.extensions[family.name] = contents.extension
    if contents.search is not None:
        if not isinstance(contents.search, SearchSpace):
            raise _not_a(family, "search", contents.search, "a SearchSpace")
        registry.searches[family.name] = contents.search


def _verifiers(family: Family, declared: object, registry: Registry) -> list[Verifier]:
    checked: list[Verifier] = []
    for index, verifier in enumerate(_items(family, "verifiers", declared)):
        if not isinstance(verifier, Verifier):
            raise _not_a(family, f"verifiers[{index}]", verifier, "a Verifier")
        _own(registry, family, "verifier", verifier.name)
        if verifier.name in registry.verifiers or verifier.name in {v.name for v in checked}:
            raise _problem(family, f"verifier {verifier.name!r} is declared twice")
        checked.append(verifier)
    return checked


def _check_env(
    family: Family, env: Environment, registry: Registry, earlier: Mapping[str, Environment]
) -> None:
    spec = env.spec
    if not isinstance(spec.id, str) or not _ENV_ID.fullmatch(spec.id):
        raise _problem(family, f"environment id {spec.id!r} is malformed")
    _own(registry, family, "environment", spec.id)
    if spec.id in earlier:
        raise _problem(family, f"environment {spec.id!r} is declared twice")
    # Where the spec states its family too, the two must agree.
    if spec.family and spec.family != family.name:
        raise _problem(family, f"environment {spec.id!r} says its family is {spec.family!r}")
    single_turn = isinstance(env, SingleTurnScoring)
    if (spec.kind == "single_turn") != single_turn:
        does = "scores" if single_turn else "does not score"
        raise _problem(
            family, f"environment {spec.id!r} is {spec.kind} but {does} a single response"
        )


def _check_renderer(
    family: Family, env_id: object, renderer: object, envs: Mapping[str, Environment]
) -> None:
    if not isinstance(env_id, str) or env_id not in envs:
        raise _problem(family, f"renderer for {env_id!r}: the family has no such environment")
    if not isinstance(renderer, Renderer):
        raise _not_a(family, f"renderers[{env_id!r}]", renderer, "a Renderer")
    listed = envs[env_id].spec.actions_key
    if isinstance(renderer, ListedActions) and renderer.key != listed:
        raise _problem(
            family,
            f"renderer for {env_id!r} lists the actions of info[{renderer.key!r}], but the "
            f"environment's spec names info[{listed!r}]",
        )


def _unavailable(
    family: Family, declared: object, envs: Mapping[str, Environment], registry: Registry
) -> dict[Withheld, Unavailable]:
    withheld: dict[Withheld, Unavailable] = {}
    for key, why in _mapping(family, "unavailable", declared).items():
        if not isinstance(why, Unavailable):
            raise _not_a(family, f"unavailable[{key!r}]", why, "an Unavailable")
        if isinstance(key, VerifierName):
            _own(registry, family, "verifier", key.name)
        elif isinstance(key, EnvironmentId | OptionValue):
            env_id = key.id if isinstance(key, EnvironmentId) else key.env
            if env_id not in envs:
                raise _problem(family, f"unavailable names {env_id!r}, none of its environments")
            options = envs[env_id].spec.options_model.model_fields
            if isinstance(key, OptionValue) and key.option not in options:
                raise _problem(family, f"unavailable names {key}: {env_id!r} has no such option")
        else:
            expected = "an EnvironmentId, VerifierName or OptionValue"
            raise _not_a(family, f"unavailable key {key!r}", key, expected)
        withheld[key] = why
    return withheld
