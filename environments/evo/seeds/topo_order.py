"""An order of tasks respecting precedence constraints: any valid order is accepted."""

import random
import re
import string
from typing import Any

NAME = "precedence_order"
DESCRIPTION = "Order lettered tasks so that every 'X before Y' constraint holds."
DIFFICULTIES = [1, 2, 3, 4, 5]
ANSWER_FORMAT = "<answer>the letters in order, separated by spaces</answer>"


def generate(seed: int, difficulty: int) -> dict[str, Any]:
    rng = random.Random(f"{NAME}/{seed}/{difficulty}")
    count = 4 + 2 * difficulty
    hidden = list(string.ascii_uppercase[:count])
    rng.shuffle(hidden)
    edges = [
        [hidden[i], hidden[j]]
        for i in range(count)
        for j in range(i + 1, count)
        if rng.random() < 0.35
    ]
    return {"tasks": sorted(hidden), "before": edges}


def prompt(instance: dict[str, Any]) -> str:
    rules = "\n".join(f"{a} before {b}" for a, b in instance["before"])
    return (
        f"Tasks: {' '.join(instance['tasks'])}\nConstraints:\n{rules}\nList every task once, "
        f"in an order that satisfies all constraints. Reply with {ANSWER_FORMAT}."
    )


def reference(instance: dict[str, Any]) -> str:
    waiting = dict.fromkeys(instance["tasks"], 0)
    for _, after in instance["before"]:
        waiting[after] += 1
    order: list[str] = []
    while len(order) < len(waiting):
        task = min(t for t, n in waiting.items() if n == 0 and t not in order)
        order.append(task)
        for first, after in instance["before"]:
            if first == task:
                waiting[after] -= 1
    return f"<answer>{' '.join(order)}</answer>"


def score(instance: dict[str, Any], response: str) -> float | None:
    found = re.findall(r"<answer>(.*?)</answer>", response, re.DOTALL)
    if not found:
        return None
    order = found[-1].replace(",", " ").split()
    if sorted(order) != instance["tasks"]:
        return 0.0
    position = {task: index for index, task in enumerate(order)}
    ok = all(position[a] < position[b] for a, b in instance["before"])
    return 1.0 if ok else 0.0
