"""A wrong answer that is slow to evaluate is 0 at once, never a timeout (issue 38, defect 6).

A ``timeout`` is masked by trainers, so an answer that runs math-verify out of time would dodge
its 0 (and hold a worker: ``\\gcd(10^{10^{10}}, 5)`` held one for 27 s, inside one big-integer
operation the alarm cannot interrupt). The verifier bounds the work from the answer's text and
its unevaluated parse before sympy evaluates anything (``verifiers/math_bounds.py``)."""

from __future__ import annotations

import time

import pytest
import sympy
from math_verify.errors import TimeoutException

from tests.math_support import MATH, env_options
from verifiers.math import VERIFIER, MathOptions, _cpu_limit
from verifiers.math_bounds import MAX_DIGITS, MAX_TERMS, too_large, unreadable

BOMBS = [
    # The audit's two: a braced tower and Gamma of a huge number.
    "{10}^{{10}^{10}}",
    "\\Gamma(10^{8})",
    # Towers, huge powers, factorials, Gamma, binomials, gcd, products, sums.
    "9^{9^{9^{9}}}",
    "10^{10^{10}}",
    "2^{2^{2^{2^{2^{2}}}}}",
    "{2}^{{2}^{{2}^{{2}^{{2}^{{2}}}}}}",
    "2^{100000}",
    "(10^{8})!",
    "100000000!",
    "((5!)!)!",
    "\\Gamma(1000000)",
    "\\Gamma(\\Gamma(\\Gamma(5)))",
    "\\binom{10^{10}}{5000}",
    "\\binom{1000000}{500000}",
    "\\gcd(10^{10^{10}}, 5)",
    "\\operatorname{lcm}(10^{10^{10}}, 7)",
    "\\prod_{k=1}^{10^{9}} k",
    "\\sum_{k=1}^{10^{9}} k!",
    "x^{100000000}|_{x=10}",
    "e^{10^{10}}",
    "\\sin(10^{10^{5}})",
    "(\\sqrt{2}+\\sqrt{3}+\\sqrt{5})^{300}",
    "\\left(1 + \\frac{1}{10^{100}}\\right)^{10^{100}}",
    "\\operatorname{eye}(100000)",
    "4 + 10^{10^{10}} - 10^{10^{10}}",
    # Text that is slow to read: long digit strings and sums, deep nesting, many bars.
    "9" * 5000,
    "-" * 3000 + "5",
    "(" * 60 + "\\left(1, 3\\right)" + ")" * 60,
    "|" * 40 + "2" + "|" * 40,
    "+".join(["1"] * 1500),
    "x_{1}" * 400,
]


@pytest.mark.parametrize("bomb", BOMBS, ids=[b[:40] for b in BOMBS])
def test_an_answer_slow_to_evaluate_is_invalid_not_a_timeout(bomb: str) -> None:
    for options in (MathOptions(), MathOptions(allow_unevaluated=True)):
        score = VERIFIER(f"\\boxed{{{bomb}}}", "5", options)
        assert (score.status, score.reward) == ("invalid", 0.0), (bomb, score)


def test_an_unboxed_bomb_and_many_unreadable_candidates_are_invalid() -> None:
    for response in [
        "The answer is ${10}^{{10}^{10}}$.",
        "Final answer: $\\Gamma(10^{8})$",
        # Read one by one from the end, each of these would be parsed in turn before the 5.
        "We get $5$. " + " ".join(["$" + "|x" * 120 + "$"] * 40),
    ]:
        score = VERIFIER(response, "5")
        assert (score.status, score.reward) == ("invalid", 0.0), (response[:60], score)


def test_a_bomb_by_task_id_is_invalid() -> None:
    task_id_seed, options = 4, env_options({"difficulty": "easy"})
    for bomb in ["{10}^{{10}^{10}}", "\\Gamma(10^{8})"]:
        score = MATH.score_response(task_id_seed, options, f"\\boxed{{{bomb}}}")
        assert (score.status, score.reward) == ("invalid", 0.0), score


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        # Large but finite values and legitimate forms stay within the bounds.
        ("1267650600228229401496703205376", "2^{100}"),
        ("2^{100}", "2^{100}"),
        ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}"),
        ("\\binom{10}{3}", "\\binom{10}{3}"),
        ("(x+1)^{3}", "x^3 + 3x^2 + 3x + 1"),
        ("|x - 1| + |x + 1|", "|x-1| + |x+1|"),
    ],
)
def test_large_and_ordinary_answers_are_still_compared(answer: str, reference: str) -> None:
    score = VERIFIER(f"\\boxed{{{answer}}}", reference)
    assert (score.status, score.reward) == ("ok", 1.0), score


def test_the_bounds() -> None:
    ten = sympy.Integer(10)
    assert too_large(sympy.Pow(ten, 9000, evaluate=False)) is None  # 9,001 digits
    assert too_large(sympy.Pow(ten, MAX_DIGITS + 10, evaluate=False)) is not None
    assert too_large(sympy.factorial(sympy.Integer(1000), evaluate=False)) is None
    assert too_large(sympy.factorial(sympy.Integer(10**5), evaluate=False)) is not None
    x, y = sympy.symbols("x y")
    assert too_large(sympy.Pow(x + y, 60, evaluate=False)) is None  # 61 terms
    assert too_large(sympy.Pow(x + y + 1, 70, evaluate=False)) is not None  # 2,556 terms
    assert MAX_TERMS < 2556
    assert unreadable("\\binom{10}{3}", "120") is None
    assert unreadable("\\binom{10^{10}}{3}", "120") is not None
    assert unreadable("\\binom{10}{3}\\binom{5}{2}", "120") is not None  # once only
    assert unreadable("x" * 401, "1") is not None
    assert unreadable("x" * 401, "x" * 300) is None  # a long reference allows long answers


def test_the_limits_count_cpu_time_not_the_clock() -> None:
    # A loaded machine stretches the wall clock: waiting is not work, and must not time out.
    with _cpu_limit(0.2):
        time.sleep(0.5)
    with pytest.raises(TimeoutException), _cpu_limit(0.2):
        while True:
            pass
