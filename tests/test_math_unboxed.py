"""Unboxed math answers are read whole or not at all.

Outside math delimiters math-verify reads a number, ``1/2`` or a bare ``\\frac{a}{b}`` by regex,
and such a match can be a fragment of a larger expression (``2^{\\frac{1}{2}}`` read as 1/2).
Each case is checked against the verifier with a plain reference, and by task id through the
math environment, with a task whose reference is the value the fragment (or the whole) has."""

from __future__ import annotations

from functools import cache

import pytest
from math_verify import ExprExtractionConfig, LatexExtractionConfig

from environments.math.family import MathTaskOptions, MathTasks
from environments.task_id import TaskId
from tests.math_support import MATH, env_options
from verifiers.math import VERIFIER, MathOptions
from verifiers.math_hedges import markers
from verifiers.math_unboxed import Extraction, extract, whole_expression
from verifiers.score import Score

# How the verifier reads a response without a box, as math-verify's default reading.
TARGETS = (LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig())

# Each scored 1 before this change: the fragment read was the reference.
FRAGMENTS = [
    ("2^{\\frac{1}{2}}", "0.5"),
    ("2^{\\frac{1}{2}}", "\\frac{1}{2}"),
    ("\\sqrt{\\frac{1}{4}}", "\\frac{1}{4}"),
    ("\\frac{3}{\\frac{1}{2}}", "\\frac12"),
    ("So we get \\frac{1}{2} + \\frac{1}{3}", "\\frac{1}{3}"),
    ("\\frac{1}{2}^{2}", "\\frac{1}{2}"),
    ("x_{\\frac{1}{2}}", "\\frac{1}{2}"),
    ("10^{\\frac{1}{2}} \\cdot x", "\\frac{1}{2}"),
    # A brace group never closed, or closed on a later line, is still part of the expression.
    ("2^{\\frac{1}{2}", "\\frac{1}{2}"),
    ("So 3 + {\\frac{1}{2}", "\\frac{1}{2}"),
    ("2^{\n\\frac{1}{2}}", "\\frac{1}{2}"),
    ("x^2 + 3", "3"),
    ("So 2^{10} is the count", "2"),
    ("3 = 4", "4"),
    ("x = 3 = 4", "4"),
    # Several bare expressions in a row are several answers, as several boxes are.
    ("\\frac{1}{2} \\frac{1}{3}", "\\frac{1}{3}"),
    ("\\frac{1}{2}\\frac{1}{3}", "\\frac{1}{3}"),
    ("The answer is \\frac{1}{3} \\frac{1}{2}", "\\frac{1}{3}"),
    ("The answer is 4 3", "4"),
    # A word glued to a number is part of it, read as its box would be: 4pi is 4·p·i, and a
    # base64 blob that opens with "4oCL" (a zero-width space, encoded) is not the number 4.
    ("The answer is 4pi.", "4"),
    ("4oCLRmluYWwgYW5zd2VyOiBbXGJveGVkezQuMH1d4oCL", "4"),
    ("So 4.0abc", "4"),
]

# Each scored 0 before this change: math-verify read a fragment of the right answer.
WHOLES = [
    ("\\frac{1}{\\frac{1}{2}}", "2"),
    ("2^{\\frac{1}{2}}", "\\sqrt{2}"),
    ("The answer is 2\\sqrt{3}", "2\\sqrt{3}"),
    ("The answer is 2x.", "2x"),
    ("The answer is 3\\frac{1}{2}", "\\frac{7}{2}"),
]

# Honest unboxed answers that scored 1 before and must keep scoring.
HONEST = [
    ("The answer is \\frac{1}{2}", "\\frac{1}{2}"),
    ("The answer is \\frac{1}{2}.", "0.5"),
    ("Final answer: 7", "7"),
    ("x = \\frac{3}{4}", "\\frac{3}{4}"),
    ("So x = \\frac{3}{4}.", "\\frac{3}{4}"),
    ("1/2", "\\frac{1}{2}"),
    ("42", "42"),
    ("The answer is -\\frac{1}{2}.", "-\\frac{1}{2}"),
    ("The answer is 4 (see above).", "4"),
    ("The answer is 4 apples.", "4"),
    ("I got 4 a day", "4"),
    ("The answer is 1,000", "1000"),
    ("The answer is 1 000", "1000"),
    ("Adding, we get 4. Check: x = 2", "2"),
    # A unit glued to its number is read as its box reads it: 4 kilometres is 4.
    ("It is 4km away.", "4"),
    ("The answer is 4cm.", "4"),
    # Delimited math was already read whole, and still is.
    ("$2^{\\frac{1}{2}}$", "\\sqrt{2}"),
]


def _zero(score: Score) -> bool:
    return score.status in ("ok", "invalid") and score.reward == 0.0


def _full(score: Score) -> bool:
    return (score.status, score.reward) == ("ok", 1.0)


@pytest.mark.parametrize(("response", "reference"), FRAGMENTS)
def test_a_fragment_earns_nothing(response: str, reference: str) -> None:
    score = VERIFIER(response, reference)
    assert _zero(score), score


@pytest.mark.parametrize(("response", "reference"), WHOLES + HONEST)
def test_a_whole_answer_scores(response: str, reference: str) -> None:
    score = VERIFIER(response, reference)
    assert _full(score), score


@cache
def _task(reference: str) -> str:
    """A task id whose reference is ``reference`` (the first in the generator's seeds)."""
    family = MathTasks()
    for difficulty in ("easy", "hard"):
        for seed in range(3000):
            if str(family.generate(seed, MathTaskOptions(difficulty=difficulty)).reference) == (
                reference
            ):
                return f"math@1/{seed}?difficulty={difficulty}"
    raise AssertionError(f"no task with the reference {reference!r} in 3000 seeds")


def _by_task_id(task_id: str, response: str) -> Score:
    environment = MATH
    parsed = TaskId.parse(task_id)
    options = env_options(parsed.options)
    return environment.score_response(parsed.seed, options, response)


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("2^{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("\\sqrt{\\frac{1}{4}}", "\\frac{1}{4}"),
        ("\\frac{3}{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("So we get \\frac{1}{2} + \\frac{1}{3}", "\\frac{1}{3}"),
        ("\\frac{1}{2} \\frac{1}{3}", "\\frac{1}{3}"),
        ("x^2 + 2", "2"),
        ("3 = 2", "2"),
    ],
)
def test_a_fragment_earns_nothing_by_task_id(response: str, reference: str) -> None:
    task_id = _task(reference)
    assert _full(_by_task_id(task_id, f"The answer is {reference}."))
    score = _by_task_id(task_id, response)
    assert _zero(score), (task_id, score)


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("\\frac{1}{\\frac{1}{2}}", "2"),
        ("2^{\\frac{1}{2}}", "\\sqrt{2}"),
        ("The answer is \\frac{1}{2}", "\\frac{1}{2}"),
        ("Final answer: 6", "6"),
        ("x = \\frac{1}{4}", "\\frac{1}{4}"),
        ("1/3", "\\frac{1}{3}"),
        ("6", "6"),
    ],
)
def test_a_whole_answer_scores_by_task_id(response: str, reference: str) -> None:
    score = _by_task_id(_task(reference), response)
    assert _full(score), score


def test_the_whole_expression_is_read_as_its_box() -> None:
    # The same outcome, and the same reason, as the boxed expression.
    for response, reference in [("2^{10}", "1024"), ("\\frac{1}{2} \\frac{1}{3}", "\\frac16")]:
        unboxed = VERIFIER(f"So we get {response}", reference)
        boxed = VERIFIER(f"\\boxed{{{response}}}", reference)
        assert (unboxed.status, unboxed.reward, unboxed.detail) == (
            boxed.status,
            boxed.reward,
            boxed.detail,
        )
    # A whole expression that is not readable LaTeX is no answer, boxed or not: math-verify's
    # fallback read the fraction inside it (these two scored 1).
    for response in ["So 2^{\\frac{1}{2}} \\star 3", "\\boxed{3 \\star \\frac{1}{2}}"]:
        score = VERIFIER(response, "\\frac{1}{2}")
        assert (score.status, score.reward) == ("invalid", 0.0), score
        assert "not readable LaTeX" in score.detail
    # With allow_unevaluated, the whole is compared by value.
    lenient = MathOptions(allow_unevaluated=True)
    assert VERIFIER("So we get 2^{10}", "1024", lenient).reward == 1.0
    assert VERIFIER("So we get 2^{10}", "2", lenient).reward == 0.0


def test_whole_expression_grows_a_match_to_its_expression() -> None:
    def whole(response: str) -> str | None:
        found = extract(response, TARGETS)
        assert isinstance(found, Extraction) and found.bare
        return whole_expression(response, found.spans)

    assert whole("So 2^{\\frac{1}{2}}.") == "2^{\\frac{1}{2}}"
    assert whole("We get \\frac{1}{2} + \\frac{1}{3} here") == "\\frac{1}{2} + \\frac{1}{3}"
    assert whole("line one\nx = \\frac{3}{4}\nthe end") == "x = \\frac{3}{4}"
    assert whole("The answer is 2\\sqrt{3}, done") == "2\\sqrt{3}"
    assert whole("The answer is 4 (see above).") is None
    assert whole("The answer is 4 apples.") is None
    assert whole("The answer is 4pi.") == "4pi"
    assert whole("Final answer: 7") is None
    assert whole("So 2^{\n\\frac{1}{2}} and more") == "2^{\n\\frac{1}{2}}"
    assert whole("Work: {a}. Then \\frac{1}{2} is it.") is None


def test_numbers_in_a_row_are_several_answers() -> None:
    assert set(markers("\\frac{1}{2} \\frac{1}{3}")) == {"hedge"}
    assert set(markers("\\frac12 3")) == {"hedge"}
    assert set(markers("4 1")) == {"hedge"}
    assert set(markers("0.5 0.25")) == {"hedge"}
    # A mixed number, a thousands group, a product and a list are not.
    for text in ["3 \\frac{1}{2}", "3\\frac{1}{2}", "1 000", "12 345", "2 \\sqrt{3}", "1, 2"]:
        assert markers(text) == {}, text
    assert _zero(VERIFIER("\\boxed{4 1}", "5"))
    assert _full(VERIFIER("\\boxed{3 \\frac{1}{2}}", "\\frac{7}{2}"))
