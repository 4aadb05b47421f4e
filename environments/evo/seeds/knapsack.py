"""0/1 knapsack: a table DP as code, a combinatorial search by hand."""

import random
import re
from typing import Any

NAME = "zero_one_knapsack"
DESCRIPTION = "The largest total value of items whose total weight fits the capacity."
DIFFICULTIES = [1, 2, 3, 4, 5]
ANSWER_FORMAT = "<answer>an integer</answer>"


def generate(seed: int, difficulty: int) -> dict[str, Any]:
    rng = random.Random(f"{NAME}/{seed}/{difficulty}")
    items = [[rng.randint(1, 15), rng.randint(1, 30)] for _ in range(4 + 2 * difficulty)]
    capacity = sum(weight for weight, _ in items) // 2
    return {"items": items, "capacity": capacity}


def prompt(instance: dict[str, Any]) -> str:
    rows = "\n".join(f"item {i + 1}: weight {w}, value {v}"
                     for i, (w, v) in enumerate(instance["items"]))  # fmt: skip
    return (
        f"Items:\n{rows}\nCapacity: {instance['capacity']}\nEach item is taken at most once. "
        f"What is the largest total value that fits? Reply with {ANSWER_FORMAT}."
    )


def _best(items: list[list[int]], capacity: int) -> int:
    table = [0] * (capacity + 1)
    for weight, value in items:
        for room in range(capacity, weight - 1, -1):
            table[room] = max(table[room], table[room - weight] + value)
    return table[capacity]


def reference(instance: dict[str, Any]) -> str:
    return f"<answer>{_best(instance['items'], instance['capacity'])}</answer>"


def score(instance: dict[str, Any], response: str) -> float | None:
    found = re.findall(r"<answer>\s*(-?\d+)\s*</answer>", response)
    if not found:
        return None
    return 1.0 if int(found[-1]) == _best(instance["items"], instance["capacity"]) else 0.0
