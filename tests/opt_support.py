"""Shared helpers for the OPT-BENCH tests: seeded instances, cached exact solutions, scoring.

Every test instance is ``task.generate(random.Random(seed), level)``: one convention for all ten
tasks, so an instance (and its exact solution, which may take seconds) is built once per test
session however many test files use it. Cached instances are shared: tests must not mutate them.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from functools import cache
from typing import TypeVar

from environments.opt.references import ON_DEMAND_BUDGET
from environments.opt.task import LEVELS, Instance, Level, Solution
from environments.opt.tasks import TASKS
from verifiers.opt import VERIFIER
from verifiers.score import Score

Planted = TypeVar("Planted")

# The seeds whose exact solutions the tests check, per task and level. The generic tests
# (tests/test_opt_tasks.py) check all of them and the task files cross-check the same seeds, so
# each is solved once. Proving an optimum takes milliseconds for most tasks; tsp (hard, bench)
# and min_bisection (every level) take about 0.5-2 s an instance, so they get fewer seeds
# (min_bisection's medium seed 0 alone takes 4-6 s: seed 1 stands in for the level).
SOLVED_SEEDS: dict[str, dict[Level, range]] = {
    **{name: dict.fromkeys(LEVELS, range(12)) for name in TASKS},
    "subset_sum": dict.fromkeys(LEVELS, range(40)),
    "set_cover": dict.fromkeys(LEVELS, range(40)),
    "meeting_schedule": dict.fromkeys(LEVELS, range(25)),
    "tsp": {"easy": range(20), "medium": range(10), "hard": range(3), "bench": range(4)},
    "min_bisection": {"easy": range(1), "medium": range(1, 2), "hard": range(1), "bench": range(3)},
}

# Answers that no task can read: junk names, strings, floats (integral ones too), booleans,
# dicts and sets, lists nested deeper than any task's answer, an empty list, negative and
# out-of-range ids, code (never run), words, pathological nesting and sizes, a huge integer.
MALFORMED_ANSWERS: list[str] = [
    "",
    "[a, b]",
    "0 -> x -> 0",
    "It is impossible to say",
    "['0', '1']",
    "[1.5, 2]",
    "[0.0, 1.0, 0.0]",
    "[True]",
    "[True, False, True]",
    "{'x': 1}",
    "{0: 1, 1: 2}",
    "{1, 2}",
    "[[[0]], [[1]]]",
    "[-1, 0]",
    "[-1, 0, 1, -1]",
    "[0, 999]",
    "[99, 0, 1, 99]",
    "[len('ab')]",
    "[len('abc'), 0, 1]",
    "__import__('os').system('true')",
    "[x for x in range(3)]",
    "[" * 5000 + "]" * 5000,
    "(" * 5000 + ")" * 5000,
    "{" * 5000,
    "[" * 5000,
    "[" + ", ".join(["0"] * 100_000) + "]",
    ", ".join(["1"] * 100_000),
    "[0, 1, " + "9" * 5000 + "]",
    # Exactly the documented grammar (verifiers/opt/answer.py): digit separators, signs, other
    # numerals and bases, text after or around the value, wrapped values.
    "[1_2, 0]",
    "1_0, 2",
    "[-0, 1]",
    "-0",
    "[+1, 0]",
    "[01, 2]",
    "[0x1, 0]",
    "[1e0, 0]",
    "[\uff10, 1]",  # a full-width digit zero
    "[\u0663, 1]",  # an Arabic-Indic digit three
    "[0]*50",
    "[0, 1] [2]",
    "[0, 1] and nothing else",
    "The answer is [0, 1]",
    "<[0, 1]>",
    "<0, 1>",
    "[0, 1)",
    "0 -> 1 -> 0 done",
    "0 -> -0 -> 0",
    "[0 -> 1] -> 0",
]
# Answers malformed for every task but one, where they mean something: min_bisection's answer is
# two lists, and set_cover may claim (wrongly, on generated instances) that no cover exists.
MALFORMED_EXCEPT_FOR: dict[str, str] = {
    "[[1], [2]]": "min_bisection",
    "Impossible": "set_cover",
    "[]": "meeting_schedule",  # holding no meeting is a (worthless) schedule
}


def rng(seed: int) -> random.Random:
    """The generator every test instance of ``seed`` is drawn from (at any level, any task)."""
    return random.Random(seed)


def planted(
    plant: Callable[[random.Random, Level], tuple[Instance, Planted]], seed: int, level: Level
) -> tuple[Instance, Planted]:
    """A task module's ``plant`` drawn for ``seed``: the instance (``generate`` makes the same
    one, which the task tests check) and the solution planted in it."""
    return plant(rng(seed), level)


@cache
def instance(task: str, seed: int, level: Level) -> Instance:
    """The instance of ``task`` for ``seed`` at ``level`` (cached and shared: do not mutate)."""
    return TASKS[task].generate(rng(seed), level)


@cache
def _solved(task: str, seed: int, level: Level) -> tuple[Solution, float]:
    began = time.perf_counter()
    solution = TASKS[task].solve(instance(task, seed, level), ON_DEMAND_BUDGET)
    return solution, time.perf_counter() - began


def solution(task: str, seed: int, level: Level) -> Solution:
    """The exact solution of ``instance(task, seed, level)`` within the on-demand budget
    (cached: it is solved once per test session)."""
    return _solved(task, seed, level)[0]


def solved(task: str, level: Level) -> Iterator[tuple[int, Instance, Solution]]:
    """``(seed, instance, exact solution)`` for each of ``SOLVED_SEEDS[task][level]``."""
    for seed in SOLVED_SEEDS[task][level]:
        yield seed, instance(task, seed, level), solution(task, seed, level)


def solve_seconds(task: str, seed: int, level: Level) -> float:
    """The wall-clock seconds that ``solution(task, seed, level)`` took to solve."""
    return _solved(task, seed, level)[1]


def assert_solved_quickly_and_reproducibly(
    task: str, level: Level, seeds: range, limit: float
) -> list[float]:
    """Each seed's instance is solved to a proven optimum within ``limit`` wall seconds, and a
    second solve gives the very same solution (one worker, a fixed seed). The solve times."""
    times = []
    for seed in seeds:
        first = solution(task, seed, level)
        assert first.optimal, (task, level, seed)
        assert TASKS[task].solve(instance(task, seed, level), ON_DEMAND_BUDGET) == first
        times.append(solve_seconds(task, seed, level))
    assert max(times) < limit, times
    return times


def assert_simple_graph(graph: Instance) -> None:
    """String keys 0..n-1 in order, each row a sorted set of neighbours without the vertex itself,
    and every edge listed both ways. A row is a list of integers or a dict ``{"neighbour": 1}``."""

    def neighbours(row: list[int] | dict[str, int]) -> list[int]:
        if isinstance(row, dict):
            assert set(row.values()) <= {1}, row
            assert all(key == str(int(key)) for key in row), row
            return [int(key) for key in row]
        assert all(type(v) is int for v in row), row
        return row

    assert list(graph) == [str(u) for u in range(len(graph))]
    for key, row in graph.items():
        around = neighbours(row)
        assert around == sorted(set(around)) and int(key) not in around, (key, row)
        assert all(int(key) in neighbours(graph[str(v)]) for v in around), (key, row)


def score(
    task_name: str, instance: Instance, answer: str, value: float, optimal: bool = True
) -> Score:
    """The verifier's score of ``Reasoning.\\nAnswer: <answer>`` against the reference
    objective ``value`` (a proven optimum unless ``optimal`` is false)."""
    reference = {"task": task_name, "instance": instance, "value": value, "optimal": optimal}
    return VERIFIER(f"Reasoning.\nAnswer: {answer}", reference)


def assert_infeasible(result: Score, reason: str) -> None:
    """Reward 0 with status ok and the reason in the detail (a real zero, not a parse error)."""
    assert result.status == "ok", result
    assert result.reward == 0.0, result
    assert result.components["feasible"] == 0.0
    assert result.detail.startswith("infeasible:"), result.detail
    assert reason in result.detail, result.detail


def assert_invalid(result: Score, reason: str = "") -> None:
    """Status invalid, reward 0, and a detail that says why (containing ``reason`` if given)."""
    assert (result.status, result.reward) == ("invalid", 0.0), result
    assert result.detail, result
    assert reason in result.detail, result.detail
