"""A reset generates the instance only: the exact optimum is proved when a score needs it.

Issue 24: ``opt/min_bisection`` proved its optimum at reset (4-23 s per new seed on a loaded
machine), so a Gym agent waited seconds for a prompt. Each task's family is built here with a
solver that refuses to run, and every reset must still succeed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import httpx
import pytest

from environments.opt.family import OptBenchFamily, OptTaskFamily
from environments.opt.task import Instance, OptTask, Solution
from environments.opt.tasks import TASKS
from environments.single_turn import SingleTurnEnvironment

LEVELS = ("easy", "medium", "hard", "bench")


def _refusing(task: OptTask) -> OptTask:
    def solve(instance: Instance, budget: float) -> Solution:
        raise AssertionError(f"{task.name}: the exact solver ran")

    return dataclasses.replace(task, solve=solve)


def _counting(task: OptTask, calls: list[str]) -> OptTask:
    real: Callable[[Instance, float], Solution] = task.solve

    def solve(instance: Instance, budget: float) -> Solution:
        calls.append(task.name)
        return real(instance, budget)

    return dataclasses.replace(task, solve=solve)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_a_reset_never_runs_the_exact_solver(name: str) -> None:
    env = SingleTurnEnvironment(OptTaskFamily(_refusing(TASKS[name])))
    for level in LEVELS:
        options = env.spec.options_model.model_validate({"level": level})
        for seed in (101, 102):  # seeds outside the cached benchmark set (0..99)
            result = env.reset(seed, options)
            assert "Answer:" in str(result.observation)
            assert result.info["metadata"] == {
                "task": name,
                "category": TASKS[name].category,
                "level": level,
            }


def test_a_reset_of_the_mixed_benchmark_never_runs_the_exact_solver() -> None:
    env = SingleTurnEnvironment(OptBenchFamily([_refusing(task) for task in TASKS.values()]))
    options = env.spec.options_model.model_validate({"level": "hard"})
    for seed in range(1010, 1020):  # all ten tasks, member seed 101
        env.reset(seed, options)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_scoring_proves_the_optimum_once_and_scores_the_expert_one(name: str) -> None:
    calls: list[str] = []
    env = SingleTurnEnvironment(OptTaskFamily(_counting(TASKS[name], calls)))
    options = env.spec.options_model.model_validate({"level": "easy"})
    env.reset(103, options)
    assert calls == []
    state = {"seed": 103, "options": options.model_dump(mode="json"), "attempt": 0}
    expert = env.expert_action(state)
    score = env.score_response(103, options, expert)
    assert (score.status, score.reward, score.metrics["optimal"]) == ("ok", 1.0, 1.0)
    assert env.score_response(103, options, "Answer: [").status == "invalid"
    # Later scores of the same instance reuse the proved optimum (cached by digest).
    assert calls == [name]


def test_scoring_by_task_id_over_http_proves_the_optimum_then(base_url: str) -> None:
    env = SingleTurnEnvironment(OptTaskFamily(TASKS["min_bisection"]))
    options = env.spec.options_model.model_validate({"level": "easy"})
    state = {"seed": 104, "options": options.model_dump(mode="json"), "attempt": 0}
    expert = env.expert_action(state)
    with httpx.Client(base_url=base_url, timeout=120) as http:
        reset = http.post("/v1/envs/opt/min_bisection/reset", json={"seed": 104}).json()
        assert reset["status"] == "ok" and "reference_optimal" not in reset["info"]["metadata"]
        task_id = "opt/min_bisection@1/104?level=easy"
        items = [{"task_id": task_id, "response": expert}, {"task_id": task_id, "response": "x"}]
        results = http.post("/v1/verify", json={"items": items}).json()["results"]
    assert [(r["status"], r["reward"]) for r in results] == [("ok", 1.0), ("invalid", 0.0)]
    assert results[0]["metrics"]["optimal"] == 1.0
