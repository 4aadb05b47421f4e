"""The curriculum's rule against uniform sampling, with synthetic learners (issue 43).

The rule is the service's own (``envserver.curriculum.draw``, with its defaults: target 0.5,
width 0.2, exploration 0.1), fed the outcomes the simulated learner produces, as the service's
statistics would hold them. No server: the question is what the rule draws, not how fast.

The learner: a fresh task's difficulty d is drawn from N(0, 2.5²); its pass probability is
p = sigmoid(s + b - d), with s the learner's skill (0 at the start) and b the practice it has had
on that task (0 at the start). Practising a task samples ``GROUP`` completions (k of them pass,
k ~ Binomial(GROUP, p)), as a GRPO step does; the update it gets is proportional to the variance
of the group's rewards, (k / G)(1 - k / G): a group all right or all wrong carries no advantage and
teaches GRPO nothing. The skill moves by ``TRANSFER`` times that (it lifts every task), the
task's practice by ``PRACTICE`` times that.

Reported, for each sampler: the share of sampled tasks whose pass probability (at the moment
they were drawn) lay in the 20-80 % band, and the learner's progress per 1,000 sampled tasks:
the rise of its mean pass probability on 500 held-out fresh tasks (skill only: practice on the
held-out tasks is none). Two settings: tasks generated on demand (a seed per task, as the
service's environments give them), and a fixed pool of 2,000 tasks (a dataset).

    .venv/bin/python -m benchmarks.curriculum_sim [--samples 12000] [--seeds 3]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from envserver.curriculum import Rule, Seen, draw

GROUP = 8
"""Completions per sampled task (a GRPO group)."""
BATCH = 32
"""Tasks per draw (a trainer's prompts per step)."""
TRANSFER = 0.0015
PRACTICE = 0.15
DIFFICULTY_SD = 2.5
HELD_OUT = 500
POOL = 2000
BAND = (0.2, 0.8)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@dataclass
class Learner:
    """The synthetic learner and its tasks (see the module docstring)."""

    rng: random.Random
    skill: float = 0.0
    difficulty: dict[str, float] = field(default_factory=dict)
    practice: dict[str, float] = field(default_factory=dict)
    counts: dict[str, list[float]] = field(default_factory=dict)
    """Per task: successes, failures, attempts (what the service's statistics would hold)."""

    def new_task(self) -> str:
        task = f"t{len(self.difficulty)}"
        self.difficulty[task] = self.rng.gauss(0.0, DIFFICULTY_SD)
        self.practice[task] = 0.0
        return task

    def pass_rate(self, task: str) -> float:
        return _sigmoid(self.skill + self.practice[task] - self.difficulty[task])

    def practise(self, task: str) -> bool:
        """One group on ``task``; whether its pass rate was in the band when drawn."""
        p = self.pass_rate(task)
        passed = sum(self.rng.random() < p for _ in range(GROUP))
        share = passed / GROUP
        signal = share * (1.0 - share)
        self.skill += TRANSFER * signal
        self.practice[task] += PRACTICE * signal
        counts = self.counts.setdefault(task, [0.0, 0.0, 0.0])
        counts[0] += passed
        counts[1] += GROUP - passed
        counts[2] += GROUP
        return BAND[0] <= p <= BAND[1]

    def seen(self, tasks: set[str] | None = None) -> list[Seen]:
        return [
            Seen(task, s, f, int(n))
            for task, (s, f, n) in self.counts.items()
            if tasks is None or task in tasks
        ]


Sampler = Callable[[Learner, random.Random, list[str]], list[str]]
"""Draws ``BATCH`` task ids for the learner (the pool: empty when tasks are made on demand)."""


def uniform(learner: Learner, rng: random.Random, pool: list[str]) -> list[str]:
    if pool:
        return [rng.choice(pool) for _ in range(BATCH)]
    return [learner.new_task() for _ in range(BATCH)]


def curriculum(learner: Learner, rng: random.Random, pool: list[str]) -> list[str]:
    if pool:
        members = set(pool)
        untried = [t for t in pool if t not in learner.counts]
        drawn = draw(
            learner.seen(members),
            lambda k: rng.sample(untried, min(k, len(untried))),
            BATCH,
            Rule(),
            rng,
        )
        return drawn.task_ids
    return draw(
        learner.seen(), lambda k: [learner.new_task() for _ in range(k)], BATCH, Rule(), rng
    ).task_ids


@dataclass(frozen=True)
class Outcome:
    in_band: float
    progress: float
    start: float
    final: float


def simulate(sampler: Sampler, samples: int, seed: int, pooled: bool) -> Outcome:
    """One learner trained on ``samples`` tasks drawn by ``sampler``."""
    learner = Learner(random.Random(f"learner/{seed}"))
    judge = random.Random(f"held-out/{seed}")
    held_out = [judge.gauss(0.0, DIFFICULTY_SD) for _ in range(HELD_OUT)]
    pool = [learner.new_task() for _ in range(POOL)] if pooled else []
    rng = random.Random(f"sampler/{seed}")

    def score() -> float:
        return statistics.fmean(_sigmoid(learner.skill - d) for d in held_out)

    start = score()
    in_band = drawn = 0
    while drawn < samples:
        for task in sampler(learner, rng, pool):
            in_band += learner.practise(task)
            drawn += 1
    end = score()
    return Outcome(in_band / drawn, (end - start) / drawn * 1000, start, end)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=12_000, help="tasks drawn per learner")
    parser.add_argument("--seeds", type=int, default=3, help="learners per sampler")
    args = parser.parse_args()
    print(
        f"{args.samples} sampled tasks per learner, {args.seeds} learners each, groups of "
        f"{GROUP}, draws of {BATCH}"
    )
    print(
        f"{'tasks':<10} {'sampler':<11} {'in 20-80 % band':>16} {'progress / 1,000':>17} "
        f"{'held-out pass rate: start -> end':>34}"
    )
    for pooled in (False, True):
        for name, sampler in (("uniform", uniform), ("curriculum", curriculum)):
            runs = [simulate(sampler, args.samples, seed, pooled) for seed in range(args.seeds)]
            band = [r.in_band for r in runs]
            progress = [r.progress for r in runs]
            start = [r.start for r in runs]
            final = [r.final for r in runs]
            setting = f"pool {POOL}" if pooled else "generated"
            print(
                f"{setting:<10} {name:<11} {statistics.fmean(band):>10.1%} ± {_spread(band):.1%} "
                f"{statistics.fmean(progress):>10.4f} ± {_spread(progress):.4f} "
                f"{statistics.fmean(start):>18.3f} -> {statistics.fmean(final):.3f} ± "
                f"{_spread(final):.3f}"
            )


def _spread(values: list[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


if __name__ == "__main__":
    main()
