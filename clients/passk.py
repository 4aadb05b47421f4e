"""pass@k with the unbiased estimator, per group of tasks, with bootstrap confidence intervals:
the numbers ``envserver eval`` and ``envserver-train --eval-every`` report.

For a task sampled n times with c correct samples, the probability that at least one of k
samples (drawn without replacement from the n) is correct is

    pass@k = 1 - C(n - c, k) / C(n, k)          (Chen et al. 2021, "Evaluating Large Language
                                                  Models Trained on Code", eq. 1)

computed as 1 - prod_{i = n - c + 1}^{n} (1 - k / i), which needs no large binomials; a group's
pass@k is the mean over its tasks. It is unbiased for every k <= n, which is why n samples are
drawn once for the largest k rather than k samples per k.

The interval is a percentile bootstrap over tasks: the group's tasks are resampled with
replacement ``resamples`` times (1,000 by default, seeded), the mean recomputed each time, and
the 2.5th and 97.5th percentiles taken (a 95 % interval by default). It reflects which tasks were
drawn, not the sampling of completions within a task (which the unbiased estimator averages).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ALL = "all"
"""The group of every task."""
RESAMPLES = 1000
CONFIDENCE = 0.95


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of a task with ``c`` correct samples among ``n`` (``k <= n``)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


@dataclass(frozen=True)
class TaskResult:
    """One task's samples: how many were scored (``n``), how many were correct, how many the
    service could not score (``masked``: left out of n), and its group (a difficulty)."""

    task_id: str
    group: str
    n: int
    correct: int
    masked: int = 0


@dataclass(frozen=True)
class PassAtK:
    """A group's pass@k over its ``tasks`` (those scored at least k times), and the interval."""

    group: str
    k: int
    value: float
    low: float
    high: float
    tasks: int


def _interval(
    values: np.ndarray, rng: np.random.Generator, resamples: int, confidence: float
) -> tuple[float, float]:
    if len(values) < 2:
        return float(values.mean()), float(values.mean())
    picks = rng.integers(0, len(values), size=(resamples, len(values)))
    means = values[picks].mean(axis=1)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return float(low), float(high)


def estimate(
    results: Sequence[TaskResult],
    ks: Sequence[int],
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> list[PassAtK]:
    """pass@k for each k and each group (and ``all``), groups in order of first appearance."""
    groups = list(dict.fromkeys(result.group for result in results))
    if len(groups) > 1:
        groups.append(ALL)
    rng = np.random.default_rng(seed)
    rows = []
    for group in groups:
        members = [r for r in results if group in (ALL, r.group)]
        for k in sorted(set(ks)):
            values = np.array([pass_at_k(r.n, r.correct, k) for r in members if r.n >= k])
            if not len(values):
                rows.append(PassAtK(group, k, math.nan, math.nan, math.nan, 0))
                continue
            low, high = _interval(values, rng, resamples, confidence)
            rows.append(PassAtK(group, k, float(values.mean()), low, high, len(values)))
    return rows


def table(rows: Sequence[PassAtK], confidence: float = CONFIDENCE) -> list[str]:
    """The estimates as text: one line per group and k."""
    interval = f"{confidence * 100:g}% CI (bootstrap)"
    lines = [f"{'group':<12} {'k':>4} {'pass@k':>8}  {interval:<24} {'tasks':>6}"]
    for row in rows:
        interval = f"[{row.low:.3f}, {row.high:.3f}]" if row.tasks else "-"
        value = f"{row.value:.3f}" if row.tasks else "-"
        lines.append(f"{row.group:<12} {row.k:>4} {value:>8}  {interval:<24} {row.tasks:>6}")
    return lines


def save(rows: Sequence[PassAtK], results: Sequence[TaskResult], path: Path) -> None:
    """The estimates and the per-task counts as JSON."""
    path.write_text(
        json.dumps(
            {"pass_at_k": [asdict(r) for r in rows], "tasks": [asdict(r) for r in results]},
            indent=2,
        )
    )


def plot(rows: Sequence[PassAtK], path: Path, title: str = "") -> str:
    """pass@k against k per group, with the intervals, as a PNG at ``path``; the path, or why
    there is no plot (matplotlib is not installed: ``pip install 'envserver[train]'``)."""
    try:
        import matplotlib  # noqa: PLC0415 - optional, only for the plot

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        return "no plot: matplotlib is not installed (pip install 'envserver[train]')"
    figure, axis = plt.subplots(figsize=(5.5, 3.6))
    for group in dict.fromkeys(row.group for row in rows):
        shown = [row for row in rows if row.group == group and row.tasks]
        if not shown:
            continue
        ks = [row.k for row in shown]
        values = [row.value for row in shown]
        errors = [
            [row.value - row.low for row in shown],
            [row.high - row.value for row in shown],
        ]
        axis.errorbar(ks, values, yerr=errors, marker="o", capsize=3, label=group)
    axis.set_xscale("log", base=2)
    axis.set_xlabel("k")
    axis.set_ylabel("pass@k")
    axis.set_ylim(-0.02, 1.02)
    axis.set_title(title)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return str(path)
