"""A planted integer linear system: elimination to solve, substitution to verify."""

import random
import re
from typing import Any

NAME = "integer_linear_system"
DESCRIPTION = "Find integers x1..xk satisfying every equation; an integer solution is planted."
DIFFICULTIES = [1, 2, 3, 4, 5]
ANSWER_FORMAT = "<answer>x1 x2 ... as integers separated by spaces</answer>"


def generate(seed: int, difficulty: int) -> dict[str, Any]:
    rng = random.Random(f"{NAME}/{seed}/{difficulty}")
    count = 1 + (difficulty + 1) // 2 + 1
    planted = [rng.randint(-9, 9) for _ in range(count)]
    rows = [[rng.randint(-5, 5) for _ in range(count)] for _ in range(count)]
    for index, row in enumerate(rows):
        if not any(row):
            row[index] = 1
    rhs = [sum(a * x for a, x in zip(row, planted, strict=True)) for row in rows]
    return {"rows": rows, "rhs": rhs, "planted": planted}


def prompt(instance: dict[str, Any]) -> str:
    lines = []
    for row, value in zip(instance["rows"], instance["rhs"], strict=True):
        terms = " + ".join(f"({a})*x{i + 1}" for i, a in enumerate(row))
        lines.append(f"{terms} = {value}")
    return (
        "Find integers satisfying every equation:\n" + "\n".join(lines) + f"\nReply with "
        f"{ANSWER_FORMAT}."
    )


def reference(instance: dict[str, Any]) -> str:
    return f"<answer>{' '.join(map(str, instance['planted']))}</answer>"


def score(instance: dict[str, Any], response: str) -> float | None:
    found = re.findall(r"<answer>(.*?)</answer>", response, re.DOTALL)
    if not found:
        return None
    try:
        values = [int(token) for token in found[-1].replace(",", " ").split()]
    except ValueError:
        return None
    if len(values) != len(instance["planted"]):
        return 0.0
    holds = all(
        sum(a * x for a, x in zip(row, values, strict=True)) == value
        for row, value in zip(instance["rows"], instance["rhs"], strict=True)
    )
    return 1.0 if holds else 0.0
