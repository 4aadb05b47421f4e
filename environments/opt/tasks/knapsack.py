"""Knapsack with a planted solution and trap items; exact by dynamic programming."""

from __future__ import annotations

import random

from environments.opt.task import Instance, Level, OptTask, Solution
from verifiers.opt.knapsack import CHECK

# (solution items k, distractors, weight range, value/weight ratio of the solution, capacity
# factor over the solution's weight), per level as the original generator draws them.
_LEVELS = {
    "easy": ((6, 10), (8, 15), (5, 25), (1.8, 2.5), (1.1, 1.4)),
    "medium": ((8, 12), (15, 25), (20, 80), (1.5, 2.0), (1.05, 1.25)),
    "hard": ((15, 25), (20, 35), (50, 200), (1.2, 1.6), (1.02, 1.15)),
    "bench": ((25, 35), (30, 45), (50, 200), (1.2, 1.6), (1.02, 1.15)),
}


def generate(rng: random.Random, level: Level) -> Instance:
    """Planted items with a good ratio, a capacity just above their weight, and distractors:
    heavy low-ratio, light low-ratio, and traps (heavy with a high ratio)."""
    (k_lo, k_hi), (d_lo, d_hi), (w_lo, w_hi), (r_lo, r_hi), (c_lo, c_hi) = _LEVELS[level]
    planted = []
    for _ in range(rng.randint(k_lo, k_hi)):
        weight = rng.randint(w_lo, w_hi)
        planted.append((weight, max(1, round(weight * rng.uniform(r_lo, r_hi)))))
    planted_weight = sum(w for w, _ in planted)
    capacity = round(planted_weight * rng.uniform(c_lo, c_hi))
    distractors = []
    for _ in range(rng.randint(d_lo, d_hi)):
        kind = rng.random()
        if kind < 0.4:  # heavy, poor ratio
            weight = rng.randint(w_hi, 2 * w_hi)
            ratio = rng.uniform(0.3, 0.8) * r_lo
        elif kind < 0.8:  # light, poor ratio
            weight = rng.randint(w_lo, max(w_lo, (w_lo + w_hi) // 2))
            ratio = rng.uniform(0.3, 0.8) * r_lo
        else:  # trap: a large share of the capacity at a tempting ratio
            weight = max(1, round(planted_weight * rng.uniform(0.5, 0.9)))
            ratio = rng.uniform(r_lo, r_hi)
        distractors.append((weight, max(1, round(weight * ratio))))
    items = planted + distractors
    rng.shuffle(items)
    return {
        "capacity": capacity,
        "items": {str(i): {"weight": w, "value": v} for i, (w, v) in enumerate(items)},
    }


def solve(instance: Instance, budget: float) -> Solution:
    """Exact 0/1 knapsack by dynamic programming over the capacity (always proven optimal)."""
    capacity = instance["capacity"]
    items = [
        (instance["items"][str(i)]["weight"], instance["items"][str(i)]["value"])
        for i in range(len(instance["items"]))
    ]
    best = [0] * (capacity + 1)
    keep = [[False] * (capacity + 1) for _ in items]
    for index, (weight, value) in enumerate(items):
        for room in range(capacity, weight - 1, -1):
            if best[room - weight] + value > best[room]:
                best[room] = best[room - weight] + value
                keep[index][room] = True
    chosen, room = [], capacity
    for index in range(len(items) - 1, -1, -1):
        if keep[index][room]:
            chosen.append(index)
            room -= items[index][0]
    chosen.sort()
    return Solution(str(chosen), float(best[capacity]), optimal=True)


def greedy(instance: Instance) -> str:
    """Best value/weight ratio first, while the items fit."""
    items = instance["items"]
    order = sorted(items, key=lambda i: (-items[i]["value"] / items[i]["weight"], int(i)))
    chosen, load = [], 0
    for item in order:
        if load + items[item]["weight"] <= instance["capacity"]:
            chosen.append(int(item))
            load += items[item]["weight"]
    return str(sorted(chosen))


TASK = OptTask(
    check=CHECK,
    original_key="knapsack",
    category="selection",
    description=(
        "You are given a knapsack with a weight capacity and a set of items, each with a weight "
        "and a value. Choose a subset of the items, each at most once, whose total weight does "
        "not exceed the capacity, so that the total value is as large as possible."
    ),
    submission_format=("A list of the chosen item ids, each once, for example [0, 2, 3]."),
    example_input={
        "capacity": 10,
        "items": {
            "0": {"weight": 4, "value": 5},
            "1": {"weight": 6, "value": 6},
            "2": {"weight": 7, "value": 8},
        },
    },
    example_output="[0, 1]",
    generate=generate,
    solve=solve,
    greedy=greedy,
)
