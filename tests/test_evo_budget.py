"""An admission spends at most its CPU budget in the sandbox (``ENVSERVER_EVO_ADMISSION_CPU_S``):
a submission whose ``score`` stays under its per-call limit but costs a lot is refused at the
stage it reached, with the reason, instead of spending about 4,000 times that cost (the search
scores about 2,800 answers). The same environment scored cheaply is admitted under the same
budget."""

from __future__ import annotations

import re

import pytest

from environments.evo.admission import admit
from environments.evo.construct import expert_source
from environments.evo.program import (
    CALL_CPU_S,
    ProgramFailure,
    cpu_budget,
    run_calls,
    score_call,
    task_call,
)
from tests.evo_support import SETTINGS, burning

BUDGET_S = 12.0
SLOW = burning(expert_source(41), 2_000_000)


def test_a_scorer_costly_under_its_call_limit_is_refused_within_the_budget() -> None:
    (task,) = run_calls(SLOW, [task_call(1, 1)])
    (scored,) = run_calls(SLOW, [score_call(task.value["instance"], task.value["reference"])])
    # Legal call by call: well under the per-call limit, and it pays its reference.
    assert scored.value == 1.0 and 0.05 < scored.cpu_s < CALL_CPU_S / 4, scored
    settings = SETTINGS.model_copy(update={"admission_cpu_s": BUDGET_S})
    admission = admit(SLOW, [], settings=settings)
    assert (admission.outcome, admission.stage) == ("rejected", "L2"), admission.reports
    assert admission.reports[-1].name == "cpu budget"
    assert "over the admission's CPU budget" in admission.reason
    assert "ENVSERVER_EVO_ADMISSION_CPU_S" in admission.reason
    assert re.search(r"score 0\.\d\d s \(the median of \d+", admission.reason)
    # Spent: the budget, give or take the interpreters' starts and a tenth of a second a run
    # (L2's batch has 17 runs), against about 75 s for L2's 960 scores alone at this cost.
    assert BUDGET_S * 0.8 < admission.cpu_s < BUDGET_S + 17 * 0.1, admission.cpu_s


def test_the_same_environment_scored_cheaply_is_admitted_under_that_budget() -> None:
    settings = SETTINGS.model_copy(update={"admission_cpu_s": BUDGET_S})
    admission = admit(expert_source(41), [], settings=settings)
    assert admission.outcome == "admitted", admission.reports
    assert 0 < admission.cpu_s < BUDGET_S


# It catches the driver's CallTimeout (a BaseException) and goes on.
MARKER = "def score(instance, response):\n"
STUBBORN = expert_source(42).replace(
    MARKER,
    MARKER + "    while True:\n        try:\n            sum(i * i for i in range(10**7))\n"
    "        except BaseException:\n            pass\n",
    1,
)


def test_a_scorer_that_swallows_the_drivers_timeout_is_stopped_by_the_runs_backstop() -> None:
    # Each run's own CPU limit, its share and a second beyond (counted in whole seconds), stops
    # it. Without a budget each of L2's 17 runs would burn its full limit, 130 s.
    budget_s = 6.0
    settings = SETTINGS.model_copy(update={"admission_cpu_s": budget_s})
    admission = admit(STUBBORN, [], settings=settings)
    assert (admission.outcome, admission.stage) == ("rejected", "L2"), admission.reports
    assert "over the admission's CPU budget" in admission.reason
    assert admission.cpu_s < budget_s + 17 * 3.0, admission.cpu_s


def test_a_run_stopped_at_its_own_limit_within_the_budget_is_a_timeout_not_over_budget() -> None:
    # Its share of a roomy budget is more than its own limit: its own limit stopped it, and the
    # code is refused for that (a timeout at its stage), not for the budget it did not spend.
    (task,) = run_calls(STUBBORN, [task_call(1, 1)])
    with cpu_budget(1_000.0), pytest.raises(ProgramFailure) as failed:
        run_calls(STUBBORN, [score_call(task.value["instance"], "3")], call_cpu_s=0.5)
    assert failed.value.status == "timeout", failed.value
