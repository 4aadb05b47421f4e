"""Set cover on random subsets (every element patched into some subset); exact by CP-SAT."""

from __future__ import annotations

import random

from ortools.sat.python import cp_model

from environments.opt import solver
from environments.opt.task import Instance, Level, OptTask, Solution
from verifiers.opt.set_cover import CHECK

# (universe size, number of subsets), per level as the original generator draws them.
_LEVELS = {
    "easy": ((10, 20), (5, 10)),
    "medium": ((20, 25), (10, 15)),
    "hard": ((25, 30), (15, 25)),
    "bench": ((30, 40), (20, 30)),
}
# A subset holds 1 .. max(1, floor(this share of |U|)) elements before patching.
_SIZE_FACTOR = 0.4


def generate(rng: random.Random, level: Level) -> Instance:
    """Subsets of random sizes drawn from U; each element no subset drew is then added to a
    random subset, so the instance is always coverable."""
    (n_lo, n_hi), (m_lo, m_hi) = _LEVELS[level]
    count = rng.randint(n_lo, n_hi)
    subsets = rng.randint(m_lo, m_hi)
    largest = max(1, int(count * _SIZE_FACTOR))
    drawn = [rng.sample(range(count), rng.randint(1, largest)) for _ in range(subsets)]
    covered = set().union(*drawn)
    for element in range(count):
        if element not in covered:
            drawn[rng.randrange(subsets)].append(element)
    return {"U": list(range(count)), "S": {str(i): sorted(s) for i, s in enumerate(drawn)}}


def solve(instance: Instance, budget: float) -> Solution:
    """Fewest subsets covering U: one boolean per subset, every element covered at least once,
    minimise the count (CP-SAT; proven optimal at every level in well under a second)."""
    subsets = [instance["S"][str(i)] for i in range(len(instance["S"]))]
    model = cp_model.CpModel()
    pick = [model.new_bool_var(f"s{i}") for i in range(len(subsets))]
    for element in instance["U"]:
        model.add_bool_or([pick[i] for i, s in enumerate(subsets) if element in s])
    model.minimize(sum(pick))
    result, optimal = solver.solve(model, budget)
    chosen = [i for i, var in enumerate(pick) if result.boolean_value(var)]
    return Solution(str(chosen), float(len(chosen)), optimal)


def greedy(instance: Instance) -> str:
    """The subset covering the most still-uncovered elements first (lowest id on ties), until
    U is covered; always feasible on coverable instances."""
    subsets = {int(i): set(s) for i, s in instance["S"].items()}
    uncovered = set(instance["U"])
    chosen: list[int] = []
    while uncovered:
        best = max(sorted(subsets), key=lambda i: len(subsets[i] & uncovered))
        if not subsets[best] & uncovered:
            break  # not coverable: the partial answer scores 0
        chosen.append(best)
        uncovered -= subsets[best]
    return str(sorted(chosen))


TASK = OptTask(
    check=CHECK,
    original_key="set-cover",
    category="selection",
    description=(
        "You are given a universe U of elements and a family S of subsets of U, each with an "
        "id. Choose subsets from S so that every element of U lies in at least one chosen "
        "subset, using as few subsets as possible. Each subset may be chosen at most once."
    ),
    submission_format="A list of the chosen subset ids, each once, for example [0, 3, 4].",
    example_input={
        "U": [0, 1, 2, 3, 4, 5],
        "S": {"0": [0, 1, 2], "1": [2, 3], "2": [3, 4, 5], "3": [0, 5], "4": [1, 4]},
    },
    example_output="[0, 2]",
    generate=generate,
    solve=solve,
    greedy=greedy,
)
