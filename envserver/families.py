"""Which families there are: the declarations (``environments.family.Family``) of the entry points
of the group ``envserver.families`` (the built-in families are declared there in
``pyproject.toml``, an installed plugin package declares its own), then those of the plugin
modules the caller names (``Settings.plugins``, ``ENVSERVER_PLUGINS``).

Light: it imports the declarations only, never a family's contents, so the command line reads
the families' suites and tools without loading any of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points

from environments.family import ENTRY_POINTS, Family, FamilyError, is_a


def _entry_point(point: EntryPoint) -> Family:
    try:
        family = point.load()
    except Exception as exc:
        raise FamilyError(
            f"family {point.name!r}: its declaration {point.value!r} cannot be imported: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(family, Family):
        raise FamilyError(
            f"family {point.name!r}: the entry point {point.value!r} is {is_a(family)}, not an "
            "environments.family.Family"
        )
    if family.name != point.name:
        raise FamilyError(
            f"family {family.name!r} is declared under the entry point {point.name!r}: "
            "the two names must be one"
        )
    return family


def _plugin(module: str) -> Family:
    try:
        imported = importlib.import_module(module)
    except Exception as exc:
        raise FamilyError(
            f"plugin module {module!r} cannot be imported: {type(exc).__name__}: {exc}"
        ) from exc
    family = getattr(imported, "FAMILY", None)
    if not isinstance(family, Family):
        raise FamilyError(
            f"plugin module {module!r} exports no FAMILY (an environments.family.Family)"
            + ("" if family is None else f"; its FAMILY is {is_a(family)}")
        )
    return family


def declared(plugins: Sequence[str] = ()) -> list[Family]:
    """Every family's declaration: the entry points' (by name), then the plugin modules'.
    Raises ``FamilyError`` for a declaration that cannot be read and for a name two declare."""
    points = sorted(entry_points(group=ENTRY_POINTS), key=lambda point: point.name)
    found: list[Family] = [_entry_point(point) for point in points]
    for module in plugins:
        family = _plugin(module)
        if not any(family is seen for seen in found):  # also an entry point: counted once
            found.append(family)
    names = [family.name for family in found]
    if twice := sorted({name for name in names if names.count(name) > 1}):
        raise FamilyError(f"family {twice[0]!r} is declared twice")
    return found
