"""L4, solver-relative difficulty: pass rates per difficulty level from supplied rollouts or a
configured solver endpoint, admitted inside a band."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from environments.evo.endpoints import complete
from environments.evo.program import Call, run_calls, score_call, task_call

PASSING = 1.0 - 1e-9


@dataclass(frozen=True)
class Rollout:
    """A solver's response to the task ``(seed, difficulty)`` names."""

    seed: int
    difficulty: int
    response: str


def pass_rates(source: str, rollouts: list[Rollout]) -> dict[int, float]:
    """The share of rollouts per difficulty level that score 1, scored in the sandbox; raises
    ``ProgramFailure``/``SandboxFailure`` as ``run_calls`` does."""
    tasks = run_calls(source, [task_call(r.seed, r.difficulty) for r in rollouts])
    calls: list[Call] = [
        score_call(task.value["instance"], rollout.response)
        for task, rollout in zip(tasks, rollouts, strict=True)
        if task.error is None
    ]
    if len(calls) != len(rollouts):
        raise ValueError("a rollout names a task the environment cannot generate")
    scores = run_calls(source, calls)
    passed: dict[int, list[bool]] = defaultdict(list)
    for rollout, result in zip(rollouts, scores, strict=True):
        value = result.value if result.error is None else None
        passed[rollout.difficulty].append(isinstance(value, int | float) and value >= PASSING)
    return {level: sum(flags) / len(flags) for level, flags in sorted(passed.items())}


def solver_rollouts(
    source: str, url: str, model: str, difficulties: tuple[int, ...], samples: int
) -> list[Rollout]:
    """``samples`` responses per difficulty from the solver at ``url`` (seeds 1000…), on the
    prompts the environment generates in the sandbox."""
    wanted = [(1000 + i, level) for level in difficulties for i in range(samples)]
    tasks = run_calls(source, [task_call(seed, level) for seed, level in wanted])
    return [
        Rollout(seed, level, complete(url, model, str(task.value["prompt"])))
        for (seed, level), task in zip(wanted, tasks, strict=True)
        if task.error is None
    ]


def outside_band(rates: dict[int, float], band: tuple[float, float]) -> str | None:
    """Why ``rates`` fall outside ``band`` (too easy or too hard), or None."""
    low, high = band
    easy = [f"{level}: {rate:.0%}" for level, rate in rates.items() if rate > high]
    hard = [f"{level}: {rate:.0%}" for level, rate in rates.items() if rate < low]
    if easy and len(easy) == len(rates):
        return f"too easy for the solver at every level ({', '.join(easy)} > {high:.0%})"
    if hard and len(hard) == len(rates):
        return f"too hard for the solver at every level ({', '.join(hard)} < {low:.0%})"
    return None
