"""The math family's search space (``environments/math/search.py``): its independent judge, its
moves, and the search itself. The search finds restatements and hedges in bare math-verify (the
control: the space is not vacuous) and nothing paid or dodged in the math verifier."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
import sympy
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

from environments.math import judge
from environments.math.family import MathTasks
from environments.math.search import EQUIVALENT, HEDGE, RESTATE, SEARCH, SLOW, reference_text
from environments.search import Mutant, Probe, SearchSpace
from environments.task_id import TaskId
from envserver import redteam
from envserver.config import Settings
from envserver.registry import Registry, discover
from envserver.search import search
from tests.math_support import env_options
from verifiers.score import Score

TRIES = 400
"""Mutants per search: every class several times over, in about a minute on a loaded machine."""


@pytest.mark.parametrize(
    ("response", "reference", "deserves"),
    [
        ("\\boxed{72}", "72", 1.0),
        ("So \\boxed{\\dfrac{144}{2}}.", "72", 1.0),
        ("\\boxed{x = 72}", "72", 1.0),
        ("\\boxed{72.0}", "72", 1.0),
        ("\\boxed{0.5}", "\\frac{1}{2}", 1.0),
        ("\\boxed{2^{-1}}", "\\frac{1}{2}", 1.0),
        ("\\boxed{\\frac{2 + \\sqrt{14}}{2}}", "1 + \\frac{\\sqrt{14}}{2}", 1.0),
        ("\\boxed{x = 2, y = 5}", "(2, 5)", 1.0),
        ("\\boxed{2, -7}", "\\left\\{-7, 2\\right\\}", 1.0),
        ("\\boxed{73}", "72", 0.0),
        ("\\boxed{\\frac{9(3y+5y)}{y}}", "72", 0.0),
        ("\\boxed{72 + 0y}", "72", 0.0),
        ("\\boxed{3 \\cdot 24}", "72", 0.0),
        ("\\boxed{\\frac{72\\pi}{\\pi}}", "72", 0.0),
        ("\\boxed{72(\\sqrt{2}+1)(\\sqrt{2}-1)}", "72", 0.0),
        ("\\boxed{3 + 4 + \\sqrt{2}}", "7 + \\sqrt{2}", 0.0),
        ("\\boxed{1 \\cdot 2\\sqrt{3}}", "2\\sqrt{3}", 0.0),
        ("\\boxed{72}\\boxed{73}", "72", 0.0),
        ("\\boxed{2, -7, 5}", "\\left\\{-7, 2\\right\\}", 0.0),
        ("\\boxed{y = 5, x = 2}", "(2, 5)", 0.0),  # names are set aside: in order, (5, 2)
        # What it cannot read, it does not judge.
        ("The answer is 72.", "72", None),
        ("\\boxed{\\sin(1)}", "72", None),
        ("\\boxed{25\\%}", "25", None),
        ("\\boxed{3\\frac{1}{2}}", "\\frac{7}{2}", None),
        ("\\boxed{" + "(" * 400 + "72" + ")" * 400 + "}", "72", None),  # its reader recurses
        ("\\boxed{\\sqrt{\\{4\\}}}", "2", None),  # sympy has no root of a set
        ("\\boxed{" + "-" * 2000 + "73}", "73", 1.0),  # an even count of signs, read in a loop
        ("\\boxed{" + "-" * 2001 + "73}", "73", 0.0),
    ],
)
def test_the_judge(response: str, reference: str, deserves: float | None) -> None:
    read = judge.reading(reference)
    assert read is not None
    assert judge.deserves(response, read) == deserves


def test_the_moves_settle_what_they_make() -> None:
    rng = random.Random(3)
    task_id = "math@1/4?difficulty=easy"
    seed = Mutant(Probe(response="\\boxed{72}", task_id=task_id), 1.0)
    assert reference_text(seed.probe) == "72"
    made = {move.name: list(move(seed, rng)) for move in (RESTATE, HEDGE, SLOW, EQUIVALENT)}
    assert all(made.values()), made
    assert all(m.deserves in (0.0, None) for m in made["restate"] + made["hedge"] + made["slow"])
    assert all(m.deserves == 1.0 for m in made["equivalent"])
    reference = judge.of_value(sympy.Integer(72))
    # Where the judge can read a settled mutant, it agrees with the move.
    for mutant in made["restate"] + made["hedge"] + made["equivalent"]:
        verdict = judge.deserves(mutant.probe.response, reference)
        if verdict is not None and mutant.deserves is not None:
            assert verdict == mutant.deserves, mutant.probe.response


class BareMathVerify:
    """A target that scores with math-verify alone, as the verifier did before its rules: the
    control that shows the math moves find what they look for."""

    def disabled(self) -> dict[str, str]:
        return {}

    def unavailable(self, error: Exception) -> str | None:
        del error
        return None

    def score_task(self, task_id: str, response: str) -> Score:
        parsed = TaskId.parse(task_id)
        task = MathTasks().generate(parsed.seed, env_options(parsed.options))
        return self.score("math", task.reference, {}, response)

    def score(self, verifier: str, reference: Any, options: dict[str, Any], response: str) -> Score:
        del verifier, options
        gold = parse(f"${reference}$", (LatexExtractionConfig(), ExprExtractionConfig()))
        answer = parse(response, (LatexExtractionConfig(boxed_match_priority=0),))
        right = bool(answer) and verify(gold, answer, timeout_seconds=3)
        return Score.ok(1.0 if right else 0.0)

    def reset(self, env: str, seed: int, options: dict[str, Any]) -> Any:
        raise NotImplementedError("math is single-turn")

    def step(self, env: str, handle: Any, action: str) -> tuple[Any, Score, bool]:
        raise NotImplementedError("math is single-turn")


def test_the_search_finds_restatements_and_hedges_in_bare_math_verify() -> None:
    space = SearchSpace(SEARCH.seeds, (RESTATE, HEDGE), SEARCH.deserves)
    report = search("math", space, BareMathVerify(), budget_s=300, seed=11, max_tries=TRIES)
    assert report.paid["restate"] > 0 and report.paid["hedge"] > 0, report.as_json()


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with discover().opened(Settings(data_dir=tmp_path_factory.mktemp("data"))) as opened:
        yield opened


def test_the_search_finds_nothing_paid_or_dodged_in_the_math_verifier(registry: Registry) -> None:
    target = redteam.InProcess(registry)
    limits = {name: check.timeout_s for name, check in registry.verifiers.items()}
    report = search("math", SEARCH, target, budget_s=600, seed=5, max_tries=TRIES,
                    time_limit_s=limits)  # fmt: skip
    assert report.tried.total() >= TRIES
    assert not report.paid and not report.dodged, report.as_json()["examples"]
    assert not report.unscored, report.errors
