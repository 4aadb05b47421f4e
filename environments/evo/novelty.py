"""L5, novelty: a behavioural fingerprint (what the environment generates and answers on probe
seeds) and the normalised code digest, compared with the admitted pool."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from environments.evo.review import answer_of

SIMILAR = 0.5
"""Share of probe tasks answered alike above which two environments count as one."""


@dataclass(frozen=True)
class PoolEntry:
    """An admitted environment as the novelty check sees it."""

    name: str
    normalised: str
    fingerprint: tuple[str, ...]


def fingerprint(tasks: Iterable[dict[str, Any]]) -> tuple[str, ...]:
    """One short hash per probe task, of its instance and its reference answer (not the prompt
    wording, which a renamed copy would change)."""
    return tuple(
        hashlib.sha256(
            json.dumps([task["instance"], answer_of(task["reference"])], sort_keys=True).encode()
        ).hexdigest()[:16]
        for task in tasks
    )


def duplicate_of(normalised: str, prints: tuple[str, ...], pool: Iterable[PoolEntry]) -> str | None:
    """Why the submission duplicates an admitted environment, or None."""
    for entry in pool:
        if entry.normalised == normalised:
            return f"its normalised code is that of the admitted environment {entry.name!r}"
        shared = len(set(prints) & set(entry.fingerprint)) / max(1, len(prints))
        if shared > SIMILAR:
            return (
                f"it generates and answers {shared:.0%} of the probe tasks exactly as the "
                f"admitted environment {entry.name!r} does"
            )
    return None
