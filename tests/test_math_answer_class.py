"""An answer to a value is in the reference's answer class (issue 38, defect 1).

math-verify evaluates what it parses, so a restatement whose evaluation gives the reference
(a dummy symbol that cancels, an integral or sum equal to the value, an equal form of another
class) was "equivalent". Each case here earned 1.0 before the rule, in process, by task id and
through a live server (``/v1/verify``, a step and ``/openrlhf``); now it earns nothing, while
the legitimate forms of every class keep scoring."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import httpx
import pytest
import sympy

from environments.math.family import MathTaskOptions, MathTasks
from environments.task_id import TaskId
from tests.math_support import MATH, env_options
from verifiers.math import VERIFIER, MathOptions
from verifiers.math_class import AnswerClass, notation, values
from verifiers.score import Score

# The outside audit's first example: "Compute 9 x (3 + 5)", restated with y, which cancels.
AUDIT_TASK = "math@1/4?difficulty=easy"
AUDIT_ANSWER = "\\boxed{\\frac{9(3y+5y)}{y}}"


def _zero(score: Score) -> bool:
    return score.status in ("ok", "invalid") and score.reward == 0.0


def _full(score: Score) -> bool:
    return (score.status, score.reward) == ("ok", 1.0)


def _by_task_id(task_id: str, response: str) -> Score:
    parsed = TaskId.parse(task_id)
    options = env_options(parsed.options)
    return MATH.score_response(parsed.seed, options, response)


@cache
def _task_of_kind(kind: str, difficulty: str) -> tuple[str, str, str]:
    """The first task id of ``kind``: (task id, reference, the statement's first formula)."""
    family = MathTasks()
    for seed in range(500):
        task = family.generate(seed, MathTaskOptions.model_validate({"difficulty": difficulty}))
        if task.metadata["kind"] == kind:
            prompt = str(task.prompt)
            formula = prompt.split("$")[1] if "$" in prompt else ""
            return f"math@1/{seed}?difficulty={difficulty}", str(task.reference), formula
    raise AssertionError(f"no {kind} task in 500 seeds")


KINDS = [
    ("integer_arithmetic", "easy"),
    ("percentage", "easy"),
    ("mean", "easy"),
    ("gcd_lcm", "medium"),
    ("linear_equation", "medium"),
    ("counting", "hard"),
    ("definite_integral", "hard"),
    ("derivative_at_point", "hard"),
    ("quadratic_equation", "hard"),
]
RESTATEMENTS = [
    "\\frac{{({r}) y}}{{y}}",
    "({r}) \\cdot \\frac{{y}}{{y}}",
    "{r} + 0 y",
    "x = \\frac{{({r})(t + 1)}}{{t + 1}}",
    "\\int_{{0}}^{{1}} ({r}) \\, dx",
    "\\sum_{{k=1}}^{{1}} ({r})",
    "\\lim_{{n \\to \\infty}} \\left({r} + \\frac{{1}}{{n}}\\right)",
    "({r})(\\cos^{{2}} 1 + \\sin^{{2}} 1)",
    "\\frac{{({r}) \\pi}}{{\\pi}}",
]


def test_the_audits_restatement_earns_nothing() -> None:
    assert _full(_by_task_id(AUDIT_TASK, "\\boxed{72}"))
    score = _by_task_id(AUDIT_TASK, AUDIT_ANSWER)
    assert (score.status, score.reward) == ("invalid", 0.0), score
    assert "symbol 'y'" in score.detail


@pytest.mark.parametrize(("kind", "difficulty"), KINDS)
@pytest.mark.parametrize("form", RESTATEMENTS)
def test_restatements_earn_nothing_by_task_id(kind: str, difficulty: str, form: str) -> None:
    task_id, reference, _ = _task_of_kind(kind, difficulty)
    assert _full(_by_task_id(task_id, f"\\boxed{{{reference}}}"))
    score = _by_task_id(task_id, f"\\boxed{{{form.format(r=reference)}}}")
    assert _zero(score), (task_id, score)


@pytest.mark.parametrize(("kind", "difficulty"), [k for k in KINDS if k[0] != "counting"][:-1])
def test_the_problem_restated_with_a_dummy_symbol_earns_nothing(kind: str, difficulty: str) -> None:
    # The statement's own formula times y/y (an integral on the calculus task): evaluating it
    # solves the problem.
    task_id, _, formula = _task_of_kind(kind, difficulty)
    score = _by_task_id(task_id, f"\\boxed{{\\left({formula}\\right) \\cdot \\frac{{y}}{{y}}}}")
    assert _zero(score), (task_id, formula, score)


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        # A final value in any form of the reference's class keeps scoring.
        ("x = 72", "72"),
        ("f(3) = 72", "72"),
        ("\\frac{144}{2}", "72"),
        ("72.0", "72"),
        ("2^{-1}", "\\frac{1}{2}"),
        ("-3 \\cdot 4^{-1}", "- \\frac{3}{4}"),
        ("\\frac{2 + \\sqrt{14}}{2}", "1 + \\frac{\\sqrt{14}}{2}"),
        ("2 \\cdot \\frac{\\sqrt{2}}{3}", "\\frac{2\\sqrt{2}}{3}"),
        ("\\frac{\\sqrt{3}}{2} \\cdot 4", "2\\sqrt{3}"),
        ("x = 2, y = 5", "(2, 5)"),
        ("(x, y) = (2, 5)", "(2, 5)"),
        ("x_1 = -7, x_2 = 2", "\\left\\{-7, 2\\right\\}"),
        ("(-\\infty, 4]", "x \\le 4"),
        ("y - 2x = 1", "y = 2x + 1"),
        ("(x + 1)^{2}", "x^{2} + 2x + 1"),
        ("\\frac{\\pi}{2}", "\\pi/2"),
        ("\\mathrm{72}", "72"),
        # A reference written with an operator admits it.
        ("\\int_{0}^{1} x \\, dx", "\\int_0^1 x\\,dx"),
        ("\\sin(1)", "\\sin(1)"),
    ],
)
def test_final_values_in_the_references_class_keep_scoring(answer: str, reference: str) -> None:
    score = VERIFIER(f"\\boxed{{{answer}}}", reference)
    assert _full(score), score


@pytest.mark.parametrize(
    ("answer", "reference", "why"),
    [
        ("(72)(\\sqrt{2}+1)(\\sqrt{2}-1)", "72", "root"),
        ("\\frac{72 e}{e}", "72", "E"),
        ("72 + i - i", "72", "symbol 'i'"),
        ("\\frac{d}{dx}(72 x)", "72", "symbol 'x'"),
        ("\\int_{0}^{1} 72 \\, dx", "72", "Integral"),
        ("\\prod_{k=1}^{1} 72", "72", "Product"),
        ("3 + 4 + \\sqrt{2}", "7 + \\sqrt{2}", "arithmetic"),
        ("1 \\cdot 2\\sqrt{3}", "2\\sqrt{3}", "arithmetic"),
        # A whole number before an evaluated value is read as a mixed number, their sum.
        ("\\frac{2(2)}{2}", "2", "mixed number"),
        ("\\frac{2({2})}{2}", "2", "mixed number"),  # found by a search: read as 2·2/2
        ("2(({2}))", "4", "mixed number"),
        ("71 e^{0}", "72", "mixed number"),
        ("70(2)", "72", "mixed number"),
    ],
)
def test_equal_values_of_another_class_are_not_final(answer: str, reference: str, why: str) -> None:
    score = VERIFIER(f"\\boxed{{{answer}}}", reference)
    assert (score.status, score.reward) == ("invalid", 0.0), score
    assert why in score.detail


def test_a_symbol_is_never_lifted_and_calculus_only_by_the_reference() -> None:
    lenient = MathOptions(allow_unevaluated=True)
    # allow_unevaluated accepts arithmetic on numbers, functions of numbers and constants...
    for answer in [
        "3 + 4 \\cdot 5 + 49",
        "\\frac{72 \\pi}{\\pi}",
        "(72)(\\cos^{2} 1 + \\sin^{2} 1)",
    ]:
        assert _full(VERIFIER(f"\\boxed{{{answer}}}", "72", lenient)), answer
    # ... never a dummy symbol, and calculus only where the reference holds it.
    for answer in ["\\frac{72y}{y}", "72 + 0y", "\\int_{0}^{1} 72 \\, dx"]:
        assert _zero(VERIFIER(f"\\boxed{{{answer}}}", "72", lenient)), answer


def test_the_answer_class_of_a_parse() -> None:
    x, y = sympy.symbols("x y")
    named = sympy.Eq(x, sympy.Integer(4), evaluate=False)
    assert list(values(named)) == [sympy.Integer(4)]
    assert list(values(sympy.FiniteSet(named, sympy.Eq(y, 2, evaluate=False)))) == [4, 2]
    # A numeral read as a symbol (\mathrm{72}) is a number; a root and a constant are operators.
    assert AnswerClass.of([sympy.Symbol("72")], "").symbols == frozenset()
    root = AnswerClass.of([sympy.Pow(2, sympy.Rational(1, 2), evaluate=False)], "")
    assert root.operators == {"root"}
    assert AnswerClass.of([sympy.pi], "").operators == {"pi"}
    # Notation evaluated while it is read shows only in the text.
    assert notation("\\binom{10}{3} + \\Gamma(5)") == {"binomial", "gamma"}
    assert notation("2(3)") == {"juxtaposition"}
    assert notation("2(3 + \\sqrt{2})") == frozenset()
    reference = AnswerClass.of([sympy.Integer(72)], "72", names=True)
    assert reference.refuses(AnswerClass.of([x], "x"), evaluated=False) is not None
    assert reference.refuses(AnswerClass.of([sympy.Integer(72)], "72"), evaluated=True) is None


# --- through a live server --------------------------------------------------------------------


@pytest.fixture(scope="module")
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=60) as client:
        yield client


def test_a_restatement_earns_nothing_over_http(http: httpx.Client) -> None:
    items = [
        {"id": "right", "response": "\\boxed{72}", "task_id": AUDIT_TASK},
        {"id": "restated", "response": AUDIT_ANSWER, "task_id": AUDIT_TASK},
    ]
    results = http.post("/v1/verify", json={"items": items}).json()["results"]
    assert [(r["status"], r["reward"]) for r in results] == [("ok", 1.0), ("invalid", 0.0)]
    reset = http.post("/v1/envs/math/reset", json={"task_id": AUDIT_TASK}).json()
    step = http.post("/v1/envs/math/step", json={"state": reset["state"], "action": AUDIT_ANSWER})
    assert step.status_code == 200, step.text
    assert (step.json()["status"], step.json()["reward"]) == ("invalid", 0.0)
    rewards = http.post(
        "/openrlhf/math/get_reward",
        json={"query": ["\\boxed{72}", AUDIT_ANSWER], "labels": ["72", "72"]},
    ).json()["rewards"]
    assert rewards == [1.0, 0.0]
