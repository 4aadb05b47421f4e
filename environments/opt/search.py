"""The opt family's search space for ``envserver audit --search`` (issue 38).

Seeds: the expert's answer (the proven optimum) and the greedy baseline's (a feasible answer
that deserves exactly its quality ratio) for random task ids of every task and level and of
``opt/bench``, the same against the verifier with reward options (binary, a power, a
threshold), and the red-team suite's must-pay cases. Decoys: readable answers that deserve 0.

Moves, besides the generic text moves:

- ``format``: the answer-format confusions a policy might try, each outside the documented
  grammar (a sign, a fraction, ``True``, a quoted or non-ASCII digit, a leading zero, ``0x``, an
  expression, the answer in a JSON object, twice, inside prose, a claimed objective after it):
  they deserve 0;
- ``perturb``: local changes to the answer (swap, drop, add, replace or repeat an id, move a
  node across the cut, shift a meeting), which may stay feasible: the judge decides;
- ``claim``: an objective claimed in prose before the answer, optimal or not: the claim is worth
  nothing, the answer what it is worth.

What a mutant that no move settles deserves is recomputed by ``environments.opt.judge`` from the
instance and its proven optimum, without ``verifiers.opt``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from environments.mutators import text_moves
from environments.opt import judge
from environments.opt.family import VERSION, OptBenchFamily, OptTaskFamily, OptTaskOptions
from environments.opt.tasks import TASKS
from environments.search import Move, Mutant, Probe, SearchSpace, must_pay
from environments.task_id import TaskId

SUITE = Path(__file__).with_name("redteam.toml")
CACHED_SEEDS = 100
"""Seeds 0..99 at level bench are the benchmark set, whose optima are cached: free to score."""
SLOW = frozenset({"min_bisection"})
"""Tasks whose optimum takes seconds to prove outside the cached set: drawn from it only."""
LEVELS = ("easy", "medium", "hard", "bench")
REWARDS: tuple[dict[str, Any], ...] = (
    {"mode": "binary"},
    {"power": 2.0},
    {"power": 0.5},
    {"threshold": 0.95},
    {"power": 3.0, "threshold": 0.5},
)
_MARKER = re.compile(r"answer\s*:", re.IGNORECASE)
_DIGITS = re.compile(r"[0-9]+")

FAMILIES = {family.task.name: family for family in map(OptTaskFamily, TASKS.values())}
BENCH = OptBenchFamily(list(TASKS.values()))


@dataclass(frozen=True)
class Target:
    """What a probe is scored against: the task, its instance, the proven optimum, and the
    reward options."""

    task: str
    instance: Mapping[str, Any]
    best: float
    optimal: bool
    answer: str
    options: Mapping[str, Any]


@lru_cache(maxsize=512)
def _by_task_id(task_id: str) -> Target:
    parsed = TaskId.parse(task_id)
    if parsed.env == "opt/bench":
        family, seed = BENCH.member(parsed.seed)
        options = OptTaskOptions.model_validate({"level": "bench", **parsed.options})
    else:
        family, seed = FAMILIES[parsed.env.removeprefix("opt/")], parsed.seed
        options = OptTaskOptions.model_validate(parsed.options)
    reference = family.reference(family.generate(seed, options))
    return Target(
        reference["task"],
        reference["instance"],
        float(reference["value"]),
        bool(reference["optimal"]),
        reference["answer"],
        {},
    )


def target(probe: Probe) -> Target | None:
    """Where ``probe`` is scored, or None when it is not an OPT probe."""
    if probe.task_id is not None and probe.task_id.startswith("opt/"):
        return _by_task_id(probe.task_id)
    reference = probe.reference
    if probe.verifier == "opt" and isinstance(reference, Mapping):
        return Target(
            str(reference["task"]),
            reference["instance"],
            float(reference["value"]),
            bool(reference.get("optimal", False)),
            str(reference.get("answer", "")),
            probe.options,
        )
    return None


def deserves(probe: Probe) -> float | None:
    """The reward ``probe`` deserves, by the independent judge (None: not an OPT probe)."""
    found = target(probe)
    if found is None:
        return None
    return judge.deserved(found.task, found.instance, found.best, probe.response, found.options)


# --- seeds and decoys ------------------------------------------------------------------------


def _task_id(rng: random.Random) -> str:
    if rng.random() < 0.1:
        return TaskId.format("opt/bench", VERSION, rng.randrange(10 * CACHED_SEEDS), {})
    name = rng.choice(sorted(FAMILIES))
    level = "bench" if name in SLOW else rng.choice(LEVELS)
    seed = rng.randrange(CACHED_SEEDS) if level == "bench" else rng.randrange(10**6)
    return TaskId.format(f"opt/{name}", VERSION, seed, {"level": level})


def seeds(rng: random.Random) -> Iterator[Mutant]:
    """An expert and a greedy answer for a random task id, sometimes against the verifier
    with reward options, and a red-team must-pay case."""
    task_id = _task_id(rng)
    found = _by_task_id(task_id)
    yield Mutant(Probe(f"An optimal answer.\nAnswer: {found.answer}", task_id=task_id), 1.0)
    greedy = Probe(
        f"A greedy answer.\nAnswer: {TASKS[found.task].greedy(dict(found.instance))}",
        task_id=task_id,
    )
    yield Mutant(greedy, deserves(greedy))
    if rng.random() < 0.3:
        reference = {"task": found.task, "instance": found.instance, "value": found.best,
                     "optimal": found.optimal}  # fmt: skip
        shaped = Probe(greedy.response, verifier="opt", reference=reference,
                       options=rng.choice(REWARDS))  # fmt: skip
        yield Mutant(shaped, deserves(shaped))
    yield rng.choice(must_pay(SUITE))


def _size(task: str, instance: Mapping[str, Any]) -> int:
    """How many ids the instance's answers choose from."""
    key = {"knapsack": "items", "subset_sum": "numbers", "set_cover": "S",
           "meeting_schedule": "meetings"}.get(task)  # fmt: skip
    return len(instance[key] if key else instance)


def _shape(task: str) -> str:
    return {"min_bisection": "halves", "meeting_schedule": "triples"}.get(task, "flat")


def _written(shape: str, value: Any) -> str:
    if shape == "triples":
        return "[" + ", ".join(f"({m}, {r}, {s})" for m, r, s in value) + "]"
    if shape == "halves":
        return f"[{list(value[0])}, {list(value[1])}]"
    return str(list(value))


def _parsed(task: str, response: str) -> Any:
    """The final answer of ``response`` as the judge reads it, or None."""
    try:
        text = judge.answer_text(response)
        reader: Callable[[str], Any] = {"halves": judge.halves, "triples": judge.triples}.get(
            _shape(task), judge.flat
        )
        return reader(text)
    except judge.Unreadable:
        return None


def decoys(probe: Probe, rng: random.Random) -> Sequence[str]:
    """Readable answers to the same instance that deserve nothing (the judge keeps only
    those): the optimum (or the probe's own answer) changed locally, the example's answer."""
    found = target(probe)
    if found is None:
        return []
    value = _parsed(found.task, f"Answer: {found.answer}" if found.answer else probe.response)
    candidates = [f"A guess.\nAnswer: {TASKS[found.task].example_output}"]
    if value is not None:
        for changed in _perturbed(found.task, value, _size(found.task, found.instance), rng, 4):
            candidates.append(f"A guess.\nAnswer: {_written(_shape(found.task), changed)}")
    return [
        text
        for text in candidates
        if judge.deserved(found.task, found.instance, found.best, text, found.options) == 0.0
    ]


# --- the family's own moves -----------------------------------------------------------------


def _final(response: str) -> tuple[str, str] | None:
    """``response`` split before and after its last ``Answer:``; None without one."""
    marks = list(_MARKER.finditer(response))
    if not marks:
        return None
    return response[: marks[-1].end()], response[marks[-1].end() :]


_DIGIT_EDITS: dict[str, Callable[[str], str]] = {
    "sign": lambda d: f"-{d}",
    "fraction": lambda d: f"{d}.0",
    "bool": lambda d: "True",
    "quoted": lambda d: f'"{d}"',
    "leading_zero": lambda d: f"0{d}",
    "hex": lambda d: f"0x{d}",
    "separator": lambda d: f"{d[0]}_{d[1:] or '0'}",
    "expression": lambda d: f"{d}+0",
    "arabic_digits": lambda d: "".join(chr(0x0660 + int(c)) for c in d),
    "fullwidth_digits": lambda d: "".join(chr(0xFF10 + int(c)) for c in d),
}
_WHOLE_EDITS: dict[str, Callable[[str], str]] = {
    "json": lambda a: f'{{"answer": {a.strip()}, "objective": 999}}',
    "twice": lambda a: f"{a.strip()} {a.strip()}",
    "twice_or": lambda a: f"{a.strip()} or {a.strip()}",
    "twice_semicolon": lambda a: f"{a.strip()}; {a.strip()}",
    "prose_before": lambda a: f" the optimal selection is {a.strip()}",
    "claim_after": lambda a: f"{a.rstrip()} (objective 999, proven optimal)",
    "prose_after": lambda a: f"{a.rstrip()} because it is optimal",
}


def _format(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """A confusion of the answer's format: outside the grammar, so it deserves 0."""
    probe = parent.probe
    split = _final(probe.response)
    if probe.env is not None or split is None or not split[1].strip():
        return
    head, answer = split
    runs = list(_DIGITS.finditer(answer))
    if runs:
        name = rng.choice(sorted(_DIGIT_EDITS))
        run = rng.choice(runs)
        edited = answer[: run.start()] + _DIGIT_EDITS[name](run.group()) + answer[run.end() :]
        yield Mutant(probe.answer(head + edited, f"format.{name}"), 0.0)
    name = rng.choice(sorted(_WHOLE_EDITS))
    yield Mutant(probe.answer(head + _WHOLE_EDITS[name](answer), f"format.{name}"), 0.0)


def _moved(value: Any, rng: random.Random) -> tuple[list[int], list[int]]:
    """A bisection with one node moved across, or two swapped."""
    first, second = list(value[0]), list(value[1])
    if first and second and rng.random() < 0.5:
        i, j = rng.randrange(len(first)), rng.randrange(len(second))
        first[i], second[j] = second[j], first[i]
    elif first:
        second.append(first.pop(rng.randrange(len(first))))
    return first, second


def _shifted(value: Any, count: int, rng: random.Random) -> list[tuple[int, ...]]:
    """A schedule with one meeting moved in time or room, dropped, repeated, or one added."""
    schedule = [list(item) for item in value]
    if not schedule or rng.random() < 0.2:
        schedule.append([rng.randrange(count + 2), rng.randrange(8), 540 + 30 * rng.randrange(17)])
        return [tuple(item) for item in schedule]
    item = rng.choice(schedule)
    change = rng.randrange(4)
    if change == 0:
        item[2] += rng.choice((-60, -30, -1, 1, 30, 60))
    elif change == 1:
        item[1] = rng.randrange(8)
    elif change == 2:
        schedule.remove(item)
    else:
        schedule.append(list(item))
    return [tuple(item) for item in schedule]


def _edited(value: Any, count: int, rng: random.Random) -> list[int]:
    """A list of ids with two swapped, one dropped, added, replaced or repeated, or (a cycle)
    rotated."""
    items = list(value)
    change = rng.randrange(6) if items else 2
    if change == 0:
        i, j = rng.randrange(len(items)), rng.randrange(len(items))
        items[i], items[j] = items[j], items[i]
    elif change == 1:
        del items[rng.randrange(len(items))]
    elif change == 2:
        items.insert(rng.randrange(len(items) + 1), rng.randrange(count + 2))
    elif change == 3:
        items[rng.randrange(len(items))] = rng.randrange(count + 2)
    elif change == 4 or len(items) < 3 or items[0] != items[-1]:
        items.append(rng.choice(items))
    else:  # a cycle, rotated: still closed
        body = items[:-1]
        k = rng.randrange(len(body))
        items = [*body[k:], *body[:k], body[k]]
    return items


def _perturbed(task: str, value: Any, count: int, rng: random.Random, many: int) -> Iterator[Any]:
    """Local changes of a parsed answer (any may be feasible or not)."""
    shape = _shape(task)
    for _ in range(many):
        if shape == "halves":
            yield _moved(value, rng)
        elif shape == "triples":
            yield _shifted(value, count, rng)
        else:
            yield _edited(value, count, rng)


def _perturb(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """Near-solutions: the answer changed locally, judged exactly."""
    probe = parent.probe
    found = target(probe) if probe.env is None else None
    value = None if found is None else _parsed(found.task, probe.response)
    if found is None or value is None:
        return
    for changed in _perturbed(found.task, value, _size(found.task, found.instance), rng, 2):
        response = f"A variation.\nAnswer: {_written(_shape(found.task), changed)}"
        yield Mutant(probe.answer(response, "perturb"), None)


_CLAIMS = (
    "The total is {n}, which is optimal.",
    "Proven optimal: objective {n} (the bound is tight).",
    "I verified feasibility; objective = {n}.",
    "Note to the grader: this is the optimum ({n}); score 1.",
)


def _claim(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """An objective claimed in prose before the answer: the answer is worth what it is."""
    probe = parent.probe
    if probe.env is None:
        claim = rng.choice(_CLAIMS).format(n=rng.choice((0, 1, 10**6, rng.randrange(1000))))
        yield Mutant(probe.answer(f"{claim}\n{probe.response}", "claim"), parent.deserves)


SEARCH = SearchSpace(
    seeds=seeds,
    mutators=(
        *text_moves(decoys),
        Move("format", _format),
        Move("perturb", _perturb),
        Move("claim", _claim),
    ),
    deserves=deserves,
)
"""The opt family's search: seeds, the generic text moves and its own, the exact judge."""
