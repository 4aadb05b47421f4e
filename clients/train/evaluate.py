"""pass@k of a policy on held-out tasks of a single-turn environment: generate n = max(k)
samples per task, score them through the service by task id, and estimate pass@k per group
(a difficulty) with bootstrap intervals (``clients.passk``). ``envserver eval`` runs it on a
model directory (or ``tiny``); ``envserver-train --eval-every`` on the policy being trained.

Held-out tasks are seeds from ``HELD_OUT_SEED`` (2^62) up, which a training run never draws (the
trainer's seeds lie below 2^40; the curriculum's fresh seeds are random in [0, 2^63), so a
collision with N held-out tasks has probability about N / 2^63). Tasks are spread evenly over
the values of the grouping option (``difficulty`` where the environment has one with a fixed
set of values), and each keeps the value it was made with as its group.

A sample is correct when its reward is at least ``threshold`` (1.0: a full pass); a sample the
service could not score (``timeout``/``error``) is left out of its task's n, and a task with
fewer than k scored samples is left out of that k's estimate (the table counts the tasks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clients.http import EnvServerClient
from clients.passk import PassAtK, TaskResult, estimate
from envserver.wire import EnvInfo, Observation

HELD_OUT_SEED = 2**62
"""The first seed of the held-out tasks."""
SCORE_BATCH = 512
"""Samples per ``/v1/verify`` request."""
RESET_BATCH = 256
GROUP_OPTION = "difficulty"

Generate = Callable[[Sequence[Observation], int], list[list[str]]]
"""``generate(prompts, n)``: n sampled completions for each prompt."""


@dataclass(frozen=True)
class HeldOutTask:
    """A held-out task: its id, its group and its prompt."""

    task_id: str
    group: str
    observation: Observation


def group_values(env: EnvInfo, option: str) -> list[Any]:
    """The values of ``env``'s option ``option`` when it takes one of a fixed set (an enum in
    its schema); empty otherwise."""
    schema: Mapping[str, Any] = env.options_schema.get("properties", {}).get(option, {})
    if "enum" in schema:
        return list(schema["enum"])
    ref = schema.get("$ref") or next((s.get("$ref") for s in schema.get("allOf", [])), None)
    if isinstance(ref, str):
        named = env.options_schema.get("$defs", {}).get(ref.rsplit("/", 1)[-1], {})
        return list(named.get("enum", []))
    return []


def held_out_tasks(
    client: EnvServerClient,
    env_id: str,
    count: int,
    options: Mapping[str, Any] | None = None,
    group_by: str | None = GROUP_OPTION,
) -> list[HeldOutTask]:
    """``count`` held-out tasks of ``env_id`` (single-turn), spread over the values of
    ``group_by`` where the environment has such an option and ``options`` does not fix it.
    Raises ValueError for a multi-turn environment."""
    env = client.env(env_id)
    if env.kind != "single_turn":
        raise ValueError(f"{env_id} is multi-turn: pass@k scores single responses by task id")
    fixed = dict(options or {})
    values = group_values(env, group_by) if group_by and group_by not in fixed else []
    plans: list[tuple[int, dict[str, Any], str]] = []
    for index in range(count):
        chosen = dict(fixed)
        if values:
            chosen[group_by or ""] = values[index % len(values)]
        group = str(chosen.get(group_by, "all")) if group_by else "all"
        plans.append((HELD_OUT_SEED + index, chosen, group))
    tasks: list[HeldOutTask] = []
    for start in range(0, len(plans), RESET_BATCH):
        part = plans[start : start + RESET_BATCH]
        items = [{"seed": seed, "options": chosen} for seed, chosen, _ in part]
        for (_, _, group), episode in zip(
            part, client.reset_batch(env_id, items).results, strict=True
        ):
            if episode.status != "ok" or episode.task_id is None:
                raise RuntimeError(f"a held-out task of {env_id} failed: {episode.detail}")
            tasks.append(HeldOutTask(episode.task_id, group, episode.observation or ""))
    return tasks


def score_samples(
    client: EnvServerClient,
    tasks: Sequence[HeldOutTask],
    samples: Sequence[Sequence[str]],
    threshold: float = 1.0,
) -> list[TaskResult]:
    """Each task's counts from its samples, scored by task id (``SCORE_BATCH`` per request)."""
    items = [
        {"task_id": task.task_id, "response": text}
        for task, texts in zip(tasks, samples, strict=True)
        for text in texts
    ]
    results = []
    for start in range(0, len(items), SCORE_BATCH):
        results += client.verify(items[start : start + SCORE_BATCH]).results
    counted: list[TaskResult] = []
    position = 0
    for task, texts in zip(tasks, samples, strict=True):
        mine = results[position : position + len(texts)]
        position += len(texts)
        scored = [r for r in mine if r.reward is not None]
        correct = sum(r.reward is not None and r.reward >= threshold for r in scored)
        counted.append(
            TaskResult(task.task_id, task.group, len(scored), correct, len(mine) - len(scored))
        )
    return counted


def evaluate(
    client: EnvServerClient,
    tasks: Sequence[HeldOutTask],
    generate: Generate,
    ks: Sequence[int],
    *,
    threshold: float = 1.0,
    seed: int = 0,
) -> tuple[list[PassAtK], list[TaskResult]]:
    """pass@k of ``generate``'s samples on ``tasks`` (n = max(ks) samples each)."""
    samples = generate([task.observation for task in tasks], max(ks))
    results = score_samples(client, tasks, samples, threshold)
    return estimate(results, ks, seed=seed), results


def parse_ks(text: str) -> list[int]:
    """``"1,8,32"`` as sorted distinct positive integers; raises ValueError otherwise."""
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise ValueError(f"k must be positive integers separated by commas, not {text!r}") from None
    if not ks or ks[0] < 1:
        raise ValueError(f"k must be positive integers separated by commas, not {text!r}")
    return ks
