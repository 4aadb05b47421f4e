"""``evo/construct``: EvoEnv's generator role as an environment. The action is a submission (an
environment module); the reward is its admission against the current pool, with the calibration
as metrics. A dry run: nothing is stored (``POST /v1/evo/submissions`` adds to the pool), so
a step is a function of the state, the action and the pool."""

from __future__ import annotations

import random
import re
from dataclasses import asdict
from typing import Any

from environments.base import (
    EnvironmentInputError,
    EnvSpec,
    EpisodeFinished,
    ResetResult,
    StepResult,
)
from environments.evo.admission import Admission, admit
from environments.evo.contract import ContractError, check_source
from environments.evo.resources import EvoResources
from verifiers.numbers import Options
from verifiers.score import Score

THEMES = (
    "a dynamic program (easy to write as code, error-prone to carry out by hand)",
    "a graph search or shortest-path computation",
    "a planted search problem that is hard to solve but easy to verify",
    "a constraint-satisfaction puzzle with a verifiable solution",
    "a step-by-step simulation whose end state is the answer",
)
STAGES = ("L1", "L2", "L3", "L4", "L5")
CONTRACT = """Write one Python module (standard library only: math, itertools, collections, heapq,
random, re, json, functools, bisect, fractions, statistics, string, operator, typing,
dataclasses) that defines literal metadata
  NAME (lowercase identifier), DESCRIPTION (one sentence), DIFFICULTIES (2-10 distinct ints),
  ANSWER_FORMAT (showing the <answer>...</answer> tags)
and the functions
  generate(seed, difficulty) -> a JSON instance, using only random.Random(<str from the args>)
  prompt(instance) -> the task text, stating ANSWER_FORMAT
  reference(instance) -> a complete response that scores 1
  score(instance, response) -> a float in [0, 1], or None when no answer can be read.
It must show solve-verify asymmetry: easy as code, hard to do reliably in natural language."""


class ConstructOptions(Options):
    """Nothing selects an episode besides its seed (the theme)."""


def source_of(action: str) -> str:
    """The module in ``action``: the last fenced Python block, else the whole text."""
    blocks = re.findall(r"```(?:python|py)?\n(.*?)```", action, re.DOTALL)
    return blocks[-1] if blocks else action


def _metrics(admission: Admission) -> dict[str, float]:
    # How far the submission got: recorded beside the reward (admitted or not), not part of it.
    passed = sum(report.passed for report in admission.reports)
    rates = list(admission.pass_rates.values())
    metrics = {
        "stages_passed": passed / len(STAGES),
        "calibrated": 1.0 if rates else 0.0,
    }
    if rates:
        metrics["mean_pass_rate"] = sum(rates) / len(rates)
    return metrics


class Construct:
    """One step: submit an environment; 1 when admitted, 0 with the rejecting stage otherwise
    (admitted against the pool in ``resources``' store, under its settings)."""

    spec = EnvSpec(
        id="evo/construct",
        version="1",
        family="evo",
        description="EvoEnv's generator role: write an environment as code (generate, "
        "reference, score, prompt); the reward is its L1-L5 admission against the pool.",
        kind="multi_turn",
        action_format="A Python module to the environment-as-code contract, optionally in a "
        "```python fenced block.",
        observation_format="text",
        options_model=ConstructOptions,
        timeout_s=120.0,
        max_episode_steps=1,
    )

    def __init__(self, resources: EvoResources) -> None:
        self._resources = resources

    def reset(self, seed: int, options: Any) -> ResetResult:
        """The request: a theme and the contract."""
        del options
        theme = THEMES[seed % len(THEMES)]
        text = f"Design a new reasoning environment built around {theme}.\n\n{CONTRACT}"
        return ResetResult(text, {"seed": seed}, {"theme": theme})

    def step(self, state: Any, action: str) -> StepResult:
        """Admit the submitted module (dry run) and reward the outcome."""
        try:
            seed = int(state["seed"])
        except (KeyError, TypeError, ValueError) as exc:
            raise EnvironmentInputError(f"not an evo/construct state: {exc}") from None
        if state.get("done"):
            raise EpisodeFinished("this episode has ended; reset to start a new one")
        done = {"seed": seed, "done": True}
        source = source_of(action)
        try:
            check_source(source)
        except ContractError as exc:
            score = Score.invalid(f"L1: not an environment module: {exc}")
            return StepResult("", score, True, False, done, {"outcome": "rejected", "stage": "L1"})
        evo = self._resources
        admission = admit(source, evo.store.pool(), settings=evo.settings)
        info = {
            "outcome": admission.outcome,
            "stage": admission.stage,
            "reason": admission.reason,
            "reports": [asdict(report) for report in admission.reports],
        }
        if admission.outcome == "error":
            # Infrastructure: no verdict, the state does not move and the step can be retried.
            return StepResult("", Score.error(admission.reason), False, False, state, info)
        admitted = admission.outcome == "admitted"
        detail = "" if admitted else f"{admission.stage}: {admission.reason}"
        score = Score.ok(1.0 if admitted else 0.0, detail=detail, metrics=_metrics(admission))
        return StepResult("", score, True, False, done, info)

    def expert_action(self, state: Any) -> str:
        """The expert module for the state's seed, fenced."""
        return f"```python\n{expert_source(int(state['seed']))}```"


def expert_source(seed: int) -> str:
    """A fresh linear recurrence modulo a prime, its constants drawn from the seed."""
    rng = random.Random(f"evo/construct@1/{seed}")
    a, b, modulus = rng.randint(2, 97), rng.randint(2, 97), rng.choice((101, 103, 107, 109))
    return EXPERT.format(seed=seed, a=a, b=b, m=modulus)


EXPERT = '''"""A linear recurrence modulo a prime: a loop as code, long arithmetic by hand."""

import random
import re

NAME = "recurrence_{seed}"
DESCRIPTION = "The n-th term of x(k) = {a}*x(k-1) + {b}*x(k-2) mod {m}, from two start values."
DIFFICULTIES = [1, 2, 3]
ANSWER_FORMAT = "<answer>an integer</answer>"


def generate(seed, difficulty):
    rng = random.Random("recurrence_{seed}/" + str(seed) + "/" + str(difficulty))
    return {{"x0": rng.randint(0, {m} - 1), "x1": rng.randint(0, {m} - 1),
             "n": rng.randint(5, 10) * difficulty}}


def prompt(instance):
    return ("Let x(0) = " + str(instance["x0"]) + ", x(1) = " + str(instance["x1"]) +
            " and x(k) = ({a}*x(k-1) + {b}*x(k-2)) mod {m}. What is x(" + str(instance["n"]) +
            ")? Reply with " + ANSWER_FORMAT + ".")


def _term(instance):
    before, current = instance["x0"], instance["x1"]
    for _ in range(instance["n"] - 1):
        before, current = current, ({a} * current + {b} * before) % {m}
    return current


def reference(instance):
    return "<answer>" + str(_term(instance)) + "</answer>"


def score(instance, response):
    found = re.findall(r"<answer>\\s*(-?\\d+)\\s*</answer>", response)
    if not found:
        return None
    return 1.0 if int(found[-1]) == _term(instance) else 0.0
'''
