"""The math family (environments/math) and the math verifier (verifiers/math.py)."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal

import pytest
import sympy
from latex2sympy2_extended import latex2sympy
from math_verify.errors import TimeoutException
from pydantic import ValidationError

import verifiers.math as math_verifier
from environments.base import Environment, EpisodeFinished
from environments.math.family import MathTaskOptions, MathTasks, draw_problem
from environments.math.kinds import KINDS, Difficulty
from environments.single_turn import Task
from environments.task_id import TaskId
from tests.math_support import MATH, env_options
from verifiers.math import VERIFIER, MathOptions
from verifiers.math_hedges import boxed_answers

REPO_ROOT = Path(__file__).resolve().parents[1]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")


def _task(seed: int, difficulty: Difficulty) -> Task:
    return MathTasks().generate(seed, MathTaskOptions(difficulty=difficulty))


def _prompt(task: Task) -> str:
    assert isinstance(task.prompt, str)
    return task.prompt


def _tasks_json(seeds: range) -> str:
    family = MathTasks()
    tasks = [
        asdict(family.generate(seed, MathTaskOptions(difficulty=difficulty)))
        for difficulty in DIFFICULTIES
        for seed in seeds
    ]
    return json.dumps(tasks, sort_keys=True)


def _boxed(answer: str) -> str:
    return f"So the answer is $\\boxed{{{answer}}}$."


# --- the family's contract -------------------------------------------------------------------


def test_family_identity_and_options() -> None:
    family = MathTasks()
    assert (family.id, family.version) == ("math", "1")
    assert family.verifier is VERIFIER
    assert family.description
    assert MathTaskOptions().difficulty == "medium"
    assert MathTaskOptions.model_json_schema()["properties"]["difficulty"]["description"]
    with pytest.raises(ValidationError):
        MathTaskOptions(difficulty="impossible")
    with pytest.raises(ValidationError):
        MathTaskOptions(level="hard")  # type: ignore[call-arg]
    options = MathTaskOptions(difficulty="hard")
    with pytest.raises(ValidationError):
        options.difficulty = "easy"  # type: ignore[misc]


def test_each_difficulty_has_several_kinds() -> None:
    assert all(len(KINDS[difficulty]) >= 3 for difficulty in DIFFICULTIES)
    names = [name for difficulty in DIFFICULTIES for name in KINDS[difficulty]]
    assert len(names) == len(set(names)) >= 9


def test_environment_spec() -> None:
    environment = MATH
    assert isinstance(environment, Environment)
    spec = environment.spec
    assert (spec.id, spec.version, spec.verifier, spec.kind) == ("math", "1", "math", "single_turn")
    properties = spec.options_model.model_json_schema()["properties"]
    assert {"difficulty", "max_attempts"} <= set(properties)


# --- determinism -----------------------------------------------------------------------------


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_same_seed_gives_identical_task_in_fresh_instances(difficulty: Difficulty) -> None:
    for seed in [*range(40), 2**31, 2**63 - 1]:
        first = MathTasks().generate(seed, MathTaskOptions(difficulty=difficulty))
        second = MathTasks().generate(
            seed, MathTaskOptions.model_validate({"difficulty": difficulty})
        )
        assert first == second
        assert json.dumps(asdict(first)) == json.dumps(asdict(second))


def test_same_seed_gives_identical_task_in_another_process() -> None:
    # A fixed hash seed in the child (the parent's is random) catches any dependence on the
    # iteration order of sets or of str-keyed hashing.
    code = (
        "import json, sys\n"
        "from dataclasses import asdict\n"
        "from environments.math.family import MathTaskOptions, MathTasks\n"
        "family = MathTasks()\n"
        "tasks = [asdict(family.generate(seed, MathTaskOptions(difficulty=difficulty)))\n"
        f"         for difficulty in {DIFFICULTIES!r} for seed in range(60)]\n"
        "sys.stdout.write(json.dumps(tasks, sort_keys=True))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(REPO_ROOT)}
    child = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert child.stdout == _tasks_json(range(60))


def test_generation_leaves_global_random_state_alone() -> None:
    random.seed(7)
    before = random.getstate()
    for seed in range(30):
        _task(seed, "hard")
    assert random.getstate() == before


# --- variety ---------------------------------------------------------------------------------


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_seeds_give_varied_problems_of_every_kind(difficulty: Difficulty) -> None:
    tasks = [_task(seed, difficulty) for seed in range(300)]
    assert {task.metadata["kind"] for task in tasks} == set(KINDS[difficulty])
    assert len({task.prompt for task in tasks}) >= 290
    assert len({task.reference for task in tasks}) >= 60


def test_difficulty_changes_the_task() -> None:
    assert _task(3, "easy").prompt != _task(3, "hard").prompt


# --- the reference stays on the server --------------------------------------------------------


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_reference_is_not_revealed(difficulty: Difficulty) -> None:
    for seed in range(300):
        task = _task(seed, difficulty)
        assert task.metadata == {"difficulty": difficulty, "kind": task.metadata["kind"]}
        reference = str(task.reference)
        assert reference not in json.dumps(task.metadata)
        prompt = _prompt(task)
        assert "boxed{" not in prompt.replace("\\boxed{}", "")
        # Small integers turn up in any statement by coincidence; longer answers must not.
        if len(reference) >= 3:
            numbers = re.findall(r"(?<![\d.])-?\d+(?![\d.])", prompt)
            assert reference not in prompt.replace("$", " ").split(), (seed, task)
            assert reference not in numbers, (seed, task)


# --- scoring ---------------------------------------------------------------------------------


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_expert_response_scores_one(difficulty: Difficulty) -> None:
    family = MathTasks()
    for seed in range(200):
        task = family.generate(seed, MathTaskOptions(difficulty=difficulty))
        score = VERIFIER(family.expert_response(task), task.reference)
        assert (score.status, score.reward) == ("ok", 1.0), (seed, task, score)
        assert isinstance(task.reference, str)


def _wrong_answers(answer: Any) -> list[Any]:
    """Answers that differ from ``answer``, of the same shape."""
    if isinstance(answer, sympy.FiniteSet):
        smaller, larger = sorted(answer.args, key=float)
        return [smaller, larger, sympy.FiniteSet(smaller, larger + 1)]
    if isinstance(answer, sympy.Tuple):
        x, y = answer.args
        swapped = [sympy.Tuple(y, x)] if x != y else []
        return [*swapped, sympy.Tuple(x, y + 1), x]
    negated = [-answer] if answer != 0 else []
    return [answer + 1, answer - 1, answer + sympy.Rational(1, 2), *negated]


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_wrong_answers_score_zero(difficulty: Difficulty) -> None:
    for seed in range(40):
        kind, problem = draw_problem(seed, difficulty)
        task = _task(seed, difficulty)
        for wrong in [*_wrong_answers(problem.answer), sympy.Integer(987654321)]:
            score = VERIFIER(_boxed(sympy.latex(wrong)), task.reference)
            assert (score.status, score.reward) == ("ok", 0.0), (kind, task.prompt, wrong)


@pytest.mark.parametrize("junk", ["", "I do not know.", "\\boxed{}", "idk lol", "\\boxed{"])
def test_junk_is_invalid(junk: str) -> None:
    for seed in range(3):
        for difficulty in DIFFICULTIES:
            score = VERIFIER(junk, _task(seed, difficulty).reference)
            assert (score.status, score.reward) == ("invalid", 0.0), (junk, score)


def test_episode_through_the_environment() -> None:
    environment = MATH
    options = env_options({"difficulty": "hard", "max_attempts": 2})
    reset = environment.reset(11, options)
    task = _task(11, "hard")
    assert reset.observation == task.prompt
    assert reset.info["metadata"] == task.metadata

    wrong = environment.step(reset.state, _boxed("987654321"))
    assert (wrong.score.reward, wrong.terminated) == (0.0, False)
    # The feedback names the rejected answer, never the expected one (reference: \\frac{3}{2}).
    assert str(task.reference) not in wrong.observation
    right = environment.step(wrong.state, environment.expert_action(wrong.state))
    assert (right.score.reward, right.terminated) == (1.0, True)
    with pytest.raises(EpisodeFinished):
        environment.step(right.state, "\\boxed{1}")


def test_task_id_names_the_same_task() -> None:
    environment = MATH
    parsed = TaskId.parse("math@1/42?difficulty=hard")
    options = env_options(parsed.options)
    task = _task(42, "hard")
    assert environment.reset(parsed.seed, options).observation == task.prompt
    score = environment.score_response(parsed.seed, options, MathTasks().expert_response(task))
    assert (score.status, score.reward) == ("ok", 1.0)


# --- each answer agrees with sympy's own reading of the statement -----------------------------

_X, _Y = sympy.symbols("x y")


def _math(statement: str) -> list[str]:
    return re.findall(r"\$([^$]+)\$", statement)


def _integers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"-?\d+", text)]


def _parse(latex: str) -> Any:
    expression = latex2sympy(latex)
    return expression.subs({s: sympy.Symbol(s.name) for s in expression.free_symbols})


def _arithmetic(statement: str) -> Any:
    return _parse(_math(statement)[0]).doit()


def _percentage(statement: str) -> Any:
    first, second = (_integers(formula)[0] for formula in _math(statement)[:2])
    if statement.startswith("What is"):
        return sympy.Rational(first * second, 100)
    if statement.startswith("What percentage"):
        return sympy.Rational(100 * second, first)
    change = sympy.Rational(first, 100)
    return second / (1 + change if "increased" in statement else 1 - change)


def _mean(statement: str) -> Any:
    formulas = _math(statement)
    numbers = _integers(formulas[-1])
    if statement.startswith("What is"):
        return sympy.Rational(sum(numbers), len(numbers))
    count = _integers(statement)[0]
    return count * _integers(formulas[0])[0] - sum(numbers)


def _linear_equation(statement: str) -> Any:
    (solution,) = sympy.solve(_parse(_math(statement)[1]), _X)
    return solution


def _function_and_point(statement: str) -> tuple[Any, int]:
    definition, call = _math(statement)[:2]
    return _parse(definition.split("=", 1)[1]), _integers(call)[0]


def _polynomial_value(statement: str) -> Any:
    f, at = _function_and_point(statement)
    return f.subs(_X, at)


def _derivative_at_point(statement: str) -> Any:
    f, at = _function_and_point(statement)
    return sympy.diff(f, _X).subs(_X, at)


def _linear_system(statement: str) -> Any:
    equations = [_parse(formula) for formula in _math(statement)[:2]]
    (solution,) = sympy.solve(equations, [_X, _Y], dict=True)
    return sympy.Tuple(solution[_X], solution[_Y])


def _arithmetic_series(statement: str) -> Any:
    formulas = _math(statement)
    k = sympy.Symbol("k", integer=True)
    if "terms" in statement:
        count = _integers(formulas[0])[0]
        first, second = _integers(formulas[1])[:2]
        return sympy.summation(first + k * (second - first), (k, 0, count - 1))
    first, second, _, last = _integers(formulas[0])
    step = second - first
    return sympy.summation(first + k * step, (k, 0, (last - first) // step))


def _quadratic_equation(statement: str) -> Any:
    roots = sympy.solve(_parse(_math(statement)[0]), _X)
    return max(roots, key=float) if "larger" in statement else sympy.FiniteSet(*roots)


def _gcd_lcm(statement: str) -> Any:
    a, b = (_integers(formula)[0] for formula in _math(statement))
    return sympy.gcd(a, b) if "greatest" in statement else sympy.lcm(a, b)


def _modular_arithmetic(statement: str) -> Any:
    formulas = _math(statement)
    if statement.startswith("What is the remainder"):
        base, exponent = _integers(formulas[0])
        return sympy.Mod(sympy.Integer(base) ** exponent, _integers(formulas[1])[0])
    a, b, modulus = _integers(formulas[1])
    return next(x for x in range(modulus) if (a * x - b) % modulus == 0)


def _counting(statement: str) -> Any:
    numbers = [_integers(formula)[0] for formula in _math(statement)]
    letters = re.search(r"word ([A-Z]+)|tiles: ([A-Z, and]+)\.", statement)
    if letters is not None:
        word = (letters[1] or letters[2]).replace(",", "").replace(" and ", "").replace(" ", "")
        total = sympy.factorial(len(word))
        for letter in set(word):
            total /= sympy.factorial(word.count(letter))
        return total
    if "prizes" in statement:
        prizes = len(re.findall(r"first|second|third|fourth|fifth", statement))
        return sympy.ff(numbers[0], prizes)
    if "club" in statement:
        women, men, chosen_women, chosen_men = numbers
        return sympy.binomial(women, chosen_women) * sympy.binomial(men, chosen_men)
    size, people = numbers
    return sympy.binomial(people, size)


_ORACLES: dict[str, Callable[[str], Any]] = {
    "integer_arithmetic": _arithmetic,
    "fraction_arithmetic": _arithmetic,
    "percentage": _percentage,
    "mean": _mean,
    "linear_equation": _linear_equation,
    "gcd_lcm": _gcd_lcm,
    "polynomial_value": _polynomial_value,
    "linear_system": _linear_system,
    "arithmetic_series": _arithmetic_series,
    "quadratic_equation": _quadratic_equation,
    "derivative_at_point": _derivative_at_point,
    "definite_integral": _arithmetic,
    "counting": _counting,
    "modular_arithmetic": _modular_arithmetic,
}
"""Each kind's answer, recomputed with sympy from the statement's text alone."""


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, sympy.FiniteSet):
        if not isinstance(actual, sympy.FiniteSet):
            return False
        expected_items = sorted(expected.args, key=float)
        actual_items = sorted(actual.args, key=float)
    elif isinstance(expected, sympy.Tuple):
        if not isinstance(actual, sympy.Tuple):
            return False
        expected_items, actual_items = list(expected.args), list(actual.args)
    else:
        expected_items, actual_items = [expected], [actual]
    if len(expected_items) != len(actual_items):
        return False
    return all(
        sympy.simplify(e - a) == 0 for e, a in zip(expected_items, actual_items, strict=True)
    )


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_answers_agree_with_an_independent_reading(difficulty: Difficulty) -> None:
    seen: dict[str, int] = {}
    for seed in range(400):
        kind, problem = draw_problem(seed, difficulty)
        if seen.get(kind, 0) >= 6:
            continue
        seen[kind] = seen.get(kind, 0) + 1
        expected = _ORACLES[kind](problem.statement)
        assert _same(expected, problem.answer), (kind, problem.statement, expected, problem.answer)
    assert set(seen) == set(KINDS[difficulty])


def test_restating_the_problem_is_not_an_answer() -> None:
    seed = next(s for s in range(100) if _task(s, "easy").metadata["kind"] == "integer_arithmetic")
    task = _task(seed, "easy")
    restated = _math(_prompt(task))[0]
    score = VERIFIER(_boxed(restated), task.reference)
    assert (score.status, score.reward) == ("invalid", 0.0)
    assert "not a final value" in score.detail


@pytest.mark.parametrize(
    ("restated", "reference"),
    [
        ("3 + 4 \\cdot 5", "23"),
        ("\\frac{1}{3}+\\frac{1}{4}", "\\frac{7}{12}"),
        ("0.15 \\cdot 80", "12"),
        ("\\binom{10}{3}", "120"),
        ("\\gcd(12,18)", "6"),
        ("\\operatorname{lcm}(4,6)", "12"),
        ("17 \\mod 5", "2"),
        ("10!", "3628800"),
        ("2^{10}", "1024"),
        ("\\sqrt{16}", "4"),
        ("\\Gamma(5)", "24"),
    ],
)
def test_unevaluated_arithmetic_is_not_a_final_value(restated: str, reference: str) -> None:
    score = VERIFIER(_boxed(restated), reference)
    assert (score.status, score.reward) == ("invalid", 0.0), score
    # The option exists for datasets that accept such answers, and then they are equivalent.
    lenient = VERIFIER(_boxed(restated), reference, MathOptions(allow_unevaluated=True))
    assert lenient.reward == 1.0


@pytest.mark.parametrize(
    ("restated", "reference"),
    [
        ("\\int_0^2 (x^2+1)dx", "\\frac{14}{3}"),
        ("\\sum_{k=1}^{10}(2k+1)", "120"),
        ("\\prod_{k=1}^{4} k", "24"),
        ("\\lim_{n \\to \\infty} \\frac{2n}{n+1}", "2"),
        ("\\frac{d}{dx} x^{2}", "2 x"),
    ],
)
def test_calculus_is_never_a_final_value(restated: str, reference: str) -> None:
    # allow_unevaluated accepts arithmetic, not calculus: an integral's or a sum's evaluation
    # has no bound, so a policy could choose one that times out.
    for options in (MathOptions(), MathOptions(allow_unevaluated=True)):
        score = VERIFIER(_boxed(restated), reference, options)
        assert (score.status, score.reward) == ("invalid", 0.0), score
        assert "unevaluated" in score.detail
    # Against a reference written with the same operator, it is how the answer is written.
    assert VERIFIER(_boxed(restated), restated).reward == 1.0


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        ("\\frac{1}{\\sqrt{2}}", "\\frac{\\sqrt{2}}{2}"),
        ("\\frac{3+\\sqrt{21}}{2}", "\\frac{3}{2}+\\frac{\\sqrt{21}}{2}"),
        ("-\\frac{11}{8}", "-1.375"),
        ("2^{10}", "2^{10}"),  # the reference itself is written this way
        ("(x+1)^2", "x^2+2x+1"),
        ("\\frac{\\pi}{2}", "\\pi/2"),
    ],
)
def test_final_values_in_any_form_are_accepted(answer: str, reference: str) -> None:
    assert VERIFIER(_boxed(answer), reference).reward == 1.0


def test_references_that_are_not_finite_are_errors() -> None:
    assert VERIFIER("\\boxed{1}", "\\frac{1}{0}").status == "error"


# --- the math verifier itself ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("\\boxed{0.5}", "\\frac{1}{2}"),
        ("\\boxed{1/2}", "\\frac{1}{2}"),
        ("\\boxed{\\dfrac{1}{2}}", "0.5"),
        ("The answer is $\\frac{1}{2}$.", "1/2"),
        ("\\boxed{x = -\\frac{11}{8}}", "- \\frac{11}{8}"),
        ("\\boxed{\\frac{1 + \\sqrt{13}}{2}}", "\\frac{1}{2} + \\frac{\\sqrt{13}}{2}"),
        ("\\boxed{2, -3}", "\\left\\{-3, 2\\right\\}"),
        ("\\boxed{(2, -3)}", "\\left( 2, \\  -3\\right)"),
        ("\\boxed{12}", 12),
    ],
)
def test_verifier_accepts_equivalent_forms(response: str, reference: Any) -> None:
    score = VERIFIER(response, reference)
    assert (score.status, score.reward) == ("ok", 1.0)


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("\\boxed{\\frac{1}{3}}", "\\frac{1}{2}"),
        ("\\boxed{-3}", "\\left\\{-3, 2\\right\\}"),
        ("\\boxed{(-3, 2)}", "\\left( 2, \\  -3\\right)"),
        ("\\boxed{2, -3, 5}", "\\left\\{-3, 2\\right\\}"),
    ],
)
def test_verifier_rejects_different_answers(response: str, reference: str) -> None:
    score = VERIFIER(response, reference)
    assert (score.status, score.reward) == ("ok", 0.0)


def test_verifier_boxed_only_option() -> None:
    boxed_only = MathOptions(extraction="boxed")
    assert VERIFIER("The answer is 1/2.", "\\frac{1}{2}").reward == 1.0
    unboxed = VERIFIER("The answer is 1/2.", "\\frac{1}{2}", boxed_only)
    assert (unboxed.status, unboxed.reward) == ("invalid", 0.0)
    assert VERIFIER("so \\boxed{\\frac{1}{2}}", "\\frac{1}{2}", boxed_only).reward == 1.0


@pytest.mark.parametrize("extraction", ["auto", "boxed"])
def test_every_boxed_answer_must_be_right(extraction: Literal["auto", "boxed"]) -> None:
    options = MathOptions(extraction=extraction)
    # Old code, boxed: the last box counted; auto: math-verify read close boxes as a set and
    # distant ones as the last, so "\\boxed{3} ... \\boxed{1/2}" scored 1.
    for response in [
        "\\boxed{3}, no: \\boxed{1/2}",
        "\\boxed{1/2}, no: \\boxed{3}",
        "First $\\boxed{3}$. Some more working with 7 and 8. Finally $\\boxed{\\frac{1}{2}}$.",
    ]:
        score = VERIFIER(response, "\\frac{1}{2}", options)
        assert (score.status, score.reward) == ("ok", 0.0), (response, score)
    # The same answer boxed twice, in any form, is one answer.
    for response in ["\\boxed{1/2} so \\boxed{1/2}", "\\boxed{\\frac{1}{2}} = \\boxed{0.5}"]:
        assert VERIFIER(response, "\\frac{1}{2}", options).reward == 1.0, response
    # An empty box (an echo of the instruction) is no answer.
    assert VERIFIER("I put it in \\boxed{}: \\boxed{1/2}", "\\frac{1}{2}", options).reward == 1.0


def test_boxed_answers_keep_nested_braces() -> None:
    text = "a \\boxed{1} b \\boxed{\\frac{1}{2}} \\fbox{3} \\boxed{} \\boxed{x \\text{\\boxed{4}}}"
    assert boxed_answers(text) == ["1", "\\frac{1}{2}", "3", "x \\text{\\boxed{4}}"]
    assert boxed_answers("\\boxed{2} \\boxed{\\frac{1}{2}") == ["2"]
    assert boxed_answers("no box") == []


@pytest.mark.parametrize("reference", ["\\frac{1}{", "", "\\left(", "x +", "\\sqrt"])
def test_malformed_reference_is_an_error(reference: str) -> None:
    score = VERIFIER("\\boxed{2}", reference)
    assert (score.status, score.reward) == ("error", None)


@pytest.mark.parametrize("reference", [None, ["1"], {"answer": 1}, True])
def test_reference_of_the_wrong_type_is_an_error(reference: Any) -> None:
    score = VERIFIER("\\boxed{1}", reference)
    assert (score.status, score.reward) == ("error", None)


def test_math_verify_timeouts_are_reported_not_scored_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    reference = "\\frac{22}{7}"
    assert VERIFIER("\\boxed{22/7}", reference).reward == 1.0  # caches the parsed reference

    def slow_verify(*args: object, **kwargs: object) -> bool:
        raise TimeoutException("compare")

    monkeypatch.setattr(math_verifier, "verify", slow_verify)
    compared = VERIFIER("\\boxed{22/7}", reference)
    assert (compared.status, compared.reward) == ("timeout", None)

    def slow_parse(*args: object, **kwargs: object) -> list[object]:
        raise TimeoutException("parse")

    monkeypatch.setattr(math_verifier, "parse", slow_parse)
    extracted = VERIFIER("\\boxed{22/7}", reference)
    assert (extracted.status, extracted.reward) == ("timeout", None)
    unparsed = VERIFIER("\\boxed{1}", "\\frac{355}{113}")
    assert (unparsed.status, unparsed.reward) == ("error", None)
