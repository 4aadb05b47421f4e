"""``envserver reverify FILE.jsonl``: score stored rollouts (``clients.rollouts``) again through a
server and report, per family, how many rewards changed and which digests of the code that
scored them differ from today's.

A reward counts as changed when the new one differs from the stored one (by more than 1e-9);
a row the server could not score now (``timeout``/``error``) is *unscored*, not changed; a row
whose environment or verifier the server does not serve is *not served* and is not sent. Rows
are scored in batches: the task-id rows together, the reference rows per verifier.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from clients.http import EnvServerClient
from clients.rollouts import StoredRollout
from envserver.wire import Catalogue, VerifyResult

BATCH = 256
"""Rows per ``/v1/verify`` request."""
TOLERANCE = 1e-9
NOT_SERVED = "(not served)"
"""The family of rows whose environment or verifier the server does not serve."""


@dataclass(frozen=True)
class Change:
    """A row whose reward is not what was stored."""

    line: int
    id: str | None
    target: str
    stored: float | None
    now: float | None
    scorer_then: str
    scorer_now: str


@dataclass
class FamilyDrift:
    """One family's rows: how many, how many changed, and the digests then and now."""

    rows: int = 0
    changed: int = 0
    unscored: int = 0
    digests_then: Counter[str] = field(default_factory=Counter)
    digests_now: Counter[str] = field(default_factory=Counter)

    def differing(self) -> list[str]:
        """The stored digests that are not today's."""
        return sorted(set(self.digests_then) - set(self.digests_now))


@dataclass
class Drift:
    """What re-scoring a file found."""

    families: dict[str, FamilyDrift] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "families": {
                name: {
                    "rows": d.rows, "changed": d.changed, "unscored": d.unscored,
                    "digests_then": dict(d.digests_then), "digests_now": dict(d.digests_now),
                    "differing_digests": d.differing(),
                }
                for name, d in sorted(self.families.items())
            },
            "changes": [vars(change) for change in self.changes],
        }  # fmt: skip


def _families(catalogue: Catalogue) -> dict[str, str]:
    """The family of each environment id and verifier name the server serves (a server older
    than ``VerifierInfo.family``: a verifier's name stands for its family)."""
    return {
        **{f"env:{env.id}": env.family for env in catalogue.envs},
        **{f"verifier:{v.name}": v.family or v.name for v in catalogue.verifiers},
    }


def _family(row: StoredRollout, families: dict[str, str]) -> str:
    if row.task_id is not None:
        key = f"env:{row.task_id.partition('@')[0]}"
    else:
        key = f"verifier:{row.verifier}"
    return families.get(key, NOT_SERVED)


def _changed(stored: float | None, now: float | None) -> bool:
    if stored is None or now is None:
        return stored is not now
    return not math.isclose(stored, now, rel_tol=0.0, abs_tol=TOLERANCE)


def reverify(
    client: EnvServerClient, rows: Iterable[tuple[int, StoredRollout]], batch: int = BATCH
) -> Drift:
    """Score ``(line, row)`` again through ``client``'s server; what changed."""
    families = _families(client.envs())
    drift = Drift()
    groups: dict[str | None, list[tuple[int, StoredRollout, str]]] = {}
    for line, row in rows:
        family = _family(row, families)
        counts = drift.families.setdefault(family, FamilyDrift())
        counts.rows += 1
        if row.digest:
            counts.digests_then[row.digest] += 1
        if family != NOT_SERVED:
            groups.setdefault(row.verifier, []).append((line, row, family))
    for verifier, members in groups.items():
        for start in range(0, len(members), batch):
            part = members[start : start + batch]
            results = client.verify([row.item() for _, row, _ in part], verifier=verifier).results
            for (line, row, family), result in zip(part, results, strict=True):
                _tally(drift, family, line, row, result)
    return drift


def _tally(drift: Drift, family: str, line: int, row: StoredRollout, result: VerifyResult) -> None:
    counts = drift.families[family]
    if result.digest:
        counts.digests_now[result.digest] += 1
    if result.status in ("timeout", "error"):
        counts.unscored += 1
        return
    if _changed(row.reward, result.reward):
        counts.changed += 1
        target = row.task_id or f"{row.verifier}: {str(row.reference)[:40]}"
        drift.changes.append(
            Change(line, row.id, target, row.reward, result.reward, row.scorer, result.scorer)
        )


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def report(drift: Drift, shown: int = 20) -> list[str]:
    """The drift as text lines: a table per family, then the first ``shown`` changes."""
    lines = [f"{'family':<16} {'rows':>6} {'changed':>8} {'unscored':>9}  digests"]
    for name, counts in sorted(drift.families.items()):
        now = ", ".join(sorted(counts.digests_now)) or "-"
        then = counts.differing()
        digests = f"now {now}" + (
            "; stored " + ", ".join(f"{d} ({counts.digests_then[d]} rows)" for d in then)
            + " differ" if then else ("; same as stored" if counts.digests_then else "")
        )  # fmt: skip
        lines.append(
            f"{name:<16} {counts.rows:>6} {counts.changed:>8} {counts.unscored:>9}  {digests}"
        )
    if drift.changes:
        lines.append(f"changed rewards ({len(drift.changes)}):")
        for change in drift.changes[:shown]:
            scorers = (
                f"  (scored by {change.scorer_then}, now {change.scorer_now})"
                if change.scorer_then and change.scorer_then != change.scorer_now
                else ""
            )
            ident = f" id={change.id}" if change.id else ""
            lines.append(
                f"  line {change.line}{ident}  {change.target}  "
                f"{_number(change.stored)} -> {_number(change.now)}{scorers}"
            )
        if len(drift.changes) > shown:
            lines.append(f"  ... and {len(drift.changes) - shown} more (--json lists all)")
    return lines
