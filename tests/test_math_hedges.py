"""Hedged and approximate math answers (issue 25 item 3): an answer that offers alternatives
scores 0, and a rounded decimal of an exact reference needs ``accept_decimal_approximations``.

Each hedge is checked twice: against the verifier with a plain reference, and by task id
through the math environment, where it offers the task's own answer among its alternatives."""

from __future__ import annotations

from functools import cache

import pytest

from environments.math.family import MathTaskOptions, MathTasks
from environments.task_id import TaskId
from tests.math_support import MATH, env_options
from verifiers.math import VERIFIER, MathOptions
from verifiers.math_hedges import answer_sentence, is_single_value, markers
from verifiers.score import Score

# ANSWER is the reference, OTHER a different value. Each of these scored 1 before this change.
HEDGES = [
    "\\boxed{OTHER \\lor ANSWER}",
    "\\boxed{OTHER \\vee ANSWER}",
    "\\boxed{OTHER \\land ANSWER}",
    "\\boxed{OTHER \\wedge ANSWER}",
    "\\boxed{x=OTHER \\lor x=ANSWER}",
    "\\boxed{OTHER \\text{ (or } ANSWER)}",
    "\\boxed{ANSWER \\text{(or OTHER)}}",
    "\\boxed{ANSWER \\text{ (possibly OTHER)}}",
    "\\boxed{ANSWER \\text{ if } n \\text{ is even}}",
    "\\boxed{OTHER \\mid ANSWER}",
    "\\boxed{OTHER \\cup ANSWER}",
    "\\boxed{OTHER = ANSWER}",
    "\\boxed{x = OTHER = ANSWER}",
    "\\boxed{\\approx ANSWER}",
    "\\boxed{ANSWER \\approx OTHER}",
    "\\boxed{x \\approx ANSWER}",
    "\\boxed{\\sim ANSWER}",
    "First $\\boxed{OTHER}$. More working with 7 and 8. Finally $\\boxed{ANSWER}$.",
    "\\boxed{OTHER}\n\nSecond thoughts:\n\n\\[\\boxed{ANSWER}\\]",
    "\\fbox{OTHER} \\boxed{ANSWER}",
    "Final answer: ANSWER (or OTHER)",
    "The answer is ANSWER, or maybe OTHER",
    "The answer is $ANSWER$ (or possibly $OTHER$).",
    "So x = OTHER or x = ANSWER",
    # LaTeX that does not parse as a whole: math-verify read the box's last number instead.
    "\\boxed{OTHER \\\\ ANSWER}",
    "\\boxed{\\begin{cases} OTHER \\\\ ANSWER \\end{cases}}",
    "\\boxed{OTHER | ANSWER}",
    "\\boxed{OTHER \\to ANSWER}",
    "\\boxed{OTHER \\Rightarrow ANSWER}",
    "\\boxed{OTHER \\star ANSWER}",
    "\\boxed{OTHER \\oplus ANSWER}",
    "\\boxed{OTHER ~ ANSWER}",
    "\\boxed{x = OTHER \\text{ (but } x = ANSWER)}",
    # A candidate a reader does not see, or a number's subscript: read as the visible number.
    "\\boxed{\\color{white}{OTHER} ANSWER}",
    "\\boxed{ANSWER_{OTHER}}",
    # Forms math-verify shortens to their last part: an inner box, a chain naming x twice.
    "\\boxed{\\boxed{ANSWER} OTHER}",
    "\\boxed{x=OTHER \\\\ x=ANSWER}",
    "\\boxed{x=OTHER \\; x=ANSWER}",
    "\\boxed{x=OTHER \\quad x=ANSWER}",
]

# Hedges that scored 0 before too, because math-verify reads them as a set; kept at 0.
LISTS = [
    "\\boxed{OTHER \\text{ or } ANSWER}",
    "\\boxed{OTHER or ANSWER}",
    "\\boxed{OTHER, ANSWER}",
    "\\boxed{x = OTHER, ANSWER}",
    "\\boxed{x=OTHER,\\ x=ANSWER}",
    "\\boxed{OTHER}\\boxed{ANSWER}",
    "\\boxed{OTHER} or \\boxed{ANSWER}",
    "\\boxed{x \\in \\{OTHER, ANSWER\\}}",
    "\\boxed{\\{OTHER, ANSWER\\}}",
    "\\boxed{[OTHER, ANSWER]}",
    "\\boxed{ANSWER \\le x \\le OTHER}",
    "\\boxed{x \\neq OTHER}",
    "\\boxed{x > OTHER}",
    "\\boxed{\\pm ANSWER}",
    "\\boxed{ANSWER \\pm 1}",
]


def _fill(template: str, answer: str, other: str) -> str:
    return template.replace("ANSWER", answer).replace("OTHER", other)


@cache
def _integer_task() -> tuple[str, str]:
    """A task id whose reference is a positive integer, and that reference."""
    family = MathTasks()
    for seed in range(100):
        reference = family.generate(seed, MathTaskOptions(difficulty="easy")).reference
        if isinstance(reference, str) and reference.isdigit() and int(reference) > 9:
            return f"math@1/{seed}?difficulty=easy", reference
    raise AssertionError("no easy task with an integer answer in 100 seeds")


def _by_task_id(task_id: str, response: str) -> Score:
    environment = MATH
    parsed = TaskId.parse(task_id)
    options = env_options(parsed.options)
    return environment.score_response(parsed.seed, options, response)


def _zero(score: Score) -> bool:
    return score.status in ("ok", "invalid") and score.reward == 0.0


@pytest.mark.parametrize("template", HEDGES + LISTS)
def test_hedge_scores_zero(template: str) -> None:
    # The reference is the second value offered, the first, and each in turn.
    for answer, other in [("4", "3"), ("3", "4")]:
        score = VERIFIER(_fill(template, answer, other), answer)
        assert _zero(score), (template, answer, score)


@pytest.mark.parametrize("template", HEDGES + LISTS)
def test_hedge_scores_zero_by_task_id(template: str) -> None:
    task_id, reference = _integer_task()
    # The honest answer scores; the same answer hedged with its neighbour does not.
    assert _by_task_id(task_id, f"\\boxed{{{reference}}}").reward == 1.0
    score = _by_task_id(task_id, _fill(template, reference, str(int(reference) + 1)))
    assert _zero(score), (template, score)


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("\\boxed{\\frac{1}{2}}", "1/2"),
        ("\\boxed{0.5}", "1/2"),
        ("\\boxed{0.5}", "\\frac{1}{2}"),
        ("\\boxed{\\dfrac12}", "\\frac{1}{2}"),
        ("\\boxed{2^{-1}}", "\\frac{1}{2}"),
        ("\\boxed{x = 4}", "4"),
        ("\\boxed{4.0}", "4"),
        ("\\boxed{4.000}", "4"),
        ("Adding the parts, the answer is therefore $\\boxed{4}$ as shown.", "4"),
        ("The answer is 4.", "4"),
        ("Since x > 0 and y < 1, we get 3 + 1. So the answer is 4.", "4"),
        ("\\boxed{4\\text{ cm}}", "4"),
        ("\\boxed{4\\text{ cm}^2}", "4"),
        ("\\boxed{1,000}", "1000"),
        ("\\boxed{12{,}000}", "12000"),
        ("\\boxed{\\text{4}}", "4"),
        ("\\boxed{\\textbf{4}}", "4"),
        ("\\boxed{\\mathbf{4}}", "4"),
        ("\\boxed{\\$4}", "4"),
        ("\\boxed{4^\\circ}", "4"),
        ("\\boxed{4 \\mathrm{~cm}}", "4"),
        ("\\boxed{\\tfrac{1}{2}}", "0.5"),
        ("\\boxed{f(x) = x^2}", "x^2"),
        ("\\boxed{\\text{Monday}}", "\\text{Monday}"),
        ("\\boxed{\\{4\\}}", "4"),
        ("\\boxed{4, 4}", "4"),
        ("So $\\boxed{4}$. Checking: yes, $\\boxed{4}$.", "4"),
        ("\\boxed{\\frac{1}{2}} = \\boxed{0.5}", "\\frac{1}{2}"),
        ("\\boxed{374.5}", "\\frac{749}{2}"),
        ("\\boxed{x = -1.375}", "- \\frac{11}{8}"),
        ("\\boxed{x = 4 = 4}", "4"),
        ("\\boxed{x = \\frac{8}{2} = 4}", "4"),
        (
            "\\boxed{\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}}",
            "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}",
        ),
        # Sets, tuples and relations keep their lists, signs and relations.
        ("\\boxed{2, 1}", "\\{1, 2\\}"),
        ("\\boxed{\\{1,2\\}}", "\\{1, 2\\}"),
        ("\\boxed{(1, 2)}", "(1, 2)"),
        ("\\boxed{x = 2, y = 5}", "(2, 5)"),
        ("\\boxed{\\pm 2}", "\\{-2, 2\\}"),
        ("\\boxed{x = 2 \\text{ or } x = -3}", "\\left\\{-3, 2\\right\\}"),
        ("\\boxed{2 \\text{ and } -3}", "\\left\\{-3, 2\\right\\}"),
        ("\\boxed{x \\leq 4}", "x \\le 4"),
        ("\\boxed{(-\\infty, 4]}", "x \\le 4"),
        ("\\boxed{x \\in [3, \\infty)}", "[3, \\infty)"),
        ("\\boxed{(-\\infty, 2) \\cup (3, \\infty)}", "(-\\infty, 2) \\cup (3, \\infty)"),
        ("\\boxed{4\\text{ and }5}", "\\{4, 5\\}"),
        # A decimal reference accepts its exact value and what rounds to it.
        ("\\boxed{\\frac{1}{2}}", "0.5"),
        ("\\boxed{1/3}", "0.333333"),
    ],
)
def test_equivalent_forms_still_score_one(response: str, reference: str) -> None:
    score = VERIFIER(response, reference)
    assert (score.status, score.reward) == ("ok", 1.0), score


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("\\boxed{0.142857}", "\\frac{1}{7}"),
        ("\\boxed{0.333333}", "\\frac{1}{3}"),
        ("\\boxed{0.3333333333}", "\\frac{1}{3}"),
        ("\\boxed{1.41421356}", "\\sqrt{2}"),
        ("\\boxed{0.7071068}", "\\frac{\\sqrt{2}}{2}"),
        ("\\boxed{3.141593}", "\\pi"),
        ("\\boxed{\\approx 4}", "4"),
        ("\\boxed{\\sqrt{2} \\approx 1.414214}", "\\sqrt{2}"),
        ("The answer is approximately 4.", "4"),
    ],
)
def test_approximations_need_the_option(response: str, reference: str) -> None:
    strict = VERIFIER(response, reference)
    assert (strict.status, strict.reward) == ("ok", 0.0), strict
    assert "approximation" in strict.detail
    lenient = VERIFIER(response, reference, MathOptions(accept_decimal_approximations=True))
    assert (lenient.status, lenient.reward) == ("ok", 1.0), lenient


def test_approximation_by_task_id() -> None:
    family = MathTasks()
    seed = next(
        s
        for s in range(100)
        if family.generate(s, MathTaskOptions(difficulty="easy")).reference == "\\frac{1}{3}"
    )
    task_id = f"math@1/{seed}?difficulty=easy"
    assert _zero(_by_task_id(task_id, "\\boxed{0.333333}"))
    assert _by_task_id(task_id, "\\boxed{\\frac{1}{3}}").reward == 1.0


def test_old_task_ids_name_the_same_tasks() -> None:
    # The option is the verifier's, not the task's: task ids and their options are unchanged.
    environment = MATH
    assert set(environment.spec.options_model.model_fields) == {"difficulty", "max_attempts"}
    assert MathOptions() == MathOptions.model_validate({})
    assert MathOptions().accept_decimal_approximations is False


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        # Answers in a row, unboxed: math-verify read the last.
        ("$391$ $392$", "392"),
        ("The answer is $391$ $392$.", "392"),
        ("So $391$ 392", "392"),
        # Two statements of the answer: math-verify read the last.
        ("Final answer: 391\nFinal answer: 392", "392"),
        ("The answer is 391. The answer is 392.", "392"),
        ("Final answer: $391$, and the answer is $392$", "392"),
        # A box without braces is a box (math-verify does not read it).
        ("\\boxed 3 then \\boxed{4}", "4"),
        ("\\fbox 3 \\boxed{4}", "4"),
        # A statement outside the box is an answer too.
        ("So $\\boxed{6}$.\nFinal answer: $-6$", "6"),
        ("Final answer: $-6$, so the answer is $\\boxed{6}$.", "6"),
        # math-verify cuts a unit off the end with all that follows it, and an upright constant
        # like a unit: both were read as the number before them.
        ("\\boxed{392\\text{ cm} + 1\\text{ cm}}", "392"),
        ("\\boxed{392\\mathrm{e}^{2}}", "392"),
        ("The answer is $392\\text{ cm} + 1\\text{ cm}$.", "392"),
        # A list of candidate sets is read as their union.
        ("The roots are $\\{2\\}$, $\\{-3, 2\\}$.", "\\{-3, 2\\}"),
        # Numbers apart only by LaTeX's spacing are in a row too: math-verify read their sum
        # (a search found \boxed{0 \, 1} paid for 1, and 3 \, 4 was paid for 7).
        ("\\boxed{0 \\, 1}", "1"),
        ("\\boxed{3 \\, 4}", "7"),
        ("\\boxed{3\\;4}", "7"),
        ("\\boxed{3 \\quad 4}", "7"),
        ("\\boxed{3 \\ 4}", "7"),
        ("\\boxed{\\frac{1}{2} \\, \\frac{1}{3}}", "\\frac{1}{6}"),
        ("The answer is 3 \\! 4.", "7"),
    ],
)
def test_several_answers_earn_nothing(response: str, reference: str) -> None:
    score = VERIFIER(response, reference)
    assert _zero(score), score


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("$392$ $392$", "392"),
        ("The answer is 392. Final answer: 392", "392"),
        ("Final Answer: The final answer is $392$. I hope it is correct.", "392"),
        ("So the answer is $\\boxed{392}$.", "392"),
        ("\\boxed 4", "4"),
        ("The answer is $\\boxed{6}$, and the answer is positive.", "6"),
        # A statement whose sentence holds a box states that box, working and all.
        ("So the answer is $3 \\times 4 = \\boxed{12}$.", "12"),
        ("Final answer: the roots are 2 and 4, so the larger is $\\boxed{4}$.", "4"),
        ("We have 1 000 apples. The answer is 392.", "392"),
        ("\\boxed{392 \\text{ cm}^{2}}", "392"),
        ("\\boxed{392\\,\\mathrm{m}}", "392"),
        ("\\boxed{3 \\, \\frac{1}{2}}", "\\frac{7}{2}"),  # a mixed number, thinly spaced
        ("\\boxed{2 \\, \\sqrt{3}}", "2\\sqrt{3}"),
        ("The roots are $-3$ and $2$.", "\\{-3, 2\\}"),
    ],
)
def test_one_answer_stated_again_keeps_scoring(response: str, reference: str) -> None:
    score = VERIFIER(response, reference)
    assert (score.status, score.reward) == ("ok", 1.0), score


def test_many_boxes_are_invalid_at_once() -> None:
    # Thousands of equivalent boxes would each be parsed: a timeout (masked), not a 0.
    response = " ".join(f"\\boxed{{4.{'0' * n}}}" for n in range(1, 2000))
    score = VERIFIER(response, "4")
    assert (score.status, score.reward) == ("invalid", 0.0), score
    assert VERIFIER(" ".join(f"\\boxed{{4.{'0' * n}}}" for n in range(1, 8)), "4").reward == 1.0


def test_markers_ignore_commands_and_longer_words() -> None:
    # \infty is not \in, \left not \le, \pmod not \pm, \middle not \mid; "order" is not "or".
    for text in ["(-\\infty, 4]", "\\left(1\\right)", "3 \\pmod{5}", "\\middle|", "\\text{order}"]:
        assert markers(text) == {}, text
    assert markers("4 \\text{ (or } 3)") == {"alternatives": "or"}
    assert markers("4 \\text{(3)}") == {"hedge": "\\text{(3)}"}
    assert markers("\\text{4}") == markers("4 \\text{ cm}^2") == {}
    assert set(markers("3 \\lor 4 \\approx 5")) == {"hedge", "approximation"}


def test_single_values() -> None:
    import sympy

    x = sympy.Symbol("x")
    assert is_single_value(sympy.Integer(4))
    assert is_single_value(sympy.Eq(x, 4))
    assert is_single_value(sympy.FiniteSet(4))
    assert not is_single_value(sympy.FiniteSet(3, 4))
    assert not is_single_value(sympy.Eq(sympy.Integer(3), 4, evaluate=False))
    assert not is_single_value(sympy.Interval(3, 4))
    assert not is_single_value(sympy.Tuple(3, 4))
    assert not is_single_value(x > 2)


def test_answer_sentence_runs_to_the_end_of_the_sentence() -> None:
    assert answer_sentence("The answer is 3 (or 4). Next, 5.", "3") == "The answer is 3 (or 4)"
    assert answer_sentence("Since x > 0, the answer is 4.5 or so\nnext", "4.5") == (
        " the answer is 4.5 or so"
    )
    assert answer_sentence("We find x = 3 or x = 4", "4") == "We find x = 3 or x = 4"
    assert answer_sentence("The answer is \\dfrac12.", "\\frac{1}{2}") is None


def test_a_long_run_of_spaces_is_read_at_once() -> None:
    # The spacing between answers in a row is matched one way only: with overlapping
    # alternatives, 30 blanks after a fraction took the regex seconds and 200 would never end.
    for response in ["\\frac{1}{2}" + " " * 200 + "x", "3" + " \\," * 200 + "x"]:
        score = VERIFIER(response, "\\frac{1}{2}")
        assert score.status in ("ok", "invalid"), score
