"""What every OPT-BENCH task must do, checked once for all ten: seeded generation, proven exact
solutions, strict reading of malformed answers, a greedy baseline that scores, a correct example
and a prompt in the original's structure. Task-specific checks live in tests/test_opt_<task>.py
(knapsack's in tests/test_opt_framework.py)."""

from __future__ import annotations

import json
import random

import pytest

from environments.opt.prompt import RESPONSE_FORMAT, build_prompt
from environments.opt.references import ON_DEMAND_BUDGET
from environments.opt.task import LEVELS, Level
from environments.opt.tasks import TASKS
from tests.opt_support import (
    MALFORMED_ANSWERS,
    MALFORMED_EXCEPT_FOR,
    SOLVED_SEEDS,
    assert_invalid,
    instance,
    rng,
    score,
    solution,
    solved,
)
from verifiers.opt import VERIFIER

NAMES = list(TASKS)
GENERATED_SEEDS = range(60)
# Easy max_clique graphs have 4-8 vertices, so a few seeds draw the same graph; nowhere else.
COINCIDENCES_ALLOWED: dict[tuple[str, Level], int] = {("max_clique", "easy"): 6}
# The examples' optima, worked out by hand from the small example inputs (not by the solver).
EXAMPLE_OPTIMA: dict[str, float] = {
    "knapsack": 11,
    "subset_sum": 3,
    "set_cover": 2,
    "tsp": 80,
    "hamiltonian_cycle": 6,
    "max_clique": 3,
    "max_independent_set": 3,
    "graph_coloring": 3,
    "min_bisection": 3,
    "meeting_schedule": 6,
}
# Where the greedy baseline may be infeasible (smallest-first plus a swap can miss the target).
GREEDY_MAY_BE_INFEASIBLE = {"subset_sum"}

by_task_and_level = pytest.mark.parametrize(
    ("name", "level"), [(name, level) for name in NAMES for level in LEVELS]
)


def test_every_task_is_covered_here() -> None:
    assert set(SOLVED_SEEDS) == set(EXAMPLE_OPTIMA) == set(TASKS)
    assert len(TASKS) == 10


# --- generation ------------------------------------------------------------------------------


@by_task_and_level
def test_generation_is_byte_identical_per_seed_and_varied(name: str, level: Level) -> None:
    task = TASKS[name]
    dumps = []
    for seed in GENERATED_SEEDS:
        # Reseeding the global generator in between shows only ``rng`` is drawn from.
        random.seed(1)
        first = json.dumps(task.generate(rng(seed), level))
        random.seed(2)
        second = json.dumps(task.generate(rng(seed), level))
        assert first == second
        assert first == json.dumps(instance(name, seed, level))
        dumps.append(first)
    # Different seeds give different instances (a constant generator would pass the above).
    assert len(set(dumps)) >= len(dumps) - COINCIDENCES_ALLOWED.get((name, level), 0)


# --- exact references ------------------------------------------------------------------------


@by_task_and_level
def test_exact_solution_is_feasible_valued_and_proven(name: str, level: Level) -> None:
    check = TASKS[name].check
    for seed, problem, exact in solved(name, level):
        assert exact.optimal, (level, seed)
        assert check.evaluate(problem, exact.answer) == exact.value
        result = score(name, problem, exact.answer, exact.value)
        assert (result.status, result.reward) == ("ok", 1.0), result
        assert result.components["quality_ratio"] == 1.0


@by_task_and_level
def test_greedy_baseline_scores_and_never_beats_the_optimum(name: str, level: Level) -> None:
    task = TASKS[name]
    for _, problem, exact in solved(name, level):
        result = score(name, problem, task.greedy(problem), exact.value)
        assert result.status == "ok" and result.reward is not None, result
        assert 0.0 <= result.reward <= 1.0, result
        if name in GREEDY_MAY_BE_INFEASIBLE and not result.components["feasible"]:
            assert result.reward == 0.0
            continue
        # Feasible with a positive share, and never above a proven optimum (unclipped ratio).
        assert result.components["feasible"] == 1.0 and result.reward > 0.0, result
        assert result.components["quality_ratio"] <= 1.0 and not result.extra, result


@pytest.mark.parametrize("name", NAMES)
def test_the_example_output_is_an_optimum_of_the_example_input(name: str) -> None:
    task = TASKS[name]
    assert task.check.evaluate(task.example_input, task.example_output) == EXAMPLE_OPTIMA[name]
    exact = task.solve(task.example_input, ON_DEMAND_BUDGET)
    assert (exact.value, exact.optimal) == (EXAMPLE_OPTIMA[name], True)


# --- malformed answers -----------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("answer", MALFORMED_ANSWERS)
def test_malformed_answers_are_invalid(name: str, answer: str) -> None:
    problem = instance(name, 0, "easy")
    assert_invalid(score(name, problem, answer, solution(name, 0, "easy").value))


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        (name, answer)
        for answer, meaningful_for in MALFORMED_EXCEPT_FOR.items()
        for name in NAMES
        if name != meaningful_for
    ],
)
def test_answers_meaningful_to_one_task_are_invalid_for_the_others(name: str, answer: str) -> None:
    problem = instance(name, 0, "easy")
    assert_invalid(score(name, problem, answer, solution(name, 0, "easy").value))


@pytest.mark.parametrize("name", NAMES)
def test_a_response_without_an_answer_is_invalid(name: str) -> None:
    problem, exact = instance(name, 0, "easy"), solution(name, 0, "easy")
    reference = {"task": name, "instance": problem, "value": exact.value, "optimal": True}
    # The optimal answer itself, but not after an ``Answer:``.
    assert_invalid(VERIFIER(f"My solution is {exact.answer}.", reference))


@pytest.mark.parametrize("name", NAMES)
def test_decorations_are_dropped_and_one_answer_counts(name: str) -> None:
    problem, exact = instance(name, 0, "easy"), solution(name, 0, "easy")
    reference = {"task": name, "instance": problem, "value": exact.value, "optimal": True}
    for response in (
        f"**Answer:** `{exact.answer}`.",
        f"answer: **{exact.answer}**.",
        f"Answer: $\\boxed{{{exact.answer}}}$",
        f"Answer: {exact.answer}\nChecked again.\nAnswer: **{exact.answer}**",
        f"The answer: first, read the instance.\nAnswer: {exact.answer}",
    ):
        assert VERIFIER(response, reference).reward == 1.0, response


@pytest.mark.parametrize("name", NAMES)
def test_an_earlier_other_answer_is_a_second_answer(name: str) -> None:
    # Issue 38: the last 'Answer:' alone was read, so a hedge ending on the optimum paid.
    problem, exact = instance(name, 0, "easy"), solution(name, 0, "easy")
    reference = {"task": name, "instance": problem, "value": exact.value, "optimal": True}
    for response in (
        f"Answer: [0]\nOn reflection, no.\nAnswer: {exact.answer}",
        f"Answer: Impossible\nNo wait.\nAnswer: {exact.answer}",
    ):
        assert_invalid(VERIFIER(response, reference))


# --- the prompt ------------------------------------------------------------------------------


@by_task_and_level
def test_the_prompt_shows_the_instance_and_ends_with_the_response_format(
    name: str, level: Level
) -> None:
    task, problem = TASKS[name], instance(name, 0, level)
    prompt = build_prompt(task, problem)
    assert f"The {task.original_key} question is: {problem}\n" in prompt
    assert prompt.endswith(f"\n\n# Response format\n{RESPONSE_FORMAT}")
    assert prompt.startswith("# Introduction\n")
