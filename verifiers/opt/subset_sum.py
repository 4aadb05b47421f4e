"""Subset sum, largest variant: distinct indices whose numbers sum exactly to the target;
maximise how many indices are chosen."""

from __future__ import annotations

from typing import Any

from verifiers.opt.answer import check_distinct, check_ids, int_list
from verifiers.opt.base import Infeasible, InvalidAnswer, TaskCheck


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Number of chosen indices; raises on repeats (the original counted ``[k, k, k]`` three
    times), unknown indices or a sum other than the target."""
    numbers = instance["numbers"]
    chosen = int_list(answer)
    if not chosen:
        raise InvalidAnswer("no index chosen")
    check_ids(chosen, len(numbers), "index")
    check_distinct(chosen, "index")
    total = sum(numbers[str(i)] for i in chosen)
    if total != instance["target"]:
        raise Infeasible(
            f"the chosen numbers sum to {total}, not to the target {instance['target']}"
        )
    return float(len(chosen))


CHECK = TaskCheck("subset_sum", "max", evaluate)
