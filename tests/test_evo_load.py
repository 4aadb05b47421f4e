"""Admission is budgeted in CPU time per call, so a machine's load does not change the verdict:
a heavy but legal submission (its oracle searches every subset, a few tenths of a CPU second a
task) is admitted while busy loops take every core; one run stopped by the wall clock before it
spent its CPU is the machine's fault (``SandboxFailure``), never a rejection."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from environments.evo.admission import admit
from environments.evo.program import (
    CALL_CPU_S,
    SandboxFailure,
    _results,
    _Run,
    run_calls,
    run_limits,
    task_call,
)
from sandbox.model import RunRecord
from tests.evo_support import SETTINGS

HEAVY = '''"""Planted subset-sum whose oracle tries every subset: heavy but legal."""

import random
import re

NAME = "exhaustive_subset_sum"
DESCRIPTION = "Numbers (by position) that sum exactly to the target; the oracle tries all."
DIFFICULTIES = [1, 2]
ANSWER_FORMAT = "<answer>1-based positions separated by spaces</answer>"


def generate(seed, difficulty):
    rng = random.Random(f"{NAME}/{seed}/{difficulty}")
    count = 15 + difficulty
    numbers = [rng.randint(10, 999) for _ in range(count)]
    planted = sorted(rng.sample(range(count), count // 3))
    return {"numbers": numbers, "target": sum(numbers[i] for i in planted)}


def prompt(instance):
    listing = " ".join(f"{i + 1}:{n}" for i, n in enumerate(instance["numbers"]))
    return (
        f"Numbers (position:value): {listing}\\nChoose distinct positions whose values sum to "
        f"exactly {instance['target']}. Reply with {ANSWER_FORMAT}."
    )


def _fewest(numbers, target):
    best = None
    for mask in range(1, 1 << len(numbers)):
        chosen = [i for i in range(len(numbers)) if mask >> i & 1]
        if sum(numbers[i] for i in chosen) == target and (best is None or len(chosen) < len(best)):
            best = chosen
    return best


def reference(instance):
    chosen = _fewest(instance["numbers"], instance["target"])
    return f"<answer>{' '.join(str(i + 1) for i in chosen)}</answer>"


def score(instance, response):
    found = re.findall(r"<answer>(.*?)</answer>", response, re.DOTALL)
    if not found:
        return None
    tokens = found[-1].split()
    if not tokens or not all(token.isdigit() for token in tokens):
        return None
    chosen = [int(token) for token in tokens]
    numbers = instance["numbers"]
    if len(set(chosen)) != len(chosen) or not all(1 <= i <= len(numbers) for i in chosen):
        return 0.0
    return 1.0 if sum(numbers[i - 1] for i in chosen) == instance["target"] else 0.0
'''


@pytest.fixture
def busy_machine() -> Iterator[None]:
    """Busy loops on every core, twice over, for the test's length only."""
    loops = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(2 * (os.cpu_count() or 1))
    ]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def test_a_heavy_but_legal_submission_is_admitted_on_a_busy_machine(busy_machine: None) -> None:
    (hardest,) = run_calls(HEAVY, [task_call(0, 2)])
    assert hardest.error is None and 0.05 < hardest.cpu_s < CALL_CPU_S / 2, hardest
    admission = admit(HEAVY, [], settings=SETTINGS)
    assert admission.outcome == "admitted", admission.reports


def test_a_run_the_wall_clock_stopped_before_its_cpu_budget_is_infrastructure() -> None:
    calls = [task_call(0, 1)] * 3
    budget = run_limits(len(calls))
    assert budget.cpu_s == 2.0 + 3 * CALL_CPU_S and budget.wall_s > budget.cpu_s
    slowed = RunRecord(status="timeout", wall_s=budget.wall_s, cpu_s=1.0)
    with pytest.raises(SandboxFailure, match="too busy"):
        _results(slowed, _Run(calls, CALL_CPU_S, budget))
    spun = RunRecord(status="timeout", wall_s=9.0, cpu_s=budget.cpu_s)
    with pytest.raises(Exception, match="timeout") as raised:
        _results(spun, _Run(calls, CALL_CPU_S, budget))
    assert not isinstance(raised.value, SandboxFailure)
