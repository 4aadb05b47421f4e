"""The searching adversary of ``envserver audit --search``: per family, start from answers that
earn reward, mutate them with the family's moves (``environments.search``), score every mutant
where the red-team audit scores its cases (in this process or on a live server), and report
each mutant that earns more than it deserves.

Why a search and not only a list: the shipped red-team suites passed 303 of 303 cases while an
outside audit still earned reward with answers nobody had listed (a dummy symbol in an answer to
a value, a difference past the horizon a checker looked at, backdoored scorers of submitted
environments). A policy under RL searches; so does this, within a budget, from a seed it prints
so any finding can be replayed.

The search is a small evolutionary loop. Each round takes a parent (a fresh seed half of the
time, else a mutant that earned reward, else any recent mutant, so moves compose: a wrapper
around a hedge), applies the next move class in turn (every class gets its share even under a
small budget) and judges each mutant:

- **paid**: its reward exceeds what it deserves (its move settled it, or the family's independent
  judge decided it). This is the finding the audit fails on.
- **dodged**: it deserves 0 and came back ``timeout`` (a trainer masks it, so a slow wrong answer
  escapes its 0), or took longer than its verifier's time limit to score in this process.
- **refused**: it deserves full reward by the judge (an equivalent form of a right answer) and
  earned less: the price in legitimate answers, reported, not failed.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from environments.search import Mutant, Probe, SearchSpace
from envserver.redteam import NO_REWARD, Got, Target, score_case

EPSILON = 1e-9
POPULATION = 64
"""Mutants kept as parents (each pool): enough for moves to compose, few enough to stay near the
seeds, where the verifier's decisions are."""
EXAMPLES = 3
"""Findings kept as examples per move class and kind (all are counted)."""
MAX_ERRORS = 10
"""Why mutants could not be scored: the first few reasons are kept for the report."""


@dataclass(frozen=True)
class Finding:
    """A mutant judged paid or dodged: what it is, what it got and what it deserved."""

    kind: str
    move: str
    probe: Probe
    got: Got
    deserves: float

    def as_json(self) -> dict[str, Any]:
        probe = self.probe
        where = {
            key: value
            for key, value in (
                ("task_id", probe.task_id),
                ("verifier", probe.verifier),
                ("reference", probe.reference),
                ("options", dict(probe.options) or None),
                ("env", probe.env),
                ("seed", probe.seed),
                ("actions", list(probe.actions) if probe.actions is not None else None),
            )
            if value is not None
        }
        return {
            "kind": self.kind,
            "move": self.move,
            "origin": probe.origin,
            **where,
            "response": probe.response if probe.env is None else None,
            "status": self.got.status,
            "reward": self.got.reward,
            "deserves": self.deserves,
            "detail": self.got.detail,
        }


@dataclass
class Report:
    """One family's search: answers tried, paid and dodged (by move class, with the first few
    findings of each class as examples), the price in refused legitimate answers, the time."""

    family: str
    seed: int
    tried: Counter[str] = field(default_factory=Counter)
    paid: Counter[str] = field(default_factory=Counter)
    dodged: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    unscored: Counter[str] = field(default_factory=Counter)
    misjudged: Counter[str] = field(default_factory=Counter)
    """Mutants whose family judge raised (a bug in the judge; they count as undecided)."""
    examples: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def found(self, finding: Finding) -> None:
        """Count ``finding``; keep it as an example while its class has few."""
        counts = self.paid if finding.kind == "paid" else self.dodged
        counts[finding.move] += 1
        if counts[finding.move] <= EXAMPLES:
            self.examples.append(finding)

    @property
    def failed(self) -> bool:
        """Whether any mutant was paid more than it deserves, or dodged its 0."""
        return bool(self.paid or self.dodged)

    def as_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "seed": self.seed,
            "seconds": round(self.seconds, 2),
            **{
                name: {"total": counts.total(), "by_move": dict(counts)}
                for name, counts in (
                    ("tried", self.tried),
                    ("paid", self.paid),
                    ("dodged", self.dodged),
                    ("refused", self.refused),
                    ("unscored", self.unscored),
                    ("misjudged", self.misjudged),
                )
            },
            "examples": [finding.as_json() for finding in self.examples],
            "errors": self.errors,
        }


def last_move(probe: Probe) -> str:
    """The class of the move that made ``probe`` (``hedge`` of ``... > hedge.or``)."""
    return probe.origin.rsplit(" > ", maxsplit=1)[-1].split(".", maxsplit=1)[0]


class _Scored:
    """A probe's score as the audit's ``Got``, and the seconds it took."""

    def __init__(self, target: Target, probe: Probe) -> None:
        started = time.monotonic()
        self.got = score_case(target, probe)
        self.seconds = time.monotonic() - started


def search(
    family: str,
    space: SearchSpace,
    target: Target,
    *,
    budget_s: float,
    seed: int,
    time_limit_s: Mapping[str, float] | None = None,
    min_tries: int = 0,
    max_tries: int | None = None,
) -> Report:
    """Search ``space`` on ``target`` for ``budget_s`` seconds (or ``max_tries`` mutants, and
    at least ``min_tries`` however long they take: a family whose first seeds are slow to make
    still gets searched), from ``seed``. ``time_limit_s`` gives each target's time limit
    (verifier or environment): a wrong answer that takes longer to score in this process is
    dodged."""
    rng = random.Random(seed)
    report = Report(family, seed)
    started = time.monotonic()
    deadline = started + budget_s
    seeds = _endless(space, rng)
    paying: list[Mutant] = []
    recent: list[Mutant] = []
    moves = list(space.mutators)
    seen: set[str] = set()
    turn = 0

    def going() -> bool:
        tried = report.tried.total()
        within = time.monotonic() < deadline or tried < min_tries
        return within and (max_tries is None or tried < max_tries)

    while going():
        draw = rng.random()
        if draw < 0.5 or not recent:
            parent = next(seeds)
        elif draw < 0.85 and paying:
            parent = rng.choice(paying)
        else:
            parent = rng.choice(recent)
        move = moves[turn % len(moves)]
        turn += 1
        for mutant in move(parent, rng):
            if not going():
                break
            key = _key(mutant.probe)
            if key in seen:
                continue
            seen.add(key)
            outcome = _judge(report, space, target, mutant, time_limit_s or {})
            if outcome != "found":  # a finding's descendants would only repeat it
                _keep(recent, mutant, rng)
            if outcome == "earned":
                _keep(paying, mutant, rng)
    report.seconds = time.monotonic() - started
    return report


def _endless(space: SearchSpace, rng: random.Random) -> Iterator[Mutant]:
    """The family's seeds, drawn again whenever they run out."""
    while True:
        drawn = False
        for seed in space.seeds(rng):
            drawn = True
            yield seed
        if not drawn:
            raise ValueError("the family's search space yields no seeds")


def _key(probe: Probe) -> str:
    """What makes two probes the same answer to the same target (the origin does not)."""
    return repr(
        (
            probe.task_id,
            probe.verifier,
            json.dumps(probe.reference, sort_keys=True, default=repr),
            json.dumps(dict(probe.options), sort_keys=True, default=repr),
            probe.env,
            probe.seed,
            probe.actions,
            probe.response,
        )
    )


def _keep(pool: list[Mutant], mutant: Mutant, rng: random.Random) -> None:
    if len(pool) < POPULATION:
        pool.append(mutant)
    else:
        pool[rng.randrange(POPULATION)] = mutant


def _judge(
    report: Report,
    space: SearchSpace,
    target: Target,
    mutant: Mutant,
    limits: Mapping[str, float],
) -> Literal["found", "earned", "nothing"]:
    """Score and judge ``mutant`` into ``report``: a finding, a mutant that earned reward (a
    parent worth keeping), or neither."""
    probe = mutant.probe
    move = last_move(probe)
    report.tried[move] += 1
    try:
        scored = _Scored(target, probe)
    except Exception as exc:  # a mutant the target refuses outright earns nothing; say why
        report.unscored[move] += 1
        _error(report, f"{move}: {type(exc).__name__}: {exc}")
        return "nothing"
    got = scored.got
    deserves = mutant.deserves
    if deserves is None:
        try:
            deserves = space.deserves(probe)
        except Exception as exc:  # the judge's bug: counted and shown, never a silent "clean"
            report.misjudged[move] += 1
            _error(report, f"{move}: the judge raised {type(exc).__name__}: {exc}")
            deserves = None
    finding = _finding(move, probe, got, deserves, seconds=scored.seconds, limits=limits)
    if finding is not None:
        report.found(finding)
        return "found"
    if deserves == 1.0 and got.reward is not None and got.reward < 1.0 - EPSILON:
        report.refused[move] += 1
    return "earned" if got.reward is not None and got.reward > 0.0 else "nothing"


def _error(report: Report, message: str) -> None:
    if len(report.errors) < MAX_ERRORS:
        report.errors.append(message[:300])


def _finding(
    move: str,
    probe: Probe,
    got: Got,
    deserves: float | None,
    *,
    seconds: float,
    limits: Mapping[str, float],
) -> Finding | None:
    if deserves is None:
        return None
    if got.status in NO_REWARD or got.reward is None:
        dodged = deserves == 0.0 and got.status == "timeout"
        return Finding("dodged", move, probe, got, deserves) if dodged else None
    if got.reward > deserves + EPSILON:
        return Finding("paid", move, probe, got, deserves)
    # An episode's steps each have the limit; only a single answer is timed whole.
    limit = limits.get(probe.target, float("inf")) if probe.env is None else float("inf")
    if deserves == 0.0 and seconds > limit:
        slow = Got(got.status, got.reward, f"took {seconds:.1f} s to score: {got.detail}")
        return Finding("dodged", move, probe, slow, deserves)
    return None
