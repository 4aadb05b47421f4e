"""The curriculum's rule in isolation (``envserver.curriculum.draw``): estimates, the band around
the target, exploration, fresh seeds where the pool is thin, a fixed pool, repeatability. The
routes through a live server are ``tests/test_curriculum_server.py``; how the rule trains
synthetic learners against uniform sampling is ``benchmarks/curriculum_sim.py``."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
from pydantic import BaseModel

from envserver.curriculum import (
    Rule,
    Seen,
    draw,
    histogram,
    posterior_mean,
    posterior_sd,
    weight,
)
from envserver.stats import Attempt, tallies


def _fresh() -> itertools.count[int]:
    return itertools.count()


def _unseen(counter: Iterator[int]) -> Callable[[int], list[str]]:
    return lambda k: [f"new/{next(counter)}" for _ in range(k)]


def _seen(rate: float, attempts: int, name: str) -> Seen:
    return Seen(name, rate * attempts, (1 - rate) * attempts, attempts)


def test_posterior() -> None:
    assert posterior_mean(0, 0) == 0.5
    assert posterior_mean(3, 1) == pytest.approx(4 / 6)
    # Beta(4, 2): variance ab / ((a + b)^2 (a + b + 1)) = 8 / (36 * 7).
    assert posterior_sd(3, 1) == pytest.approx((8 / 252) ** 0.5)
    assert weight(0.5, Rule()) == 1.0
    assert weight(0.5 + 0.2, Rule()) == pytest.approx(2.718281828**-0.5)
    assert weight(1.0, Rule(width=0.02)) > 0  # underflow is clamped: every weight is a key


def test_measured_tasks_near_the_target_are_drawn_and_the_rest_are_not() -> None:
    seen = (
        [_seen(0.5, 40, f"mid/{i}") for i in range(30)]
        + [_seen(1.0, 40, f"solved/{i}") for i in range(30)]
        + [_seen(0.0, 40, f"hopeless/{i}") for i in range(30)]
    )
    drawn = draw(seen, _unseen(_fresh()), 20, Rule(explore=0.0), random.Random(1))
    assert not any(drawn.fresh)
    assert all(t.startswith("mid/") for t in drawn.task_ids)
    assert len(set(drawn.task_ids)) == 20  # without replacement
    assert 25 <= drawn.in_band <= 30  # a Beta(21, 21) draw leaves the band now and then


def test_exploration_goes_to_unseen_tasks_at_its_rate() -> None:
    seen = [_seen(0.5, 40, f"mid/{i}") for i in range(2000)]
    drawn = draw(seen, _unseen(_fresh()), 2000, Rule(explore=0.25), random.Random(2))
    share = sum(drawn.fresh) / 2000
    assert 0.22 < share < 0.28  # binomial: sd about 0.01
    pairs = zip(drawn.task_ids, drawn.fresh, strict=True)
    assert all(task.startswith("new/") for task, fresh in pairs if fresh)


def test_a_thin_pool_is_topped_up_with_fresh_seeds() -> None:
    seen = [_seen(0.5, 40, "mid/0"), _seen(1.0, 40, "solved/0")]
    drawn = draw(seen, _unseen(_fresh()), 10, Rule(explore=0.0), random.Random(3))
    assert Counter(drawn.fresh) == {True: 9, False: 1}
    assert "mid/0" in drawn.task_ids and "solved/0" not in drawn.task_ids


def test_an_untried_task_is_sometimes_measured_again() -> None:
    # One failure in one attempt leaves a wide posterior: Thompson draws put it in band often.
    once = [_seen(0.0, 1, "once")]
    hits = sum(
        "once" in draw(once, _unseen(_fresh()), 1, Rule(explore=0.0), random.Random(s)).task_ids
        for s in range(400)
    )
    # P(theta in [0.5 - 0.235, 0.5 + 0.235]) for Beta(1, 2) is about 0.53.
    assert 0.4 < hits / 400 < 0.66
    many = [_seen(0.0, 60, "many")]
    hits = sum(
        "many" in draw(many, _unseen(_fresh()), 1, Rule(explore=0.0), random.Random(s)).task_ids
        for s in range(400)
    )
    assert hits == 0


def test_a_fixed_pool_is_exhausted_then_repeated() -> None:
    pool = ["a", "b", "c"]
    seen = [_seen(1.0, 10, "a")]
    untried = ["b", "c"]

    def unseen(count: int) -> list[str]:
        return random.Random(0).sample(untried, min(count, len(untried)))

    drawn = draw(seen, unseen, 7, Rule(explore=0.0), random.Random(4))
    counts = Counter(drawn.task_ids)
    assert set(counts) == set(pool)
    assert sum(counts.values()) == 7
    assert max(counts.values()) - min(counts.values()) <= 1  # cycled, not piled on one


def test_draws_repeat_with_the_seed() -> None:
    seen = [_seen(r / 10, 10, f"t{r}") for r in range(11)]

    def run(seed: int) -> list[str]:
        return draw(seen, _unseen(_fresh()), 8, Rule(), random.Random(seed)).task_ids

    assert run(7) == run(7)
    assert run(7) != run(8)


class _Options(BaseModel):
    level: int = 0


def test_outcomes_are_summed_per_task_and_fractional_rewards_split() -> None:
    attempts = [
        Attempt("", "r", "math", "1", "math@1/1", 1.0),
        Attempt("", "r", "math", "1", (1, _Options()), 0.0),  # the same task, by seed and options
        Attempt("", "r", "math", "1", "math@1/1", 0.25),
        Attempt("", "r", "math", "1", "math@1/1", 7.0),  # clamped: a reward above 1 is a success
        Attempt("", "r", "math", "1", (2, _Options(level=3)), 1.0),
        Attempt("k", "r", "math", "1", "math@1/1", 1.0),  # another caller's run
    ]
    rows = {(t.owner, t.task_id): t for t in tallies(attempts)}
    mine = rows["", "math@1/1"]
    assert (mine.successes, mine.failures, mine.attempts) == (2.25, 1.75, 4)
    assert (mine.env, mine.version, mine.options) == ("math", "1", "")
    assert rows["", "math@1/2?level=3"].options == "level=3"
    assert rows["k", "math@1/1"].attempts == 1
    bins = histogram(list(rows.values()))
    assert sum(b.tasks for b in bins) == 3
