"""String rewriting: a loop to simulate as code, a long error-prone trace by hand."""

import random
import re
from typing import Any

NAME = "string_rewriting"
DESCRIPTION = "The string left after applying ordered rewrite rules for a number of steps."
DIFFICULTIES = [1, 2, 3, 4, 5]
ANSWER_FORMAT = "<answer>the final string</answer>"


def generate(seed: int, difficulty: int) -> dict[str, Any]:
    rng = random.Random(f"{NAME}/{seed}/{difficulty}")
    letters = "abc"
    rules = []
    for _ in range(2 + difficulty // 2):
        left = "".join(rng.choice(letters) for _ in range(2))
        right = "".join(rng.choice(letters) for _ in range(rng.randint(1, 3)))
        rules.append([left, right])
    start = "".join(rng.choice(letters) for _ in range(5 + 2 * difficulty))
    return {"start": start, "rules": rules, "steps": 3 + 3 * difficulty}


def prompt(instance: dict[str, Any]) -> str:
    rules = "\n".join(f"{i + 1}. {a} -> {b}" for i, (a, b) in enumerate(instance["rules"]))
    return (
        f"Start: {instance['start']}\nRules, in priority order:\n{rules}\nOne step applies the "
        "first rule whose left side occurs, at its leftmost occurrence; stop early when none "
        f"applies. What is the string after {instance['steps']} steps? Reply with "
        f"{ANSWER_FORMAT}."
    )


def _run(instance: dict[str, Any]) -> str:
    text: str = instance["start"]
    for _ in range(instance["steps"]):
        for left, right in instance["rules"]:
            if left in text:
                text = text.replace(left, right, 1)
                break
        else:
            break
    return text


def reference(instance: dict[str, Any]) -> str:
    return f"<answer>{_run(instance)}</answer>"


def score(instance: dict[str, Any], response: str) -> float | None:
    found = re.findall(r"<answer>(.*?)</answer>", response, re.DOTALL)
    if not found or not found[-1].strip():
        return None
    return 1.0 if found[-1].strip() == _run(instance) else 0.0
