"""Set cover: distinct subset ids whose union is the whole universe; minimise how many."""

from __future__ import annotations

from typing import Any

from verifiers.opt.answer import IMPOSSIBLE, check_distinct, check_ids, int_list
from verifiers.opt.base import Infeasible, InvalidAnswer, TaskCheck


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Number of chosen subsets; raises on 'Impossible', repeats, unknown ids or a gap."""
    universe, subsets = instance["U"], instance["S"]
    if IMPOSSIBLE.fullmatch(answer):
        # Every generated instance is coverable (the generator patches each uncovered element
        # into some subset), so this claim is always wrong; the original let it pass when the
        # union fell short of U and merely penalised it otherwise.
        raise Infeasible("'Impossible' is wrong: all subsets together cover U, so a cover exists")
    chosen = int_list(answer)
    if not chosen:
        raise InvalidAnswer("no subset chosen")
    check_ids(chosen, len(subsets), "subset")
    check_distinct(chosen, "subset")
    covered: set[int] = set()
    for i in chosen:
        covered.update(subsets[str(i)])
    missing = sorted(set(universe) - covered)
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
        raise Infeasible(f"{len(missing)} element(s) of U are not covered: {shown}")
    return float(len(chosen))


CHECK = TaskCheck("set_cover", "min", evaluate)
