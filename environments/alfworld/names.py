"""Entity ids and the names the player sees, exactly as ALFWorld derives one from the other.

A game names things by AI2-THOR ids (``Cabinet|+00.68|+00.50|-02.20``, ``loc|0|-5|2|30``). The
PDDL problem carries them mangled (``PlannedGameState.fix_pddl_str_chars``: ``|`` → ``_bar_``,
``-`` → ``_minus_``, ...) and Fast Downward lower-cases them. ALFWorld's ``Demangler`` then names
each entity by its type and a number: over the sorted ids, each type's numbers are popped from
the top, so the first id of a type gets the highest number and lists (which follow sorted ids)
read "cabinet 3, cabinet 2, cabinet 1".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

_MANGLE = {"-": "_minus_", "#": "-", "|": "_bar_", "+": "_plus_", ".": "_dot_", ",": "_comma_"}
_TABLE = str.maketrans(_MANGLE)


def mangle(raw: str) -> str:
    """The id as the PDDL problem writes it (``fix_pddl_str_chars``), before lower-casing."""
    return raw.translate(_TABLE)


def pddl_id(raw: str) -> str:
    """The id as Fast Downward and TextWorld know it: mangled and lower-cased."""
    return mangle(raw).lower()


def _kind(entity: str) -> str | None:
    # Demangler: the text before the first "_bar_", plus "basin" for SinkBasin/BathtubBasin ids.
    head, bar, _ = entity.partition("_bar_")
    if not bar:
        return None
    return head + "basin" if "basin" in entity else head


def demangle(entities: Iterable[str]) -> dict[str, str]:
    """``Demangler(game_infos=..., shuffle=False)``: entity (a PDDL id) → display name.

    ``entities`` are every id the game's facts mention; ids without ``_bar_`` (the agent, the
    type constants) keep their text and an empty number, as ALFWorld names them ("agent1 ").
    """
    ids = sorted(set(entities))
    counts = Counter(kind for kind in map(_kind, ids) if kind is not None)
    numbers = {kind: list(range(1, count + 1)) for kind, count in counts.items()}
    names: dict[str, str] = {}
    for entity in ids:
        kind = _kind(entity)
        names[entity] = f"{entity} " if kind is None else f"{kind} {numbers[kind].pop()}"
    return names
