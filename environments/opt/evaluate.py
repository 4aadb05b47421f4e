"""Evaluate answers to OPT-BENCH instances with the original's aggregation.

    envserver opt evaluate answers.jsonl [--json]

Each line is ``{"task_id": ..., "response": ...}`` (or ``"responses": [...]``); several lines
or responses for one task id are several tries. Per instance: success if any try is feasible,
ratio = the best try's quality ratio (0 when infeasible). Per task: SR = mean success x 100,
QR = mean best ratio x 100 over all its instances. Per category: the mean over its tasks.
Overall: the mean over the categories (unweighted), as the original's evaluation script.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from environments.answers import read_tries
from environments.opt.catalog import reference_for
from environments.opt.tasks import TASKS
from verifiers.opt import VERIFIER


@dataclass(frozen=True)
class Attempt:
    """One scored try: its instance, its task, and how it scored."""

    instance: str
    task: str
    feasible: bool
    ratio: float
    above_reference: bool = False


@dataclass
class Scores:
    """SR and QR in percent, and how many instances they cover."""

    sr: float
    qr: float
    instances: int


@dataclass
class Report:
    """Per task, per category and overall scores; instances whose answer beat the reference."""

    tasks: dict[str, Scores] = field(default_factory=dict)
    categories: dict[str, Scores] = field(default_factory=dict)
    overall: Scores = field(default_factory=lambda: Scores(0.0, 0.0, 0))
    above_reference: list[str] = field(default_factory=list)


def _mean(values: Iterable[float]) -> float:
    listed = list(values)
    return statistics.fmean(listed) if listed else 0.0


def aggregate(attempts: Iterable[Attempt]) -> Report:
    """Best of the tries per instance, then task, category and overall means."""
    best: dict[str, tuple[str, bool, float]] = {}
    report = Report()
    for attempt in attempts:
        task, success, ratio = best.get(attempt.instance, (attempt.task, False, 0.0))
        best[attempt.instance] = (task, success or attempt.feasible, max(ratio, attempt.ratio))
        if attempt.above_reference and attempt.instance not in report.above_reference:
            report.above_reference.append(attempt.instance)
    by_task: dict[str, list[tuple[bool, float]]] = defaultdict(list)
    for task, success, ratio in best.values():
        by_task[task].append((success, ratio))
    for task in sorted(by_task, key=lambda name: list(TASKS).index(name) if name in TASKS else 99):
        results = by_task[task]
        report.tasks[task] = Scores(
            100 * _mean(float(s) for s, _ in results),
            100 * _mean(r for _, r in results),
            len(results),
        )
    by_category: dict[str, list[str]] = defaultdict(list)
    for task in report.tasks:
        by_category[TASKS[task].category].append(task)
    for category, members in by_category.items():
        report.categories[category] = Scores(
            _mean(report.tasks[t].sr for t in members),
            _mean(report.tasks[t].qr for t in members),
            sum(report.tasks[t].instances for t in members),
        )
    report.overall = Scores(
        _mean(c.sr for c in report.categories.values()),
        _mean(c.qr for c in report.categories.values()),
        len(best),
    )
    return report


def score(tries: Iterable[tuple[str, str]]) -> Iterator[Attempt]:
    """Score each ``(task_id, response)`` against the task's reference."""
    references: dict[str, Any] = {}
    for task_id, response in tries:
        if task_id not in references:
            references[task_id] = reference_for(task_id)
        reference = references[task_id]
        result = VERIFIER(response, reference)
        if result.status in ("timeout", "error"):
            raise RuntimeError(f"{task_id}: scoring failed: {result.detail}")
        yield Attempt(
            instance=task_id,
            task=reference["task"],
            feasible=result.components.get("feasible", 0.0) == 1.0,
            ratio=result.components.get("quality_ratio", 0.0),
            above_reference=bool(result.extra.get("above_reference")),
        )


def format_report(report: Report) -> str:
    """The report as a plain-text table."""
    lines = [f"{'':<22}{'SR':>7}{'QR':>7}{'n':>6}"]
    for name, scores in report.tasks.items():
        lines.append(f"{name:<22}{scores.sr:>7.1f}{scores.qr:>7.1f}{scores.instances:>6}")
    for name, scores in report.categories.items():
        lines.append(
            f"[{name}]{'':<{20 - len(name)}}{scores.sr:>7.1f}{scores.qr:>7.1f}{scores.instances:>6}"
        )
    overall = report.overall
    lines.append(f"{'overall':<22}{overall.sr:>7.1f}{overall.qr:>7.1f}{overall.instances:>6}")
    if report.above_reference:
        lines.append(f"answers that beat the reference: {', '.join(report.above_reference)}")
    return "\n".join(lines)


def evaluate(answers: Path) -> Report:
    """The report for a JSONL file of answers. Raises ValueError, KeyError or
    json.JSONDecodeError for malformed input."""
    with answers.open() as lines:
        return aggregate(score(read_tries(lines)))
