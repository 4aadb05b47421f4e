"""Evaluate answers to SBOL tasks: success per circuit type and task kind, and per level.

    envserver sbol evaluate answers.jsonl [--json]

Each line is ``{"task_id": ..., "response": ...}`` (or ``"responses": [...]``); several lines
or responses for one task id are several tries. A task succeeds when any try passes all five
levels (the paper's Task Success Rate); its level reached is the best try's. Printed: success
in percent per circuit type x task kind with row and column totals, per split, and the share of
tries that pass each level. A try the sandbox could not run stops the evaluation (exit 1): its
score would be missing, not zero.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from environments.answers import read_tries
from environments.sbol.bench import family_for
from environments.sbol.tasks import TASK_KINDS
from verifiers.sbol import VERIFIER
from verifiers.sbol.design import CIRCUIT_TYPES
from verifiers.sbol.reward import LEVELS


@dataclass(frozen=True)
class Attempt:
    """One scored try."""

    task_id: str
    kind: str
    circuit: str
    split: str
    levels: int  # levels passed in a row from L1


@dataclass
class Report:
    """Success rates in percent and how many tasks they cover."""

    cells: dict[str, dict[str, float]] = field(default_factory=dict)  # circuit -> kind -> %
    circuits: dict[str, float] = field(default_factory=dict)
    kinds: dict[str, float] = field(default_factory=dict)
    splits: dict[str, float] = field(default_factory=dict)
    levels: dict[str, float] = field(default_factory=dict)  # share of tries passing each level
    overall: float = 0.0
    tasks: int = 0
    tries: int = 0


def _percent(values: Iterable[bool]) -> float:
    listed = [float(v) for v in values]
    return round(100 * statistics.fmean(listed), 1) if listed else 0.0


def aggregate(attempts: Iterable[Attempt]) -> Report:
    """Best try per task, then the means."""
    best: dict[str, Attempt] = {}
    tries = 0
    level_counts = [0] * len(LEVELS)
    for attempt in attempts:
        tries += 1
        for i in range(attempt.levels):
            level_counts[i] += 1
        known = best.get(attempt.task_id)
        if known is None or attempt.levels > known.levels:
            best[attempt.task_id] = attempt
    done = {task_id: a.levels == len(LEVELS) for task_id, a in best.items()}
    report = Report(tasks=len(best), tries=tries)
    groups: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for task_id, attempt in best.items():
        groups[(attempt.circuit, attempt.kind)].append(done[task_id])
    for circuit in CIRCUIT_TYPES:
        row: dict[str, float] = {
            kind: _percent(groups[(circuit, kind)])
            for kind in TASK_KINDS
            if groups.get((circuit, kind))
        }
        if row:
            report.cells[circuit] = row
    for circuit in CIRCUIT_TYPES:
        values = [done[t] for t, a in best.items() if a.circuit == circuit]
        if values:
            report.circuits[circuit] = _percent(values)
    for kind in TASK_KINDS:
        values = [done[t] for t, a in best.items() if a.kind == kind]
        if values:
            report.kinds[kind] = _percent(values)
    for split in ("id", "ood"):
        values = [done[t] for t, a in best.items() if a.split == split]
        if values:
            report.splits[split] = _percent(values)
    report.levels = {
        name: round(100 * count / tries, 1) if tries else 0.0
        for name, count in zip(LEVELS, level_counts, strict=True)
    }
    report.overall = _percent(done.values())
    return report


def score(tries: Iterable[tuple[str, str]]) -> Iterator[Attempt]:
    """Score each ``(task_id, response)`` against its task's specification."""
    references: dict[str, Any] = {}
    for task_id, response in tries:
        if task_id not in references:
            family, seed, options = family_for(task_id)
            task = family.generate(seed, options)  # type: ignore[attr-defined]
            references[task_id] = (task.reference, family.kind, options.split)  # type: ignore[attr-defined]
        reference, kind, split = references[task_id]
        result = VERIFIER(response, reference)
        if result.status in ("timeout", "error"):
            raise RuntimeError(f"{task_id}: scoring failed: {result.detail}")
        levels = int(result.metrics.get("levels_passed", 0))
        yield Attempt(task_id, kind, reference["circuit"], split, levels)


def format_report(report: Report) -> str:
    """The report as plain-text tables."""
    kinds = [k for k in TASK_KINDS if k in report.kinds]
    head = f"{'success %':<20}" + "".join(f"{k[:12]:>13}" for k in kinds) + f"{'all':>8}"
    lines = [head]
    for circuit, row in report.cells.items():
        cells = "".join(f"{row[k]:>13.1f}" if k in row else f"{'-':>13}" for k in kinds)
        lines.append(f"{circuit:<20}{cells}{report.circuits[circuit]:>8.1f}")
    totals = "".join(f"{report.kinds[k]:>13.1f}" for k in kinds)
    lines.append(f"{'all':<20}{totals}{report.overall:>8.1f}")
    splits = ", ".join(f"{name} {value:.1f}" for name, value in report.splits.items())
    lines.append(f"by split: {splits}   ({report.tasks} tasks, {report.tries} tries)")
    lines.append(
        "tries passing each level: "
        + "  ".join(f"{name} {value:.1f}" for name, value in report.levels.items())
    )
    return "\n".join(lines)


def evaluate(answers: Path) -> Report:
    """The report for a JSONL file of answers. Raises ValueError, KeyError or
    json.JSONDecodeError for malformed input, RuntimeError when a try could not be
    scored."""
    with answers.open() as lines:
        return aggregate(score(read_tries(lines)))
