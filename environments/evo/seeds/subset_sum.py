"""Planted subset-sum: hard to find, one addition to check."""

import random
import re
from typing import Any

NAME = "planted_subset_sum"
DESCRIPTION = "Pick numbers (by position) whose sum is exactly the target; a solution is planted."
DIFFICULTIES = [1, 2, 3, 4, 5]
ANSWER_FORMAT = "<answer>1-based positions separated by spaces</answer>"


def generate(seed: int, difficulty: int) -> dict[str, Any]:
    rng = random.Random(f"{NAME}/{seed}/{difficulty}")
    count = 6 + 3 * difficulty
    numbers = [rng.randint(10, 10 ** (1 + (difficulty + 1) // 2) * 5) for _ in range(count)]
    planted = sorted(rng.sample(range(count), count // 2))
    return {"numbers": numbers, "target": sum(numbers[i] for i in planted), "planted": planted}


def prompt(instance: dict[str, Any]) -> str:
    listing = " ".join(f"{i + 1}:{n}" for i, n in enumerate(instance["numbers"]))
    return (
        f"Numbers (position:value): {listing}\nChoose distinct positions whose values sum to "
        f"exactly {instance['target']}. Reply with {ANSWER_FORMAT}."
    )


def reference(instance: dict[str, Any]) -> str:
    return f"<answer>{' '.join(str(i + 1) for i in instance['planted'])}</answer>"


def score(instance: dict[str, Any], response: str) -> float | None:
    found = re.findall(r"<answer>(.*?)</answer>", response, re.DOTALL)
    if not found:
        return None
    tokens = found[-1].replace(",", " ").split()
    if not tokens or not all(token.isdigit() for token in tokens):
        return None
    chosen = [int(token) for token in tokens]
    numbers = instance["numbers"]
    if len(set(chosen)) != len(chosen) or not all(1 <= i <= len(numbers) for i in chosen):
        return 0.0
    return 1.0 if sum(numbers[i - 1] for i in chosen) == instance["target"] else 0.0
