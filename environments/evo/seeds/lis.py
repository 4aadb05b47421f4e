"""Longest strictly increasing subsequence: a quadratic DP as code, error-prone by hand."""

import random
import re
from typing import Any

NAME = "longest_increasing_subsequence"
DESCRIPTION = "The length of the longest strictly increasing subsequence of a list of integers."
DIFFICULTIES = [1, 2, 3, 4, 5]
ANSWER_FORMAT = "<answer>an integer</answer>"


def generate(seed: int, difficulty: int) -> dict[str, Any]:
    rng = random.Random(f"{NAME}/{seed}/{difficulty}")
    size = 6 + 6 * difficulty
    return {"values": [rng.randint(1, 10 + 15 * difficulty) for _ in range(size)]}


def prompt(instance: dict[str, Any]) -> str:
    values = " ".join(map(str, instance["values"]))
    return (
        f"Sequence: {values}\nWhat is the length of its longest strictly increasing "
        f"subsequence (not necessarily contiguous)? Reply with {ANSWER_FORMAT}."
    )


def _solve(values: list[int]) -> int:
    best = [1] * len(values)
    for i, value in enumerate(values):
        for j in range(i):
            if values[j] < value:
                best[i] = max(best[i], best[j] + 1)
    return max(best)


def reference(instance: dict[str, Any]) -> str:
    return f"<answer>{_solve(instance['values'])}</answer>"


def score(instance: dict[str, Any], response: str) -> float | None:
    found = re.findall(r"<answer>\s*(-?\d+)\s*</answer>", response)
    if not found:
        return None
    return 1.0 if int(found[-1]) == _solve(instance["values"]) else 0.0
