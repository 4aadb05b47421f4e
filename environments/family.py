"""A family's declaration: the one object (``FAMILY``) a family package or plugin module exports,
and everything the service learns about the family comes from it.

``Family`` is light: importing it imports none of the family's dependencies, so the command line
(``envserver --help``, ``envserver audit --url``) and the registry read every declaration without
loading any family. It names

- ``name``: the family, and its namespace: the environments ``name`` and ``name/...`` and the
  verifiers ``name`` and ``name.…`` are its own (an id belongs to the declared family whose name is
  its longest such prefix), so a request for an id of a family this server cannot load answers
  with that family's reason instead of "unknown";
- ``requires`` and ``install``: the modules of its optional dependencies, looked for before the
  family loads, and the pip requirement that installs them (``envserver[math]``), which the
  catalogue gives as the fix when one is missing;
- ``suite``: its red-team suite (``redteam.toml``, see ``envserver.redteam``);
- ``tools``: the module of its command-line tools (a typer ``app``, run as ``envserver <name>``),
  imported only when they run;
- ``load``: a function of no arguments returning the heavy part, ``Contents``: environments,
  verifiers, renderers, the ``Extension``, what cannot serve here and why, and the search space
  of ``envserver audit --search``. The registry calls it once per process that serves and checks
  what it returns; a wrong type or an id outside the family is a ``FamilyError`` naming the
  family, never a silent skip.

Built-in families are found through the entry points of the group ``envserver.families``
(``pyproject.toml``), plugins also through ``ENVSERVER_PLUGINS``: there is no folder to scan.

What a family withholds (``Contents.unavailable``) is keyed by typed ids: an ``EnvironmentId``, a
``VerifierName`` or an ``OptionValue`` (one value of one option of an environment, such as
ALFWorld's ``engine=textworld``); the registry adds a ``FamilyName`` for a family that cannot
load. Each prints as the catalogue's ``disabled`` entry names it.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from environments.base import Environment
    from environments.extension import Extension
    from environments.renderer import Renderer
    from environments.search import SearchSpace
    from verifiers.base import Unavailable, Verifier

ENTRY_POINTS = "envserver.families"
"""The entry-point group that declares families: ``name = "package.module:FAMILY"``."""
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*(?:[./][A-Za-z0-9][A-Za-z0-9_\-]*)*")
"""A family's name, and the ids of its environments and verifiers: segments joined by / or ."""


class FamilyError(ValueError):
    """A declaration or its contents cannot be used: the message names the family (or, where
    no family could be read, the module or entry point). A bug, never a missing extra."""


@dataclass(frozen=True)
class FamilyName:
    """A whole family (it could not load here)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class EnvironmentId:
    """One environment."""

    id: str

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True)
class VerifierName:
    """One verifier."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class OptionValue:
    """One value of one option of an environment (the rest of the environment serves)."""

    env: str
    option: str
    value: str

    def __str__(self) -> str:
        return f"{self.env}?{self.option}={self.value}"


Withheld = FamilyName | EnvironmentId | VerifierName | OptionValue
"""What the registry may list as disabled."""


@dataclass(frozen=True, kw_only=True)
class Contents:
    """What a family serves, as its ``load`` returns it (see the module docstring)."""

    environments: Sequence[Environment] = ()
    verifiers: Sequence[Verifier] = ()
    renderers: Mapping[str, Renderer] = field(default_factory=dict)
    """The playground's renderer of an environment, by environment id."""
    extension: Extension[Any, Any] | None = None
    unavailable: Mapping[Withheld, Unavailable] = field(default_factory=dict)
    """What the family defines but cannot serve here (data, a binary or a setting is missing),
    with the reason and the fix: the registry serves none of it and lists it as disabled."""
    search: SearchSpace | None = None
    """The family's search space for ``envserver audit --search`` (``<family>/search.py``)."""


def is_a(value: object) -> str:
    """``value``'s type with its article, for an error: "a str", "an int"."""
    name = type(value).__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


def _type_error(family: str, what: str, value: object, expected: str) -> FamilyError:
    return FamilyError(f"family {family!r}: {what} is {is_a(value)}, not {expected}")


@dataclass(frozen=True, kw_only=True)
class Family:
    """A family's declaration (see the module docstring). Checked when it is made."""

    name: str
    load: Callable[[], Contents]
    requires: tuple[str, ...] = ()
    install: str = ""
    suite: Path | None = None
    tools: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not NAME.fullmatch(self.name):
            raise FamilyError(f"family {self.name!r}: the name must be segments joined by / or .")
        if not callable(self.load):
            raise _type_error(self.name, "load", self.load, "a function returning Contents")
        if not isinstance(self.requires, tuple):
            raise _type_error(self.name, "requires", self.requires, "a tuple of module names")
        for index, module in enumerate(self.requires):
            if not isinstance(module, str):
                raise _type_error(self.name, f"requires[{index}]", module, "a module name")
        if not isinstance(self.install, str):
            raise _type_error(self.name, "install", self.install, "a pip requirement")
        if self.requires and not self.install:
            raise FamilyError(
                f"family {self.name!r}: requires names modules but install does not say what "
                "installs them (e.g. install='envserver[extra]')"
            )
        if self.suite is not None and not isinstance(self.suite, Path):
            raise _type_error(self.name, "suite", self.suite, "a Path")
        if self.tools is not None and not isinstance(self.tools, str):
            raise _type_error(self.name, "tools", self.tools, "a module name")

    def prefix_of(self, identifier: str) -> bool:
        """Whether ``identifier`` (an environment id or verifier name) is in this family's
        namespace: the name itself, or the name followed by / or ."""
        rest = identifier.removeprefix(self.name)
        return rest != identifier and (not rest or rest[0] in "/.")

    def missing(self) -> list[str]:
        """The modules of ``requires`` that are not installed, found without importing them."""
        return [module for module in self.requires if not _installed(module)]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a dotted name whose parent is missing
        return False


def owner(families: Sequence[Family], identifier: str) -> Family | None:
    """The family ``identifier`` belongs to: the one with the longest name it is prefixed by."""
    owners = [family for family in families if family.prefix_of(identifier)]
    return max(owners, key=lambda family: len(family.name), default=None)
