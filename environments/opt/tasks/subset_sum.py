"""Subset sum (largest subset hitting the target) with several planted optima; exact by
dynamic programming over the sums."""

from __future__ import annotations

import random

from environments.opt.task import Instance, Level, OptTask, Solution
from verifiers.opt.subset_sum import CHECK

# (numbers in total, planted solution size, value range, planted solutions wanted), per level
# as the original generator draws them; the total is raised when the planted solutions need
# more slots, and fewer solutions are planted when the total cannot hold them.
_LEVELS = {
    "easy": ((5, 10), (4, 8), (1, 5), (2, 3)),
    "medium": ((8, 12), (4, 8), (1, 10), (3, 4)),
    "hard": ((12, 15), (8, 12), (1, 15), (4, 5)),
    "bench": ((15, 20), (10, 15), (1, 15), (5, 6)),
}
# Planted values stay within this distance of the low end, so they are small and many of them
# fit the target (the original's bias towards a large cardinality).
_SMALL_SPAN = 15
# Draws per alternative solution before giving up on a new multiset (as the original).
_ATTEMPTS = 200


def _with_sum(rng: random.Random, target: int, size: int, low: int, high: int) -> list[int]:
    """``size`` values in ``[low, high]`` summing to ``target`` (which must lie in
    ``[size * low, size * high]``): random values, then nudged in a random order."""
    values = [rng.randint(low, high) for _ in range(size)]
    diff = target - sum(values)
    for index in rng.sample(range(size), size):
        # Move this value as far towards the target as its bounds allow; one pass always
        # suffices since the target is reachable.
        step = min(diff, high - values[index]) if diff > 0 else -min(-diff, values[index] - low)
        values[index] += step
        diff -= step
    return values


def plant(rng: random.Random, level: Level) -> tuple[Instance, list[list[int]]]:
    """The instance and its planted solutions (sorted index lists, all of the same size and
    summing to the target). ``generate`` is this without the solutions."""
    (t_lo, t_hi), (s_lo, s_hi), (low, high), (p_lo, p_hi) = _LEVELS[level]
    total = rng.randint(t_lo, t_hi)
    size = rng.randint(s_lo, s_hi)
    wanted = min(rng.randint(p_lo, p_hi), max(1, total // size))
    small_high = min(high, low + _SMALL_SPAN)
    solutions = [[rng.randint(low, small_high) for _ in range(size)]]
    target = sum(solutions[0])
    for _ in range(wanted - 1):
        for _attempt in range(_ATTEMPTS):
            candidate = _with_sum(rng, target, size, low, small_high)
            # A new optimum only if it is not a reordering of one already planted.
            if all(sorted(candidate) != sorted(other) for other in solutions):
                solutions.append(candidate)
                break
    total = max(total, size * len(solutions))
    distractors = [rng.randint(low, high) for _ in range(total - size * len(solutions))]
    # Tag every value with its solution (-1: a distractor) so the planted indices survive the
    # shuffle.
    tagged = [(value, k) for k, values in enumerate(solutions) for value in values]
    tagged += [(value, -1) for value in distractors]
    rng.shuffle(tagged)
    instance = {"target": target, "numbers": {str(i): value for i, (value, _) in enumerate(tagged)}}
    planted = [[i for i, (_, tag) in enumerate(tagged) if tag == k] for k in range(len(solutions))]
    return instance, planted


def generate(rng: random.Random, level: Level) -> Instance:
    """Several planted subsets of equal size, all summing to the target, among uniform
    distractors; indices shuffled."""
    return plant(rng, level)[0]


def solve(instance: Instance, budget: float) -> Solution:
    """Exact: the largest subset summing to the target, by dynamic programming over the sums
    (always proven optimal). Raises ValueError when no subset hits the target."""
    target = instance["target"]
    numbers = [instance["numbers"][str(i)] for i in range(len(instance["numbers"]))]
    # most[s]: the largest count of numbers seen so far summing to s (-1: unreachable);
    # took[i][s]: whether that count at s used number i.
    most = [0] + [-1] * target
    took = [[False] * (target + 1) for _ in numbers]
    for index, value in enumerate(numbers):
        for reach in range(target, value - 1, -1):
            if most[reach - value] >= 0 and most[reach - value] + 1 > most[reach]:
                most[reach] = most[reach - value] + 1
                took[index][reach] = True
    if most[target] <= 0:
        raise ValueError("no non-empty subset sums to the target")
    chosen, reach = [], target
    for index in range(len(numbers) - 1, -1, -1):
        if took[index][reach]:
            chosen.append(index)
            reach -= numbers[index]
    chosen.sort()
    return Solution(str(chosen), float(len(chosen)), optimal=True)


def greedy(instance: Instance) -> str:
    """Smallest numbers first while they fit, then one repair swap (a chosen number for an
    unused one larger by exactly the shortfall). May miss the target: then it scores 0."""
    numbers = {int(i): value for i, value in instance["numbers"].items()}
    chosen, total = [], 0
    for index in sorted(numbers, key=lambda i: (numbers[i], i)):
        if total + numbers[index] <= instance["target"]:
            chosen.append(index)
            total += numbers[index]
    shortfall = instance["target"] - total
    if shortfall > 0:
        unused = [i for i in sorted(numbers) if i not in chosen]
        swap = next(
            (
                (out, into)
                for out in chosen
                for into in unused
                if numbers[into] - numbers[out] == shortfall
            ),
            None,
        )
        if swap is not None:
            chosen[chosen.index(swap[0])] = swap[1]
    return str(sorted(chosen))


TASK = OptTask(
    check=CHECK,
    original_key="subset-sum",
    category="selection",
    description=(
        "You are given a target number and a collection of positive integers, each with an "
        "index. Pick a set of distinct indices whose numbers add up exactly to the target. "
        "Among all such sets, the best answer uses as many indices as possible. Every index "
        "may be used at most once, even if several indices hold the same number."
    ),
    submission_format="A list of the chosen indices, each once, for example [0, 1, 4].",
    example_input={"target": 10, "numbers": {"0": 3, "1": 5, "2": 2, "3": 7, "4": 4}},
    example_output="[0, 1, 2]",
    generate=generate,
    solve=solve,
    greedy=greedy,
)
