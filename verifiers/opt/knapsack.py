"""0/1 knapsack: item ids whose total weight fits the capacity; maximise total value."""

from __future__ import annotations

from typing import Any

from verifiers.opt.answer import check_distinct, check_ids, int_list
from verifiers.opt.base import Infeasible, InvalidAnswer, TaskCheck


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Total value of the chosen items; raises on duplicates, unknown ids or overweight."""
    items = instance["items"]
    chosen = int_list(answer)
    if not chosen:
        raise InvalidAnswer("no item chosen")
    check_ids(chosen, len(items), "item")
    check_distinct(chosen, "item")
    weight = sum(items[str(i)]["weight"] for i in chosen)
    if weight > instance["capacity"]:
        raise Infeasible(f"total weight {weight} exceeds the capacity {instance['capacity']}")
    return float(sum(items[str(i)]["value"] for i in chosen))


CHECK = TaskCheck("knapsack", "max", evaluate)
