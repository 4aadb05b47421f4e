"""Weighted interval scheduling: a DP over sorted end times, a tangle of choices by hand."""

import bisect
import random
import re
from typing import Any

NAME = "weighted_interval_scheduling"
DESCRIPTION = "The largest total weight of pairwise non-overlapping weighted intervals."
DIFFICULTIES = [1, 2, 3, 4, 5]
ANSWER_FORMAT = "<answer>an integer</answer>"


def generate(seed: int, difficulty: int) -> dict[str, Any]:
    rng = random.Random(f"{NAME}/{seed}/{difficulty}")
    intervals = []
    for _ in range(4 + 3 * difficulty):
        start = rng.randint(0, 10 * difficulty + 10)
        intervals.append([start, start + rng.randint(1, 8), rng.randint(1, 20)])
    return {"intervals": intervals}


def prompt(instance: dict[str, Any]) -> str:
    rows = "\n".join(f"[{s}, {e}) weight {w}" for s, e, w in instance["intervals"])
    return (
        f"Half-open intervals with weights:\n{rows}\nChoose intervals that pairwise do not "
        f"overlap (touching ends are fine) to maximise the total weight. What is that total? "
        f"Reply with {ANSWER_FORMAT}."
    )


def _best(intervals: list[list[int]]) -> int:
    ordered = sorted(intervals, key=lambda item: item[1])
    ends = [end for _, end, _ in ordered]
    best = [0] * (len(ordered) + 1)
    for index, (start, _, weight) in enumerate(ordered):
        fits = bisect.bisect_right(ends, start, 0, index)
        best[index + 1] = max(best[index], best[fits] + weight)
    return best[-1]


def reference(instance: dict[str, Any]) -> str:
    return f"<answer>{_best(instance['intervals'])}</answer>"


def score(instance: dict[str, Any], response: str) -> float | None:
    found = re.findall(r"<answer>\s*(-?\d+)\s*</answer>", response)
    if not found:
        return None
    return 1.0 if int(found[-1]) == _best(instance["intervals"]) else 0.0
