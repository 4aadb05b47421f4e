"""The curriculum: task ids drawn by a run's measured pass rates (``POST /v1/curriculum/sample``)
and the run's estimates (``GET /v1/curriculum/{run}``), from the statistics the service keeps
(``envserver.stats``).

The rule, for a request ``{env, run, n, target = 0.5, width = 0.2, explore = 0.1}``:

1. The pool is the run's attempted tasks of ``env`` at its current version with the request's
   ``options`` (or, given ``tasks``, those of them the run attempted). Each task's pass rate has
   the posterior Beta(1 + s, 1 + f), from a uniform prior and its s successes and f failures (a
   reward r counts r of a success and 1 - r of a failure).
2. Each of the n draws is an *exploration* with probability ``explore``: it goes to an unseen
   task.
3. Every seen task draws one pass rate θ from its posterior (Thompson sampling: a task measured
   a few times is sometimes drawn near the target and so measured again) and gets the weight
   w = exp(-(θ - target)² / (2 width²)). Tasks with w ≥ 1/2 (θ within width·√(2 ln 2) ≈ 1.18
   width of the target) are *in band*; the draws that are not explorations take in-band tasks,
   without replacement, with probability proportional to w (Efraimidis and Spirakis' keys).
4. Where too few tasks are in band (the pool is thin: early in a run, or once the policy has
   outgrown its tasks), the remaining draws go to unseen tasks too: new seeds of ``env`` with
   the request's options, or, given ``tasks``, the unattempted ones among them (uniformly).
5. Given ``tasks`` and none left unseen, the remaining draws take the other seen tasks by
   weight; a request for more tasks than it lists repeats them in that order.

The draws come back shuffled, each with whether it is fresh (never attempted by the run) and its
estimate. A reply holds task ids and estimates only: nothing of a task's reference or content.
Only single-turn environments are served (their tasks are scored by id; a multi-turn
environment's episodes are counted, but drawn by its own reset). A draw reads what every
process and replica sharing the store has written: the outcomes this process recorded at once
(it writes them first), the others' within their ``ENVSERVER_STATS_FLUSH_S``. Draws made ahead
of scoring (a dataloader's prefetch) see the statistics as they were: a task drawn but not yet
scored is still unseen.

The rule in isolation (``draw``) is what ``benchmarks/curriculum_sim.py`` measures against
uniform sampling with synthetic learners.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import exp, log, sqrt
from typing import TYPE_CHECKING

from pydantic import BaseModel

from environments.base import Environment
from environments.task_id import MAX_SEED
from envserver.auth import CALLER
from envserver.problems import Problem, unavailable_problem
from envserver.service import Service, _validate_options
from envserver.stats import Recorder
from envserver.wire import (
    CurriculumReport,
    CurriculumRequest,
    CurriculumSample,
    DrawnTask,
    HistogramBin,
    ProblemKind,
    TaskEstimate,
)
from verifiers.base import Unavailable

if TYPE_CHECKING:  # SQLAlchemy is imported only where statistics are on
    from envserver.stats_store import Tally

BAND = 0.5
"""The weight from which a seen task is in band: its drawn pass rate within width·√(2 ln 2)."""
MIN_WEIGHT = 1e-300
"""Weights below this are this (a pass rate many widths away underflows to 0)."""
HISTOGRAM_BINS = 10
MAX_REPORT_TASKS = 10_000
STATS_OFF = Unavailable(
    "this server keeps no task statistics",
    "start it with ENVSERVER_STATS=1 (and ENVSERVER_STATS_STORE naming a shared store where "
    "replicas serve one run)",
)


@dataclass(frozen=True)
class Rule:
    """Where to centre the draws and how much to explore (see the module docstring)."""

    target: float = 0.5
    width: float = 0.2
    explore: float = 0.1


@dataclass(frozen=True)
class Seen:
    """A task the run attempted: its id and counts."""

    task_id: str
    successes: float
    failures: float
    attempts: int


@dataclass(frozen=True)
class Drawing:
    """The drawn task ids (``fresh``: never attempted) and how many seen tasks were in band."""

    task_ids: list[str]
    fresh: list[bool]
    in_band: int


def posterior_mean(successes: float, failures: float) -> float:
    """The mean of Beta(1 + successes, 1 + failures)."""
    return (1.0 + successes) / (2.0 + successes + failures)


def posterior_sd(successes: float, failures: float) -> float:
    """The standard deviation of Beta(1 + successes, 1 + failures)."""
    a, b = 1.0 + successes, 1.0 + failures
    return sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))


def weight(rate: float, rule: Rule) -> float:
    """The Gaussian weight of a pass rate around the rule's target."""
    return max(MIN_WEIGHT, exp(-((rate - rule.target) ** 2) / (2.0 * rule.width**2)))


def draw(
    seen: Sequence[Seen],
    unseen: Callable[[int], list[str]],
    n: int,
    rule: Rule,
    rng: random.Random,
) -> Drawing:
    """``n`` task ids by the rule: ``seen`` is the pool's attempted tasks, ``unseen(k)`` gives up
    to ``k`` distinct task ids never attempted (fewer when there are no more)."""
    explored = sum(rng.random() < rule.explore for _ in range(n))
    in_band: list[tuple[float, Seen]] = []
    rest: list[tuple[float, Seen]] = []
    for task in seen:
        w = weight(rng.betavariate(1.0 + task.successes, 1.0 + task.failures), rule)
        # Efraimidis-Spirakis: the k largest keys log(u) / w are a weighted sample of k.
        key = log(1.0 - rng.random()) / w
        (in_band if w >= BAND else rest).append((key, task))
    in_band.sort(key=lambda pair: pair[0], reverse=True)
    rest.sort(key=lambda pair: pair[0], reverse=True)
    chosen = [task.task_id for _, task in in_band[: n - explored]]
    fresh = unseen(n - len(chosen))
    order = chosen + fresh
    flags = [False] * len(chosen) + [True] * len(fresh)
    leftover = [task.task_id for _, task in in_band[len(chosen) :] + rest]
    order += leftover
    flags += [False] * len(leftover)
    if not order:
        return Drawing([], [], len(in_band))
    picked = [(order[i % len(order)], flags[i % len(order)]) for i in range(n)]
    rng.shuffle(picked)
    return Drawing([t for t, _ in picked], [f for _, f in picked], len(in_band))


def histogram(rows: Sequence[Tally]) -> list[HistogramBin]:
    """How many tasks' posterior means fall in each tenth of [0, 1]."""
    counts = [0] * HISTOGRAM_BINS
    for row in rows:
        mean = posterior_mean(row.successes, row.failures)
        counts[min(HISTOGRAM_BINS - 1, int(mean * HISTOGRAM_BINS))] += 1
    return [
        HistogramBin(low=i / HISTOGRAM_BINS, high=(i + 1) / HISTOGRAM_BINS, tasks=count)
        for i, count in enumerate(counts)
    ]


def _sampler(untried: list[str], rng: random.Random) -> Callable[[int], list[str]]:
    """Up to ``count`` of ``untried``, uniformly without replacement."""
    return lambda count: rng.sample(untried, min(count, len(untried)))


def _options_part(task_id: str) -> str:
    return task_id.partition("?")[2]


class Curriculum:
    """The curriculum routes' logic over a service and its statistics."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def _recorder(self) -> Recorder:
        if self.service.recorder is None:
            raise unavailable_problem(f"{STATS_OFF.reason}: {STATS_OFF.fix}", STATS_OFF)
        return self.service.recorder

    def _single_turn(self, env_id: str) -> Environment:
        env = self.service.env(env_id)
        if env.spec.kind != "single_turn":
            raise Problem(
                400,
                f"env: {env_id} is a multi-turn environment; a curriculum draws task ids of "
                "single-turn ones (scored by id)",
                kind=ProblemKind.NOT_SINGLE_TURN,
            )
        return env

    def _canonical(self, env: Environment, texts: Sequence[str]) -> list[str]:
        """The pool's task ids in canonical form (as the statistics keep them)."""
        canonical: list[str] = []
        for index, text in enumerate(texts):
            try:
                task_env, task, options = self.service._task(text, None)
            except Problem as problem:
                detail = f"tasks.{index}: {problem.detail}"
                raise Problem(problem.status, detail, kind=problem.kind) from None
            if task_env is not env:
                raise Problem(
                    400,
                    f"tasks.{index}: the task is {task.env!r}'s, not {env.spec.id!r}'s",
                    kind=ProblemKind.FOREIGN_TASK,
                )
            formatted = self.service.task_id(env, task.seed, options)
            canonical.append(formatted if formatted is not None else text)
        return canonical

    def _new_seeds(
        self, env: Environment, options: BaseModel, taken: set[str], rng: random.Random
    ) -> Callable[[int], list[str]]:
        def fresh(count: int) -> list[str]:
            found: list[str] = []
            while len(found) < count:
                task_id = self.service.task_id(env, rng.randrange(MAX_SEED + 1), options)
                assert task_id is not None  # checked on the request's options
                if task_id not in taken:
                    taken.add(task_id)
                    found.append(task_id)
            return found

        return fresh

    async def sample(self, request: CurriculumRequest) -> CurriculumSample:
        """Draw ``request.n`` task ids by the rule (the module docstring)."""
        recorder = self._recorder()
        env = self._single_turn(request.env)
        spec = env.spec
        rng = random.Random(request.seed if request.seed is not None else secrets.randbits(64))
        rule = Rule(request.target, request.width, request.explore)
        pool: list[str] | None = None
        options: BaseModel | None = None
        if request.tasks is not None:
            pool = await asyncio.to_thread(self._canonical, env, request.tasks)
        else:
            options = _validate_options(spec.options_model, request.options, None, "options")
            if self.service.task_id(env, 0, options) is None:
                raise Problem(
                    400,
                    f"options: too large for a task id of {spec.id}, so its tasks cannot be "
                    "drawn by id",
                    kind=ProblemKind.NO_TASK_IDS,
                )
        await recorder.flush()  # what this process recorded is read back
        rows = await asyncio.to_thread(
            recorder.store.tasks, CALLER.get(), request.run, spec.id, spec.version
        )
        if pool is not None:
            members = set(pool)
            rows = [row for row in rows if row.task_id in members]
            attempted = {row.task_id for row in rows}
            untried = list(dict.fromkeys(t for t in pool if t not in attempted))
            unseen = _sampler(untried, rng)

        else:
            assert options is not None
            wanted = _options_part(self.service.task_id(env, 0, options) or "")
            rows = [row for row in rows if row.options == wanted]
            unseen = self._new_seeds(env, options, {row.task_id for row in rows}, rng)
        seen = [Seen(r.task_id, r.successes, r.failures, r.attempts) for r in rows]
        drawing = draw(seen, unseen, request.n, rule, rng)
        counts = {row.task_id: row for row in rows}
        tasks = []
        for task_id, fresh in zip(drawing.task_ids, drawing.fresh, strict=True):
            row = counts.get(task_id)
            tasks.append(
                DrawnTask(
                    task_id=task_id,
                    fresh=fresh,
                    attempts=row.attempts if row else 0,
                    mean=posterior_mean(row.successes, row.failures) if row else 0.5,
                )
            )
        return CurriculumSample(
            env=spec.id,
            run=request.run,
            tasks=tasks,
            seen=len(seen),
            in_band=drawing.in_band,
            fresh=sum(drawing.fresh),
        )

    async def report(self, run: str, env_id: str | None, limit: int) -> CurriculumReport:
        """The run's estimates (of one environment, when given): the ``limit`` most attempted
        tasks, and a histogram of all."""
        recorder = self._recorder()
        if env_id is not None:
            self.service.env(env_id)  # 404 for an unknown one
        await recorder.flush()
        rows = await asyncio.to_thread(recorder.store.tasks, CALLER.get(), run, env_id)
        return CurriculumReport(
            run=run,
            env=env_id,
            total=len(rows),
            attempts=sum(row.attempts for row in rows),
            tasks=[
                TaskEstimate(
                    task_id=row.task_id,
                    attempts=row.attempts,
                    successes=row.successes,
                    mean=posterior_mean(row.successes, row.failures),
                    sd=posterior_sd(row.successes, row.failures),
                )
                for row in rows[:limit]
            ],
            histogram=histogram(rows),
        )
