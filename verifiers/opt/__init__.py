"""OPT-BENCH answers: strict feasibility, exact objective, quality ratio against a reference.

The reference of an item is ``{"task", "instance", "value", "optimal"}``: the task key, the
instance as the prompt shows it, the reference objective, and whether that value is a proven
optimum. Ten tasks, one module each; every module exports ``CHECK``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field

from verifiers.base import Verifier
from verifiers.numbers import Options
from verifiers.opt import (
    graph_coloring,
    hamiltonian_cycle,
    knapsack,
    max_clique,
    max_independent_set,
    meeting_schedule,
    min_bisection,
    set_cover,
    subset_sum,
    tsp,
)
from verifiers.opt.answer import final_answer
from verifiers.opt.base import Direction, Infeasible, InvalidAnswer, TaskCheck
from verifiers.score import Score

CHECKS: dict[str, TaskCheck] = {
    module.CHECK.name: module.CHECK
    for module in (
        knapsack,
        subset_sum,
        set_cover,
        tsp,
        hamiltonian_cycle,
        max_clique,
        max_independent_set,
        graph_coloring,
        min_bisection,
        meeting_schedule,
    )
}
# A ratio this far above 1 means the reference was beaten, not rounding.
_ABOVE_REFERENCE = 1e-9


class OptOptions(Options):
    """How a feasible answer's quality becomes a reward.

    The paper's quality-aware reward is not public; ``quality`` (the ratio, clipped to 1) is the
    most consistent reading of it and the default. ``power`` and ``threshold`` shape it.
    """

    mode: Literal["quality", "binary"] = Field(
        "quality",
        description="'quality': the quality ratio (clipped to 1) of a feasible answer; "
        "'binary': 1 for any feasible answer.",
    )
    power: float = Field(1.0, gt=0, le=16, description="quality mode: reward = ratio ** power.")
    threshold: float = Field(0.0, ge=0, le=1, description="quality mode: ratios below this earn 0.")


def quality_ratio(value: float, reference: float, direction: Direction) -> float:
    """value/reference for maximisation, reference/value for minimisation (1 when both are 0;
    inf when only the denominator is 0, which means the reference was beaten)."""
    numerator, denominator = (value, reference) if direction == "max" else (reference, value)
    if denominator == 0:
        return 1.0 if numerator == 0 else math.inf
    return numerator / denominator


def _reward(ratio: float, options: OptOptions) -> float:
    if options.mode == "binary":
        return 1.0
    clipped = min(ratio, 1.0)
    return 0.0 if clipped < options.threshold else clipped**options.power


def check_opt(response: str, reference: Any, options: OptOptions) -> Score:
    """Score one answer; ``invalid`` when unreadable, reward 0 with the reason when infeasible."""
    try:
        check = CHECKS[reference["task"]]
        instance, best, optimal = (
            reference["instance"],
            float(reference["value"]),
            bool(reference["optimal"]),
        )
    except (KeyError, TypeError, ValueError):
        return Score.bad_reference(
            "the reference must be {task, instance, value, optimal} of a known task"
        )
    base = {"reference": best, "optimal": float(optimal)}
    try:
        value = check.evaluate(instance, final_answer(response))
    except InvalidAnswer as exc:
        return Score.invalid(str(exc), {"feasible": 0.0}, base)
    except Infeasible as exc:
        infeasible = {"feasible": 0.0, "quality_ratio": 0.0}
        return Score.ok(0.0, infeasible, f"infeasible: {exc}", metrics={"objective": 0.0, **base})
    except (KeyError, TypeError, IndexError, ValueError, AttributeError) as exc:
        # Raised by an instance that does not fit its task (answers raise the two above).
        return Score.bad_reference(f"the {check.name} instance is malformed: {type(exc).__name__}")
    ratio = quality_ratio(value, best, check.direction)
    components = {"feasible": 1.0, "quality_ratio": min(ratio, 1e12)}
    detail = f"feasible; objective {value:g}, reference {best:g}"
    detail += " (proven optimal)" if optimal else " (best known)"
    extra: dict[str, Any] = {}
    if ratio > 1 + _ABOVE_REFERENCE:
        # Never silent: the answer beats the reference, so the reference was not optimal.
        extra["above_reference"] = True
        detail += "; the answer beats the reference, which therefore was not optimal"
    metrics = {"objective": value, **base}
    return Score.ok(_reward(ratio, options), components, detail, extra, metrics)


VERIFIER = Verifier(
    name="opt",
    version="2",  # 2 (issue 38): an earlier Answer: naming another value is several answers
    description="OPT-BENCH optimisation answers (ten NP-hard tasks): the text after the last "
    "'Answer:' is parsed, checked strictly for feasibility and valued; reward is the quality "
    "ratio against the reference (exact optimum where proven).",
    check=check_opt,
    options_model=OptOptions,
    # Scoring by task id may generate the task and prove its optimum first (see
    # environments/opt/references.py for the solve budget this covers).
    timeout_s=120.0,
    components=("feasible", "quality_ratio"),
    metrics=("objective", "reference", "optimal"),
    example=(
        "Items 0 and 1 fit together.\nAnswer: [0, 1]",
        {
            "task": "knapsack",
            "instance": {
                "capacity": 10,
                "items": {
                    "0": {"weight": 4, "value": 5},
                    "1": {"weight": 6, "value": 6},
                    "2": {"weight": 7, "value": 8},
                },
            },
            "value": 11,
            "optimal": True,
        },
    ),
)
