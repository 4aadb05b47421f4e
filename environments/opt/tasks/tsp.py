"""Travelling salesman on complete graphs with random symmetric distances; exact by CP-SAT's
circuit constraint."""

from __future__ import annotations

import random

from ortools.sat.python import cp_model

from environments.opt import solver
from environments.opt.task import Instance, Level, OptTask, Solution
from verifiers.opt.tsp import CHECK

# Number of cities per level, as the original generator draws it.
_LEVELS = {"easy": (10, 20), "medium": (20, 30), "hard": (35, 45), "bench": (45, 55)}
# Every distance is an integer drawn uniformly from this range.
_DISTANCE = (10, 100)


def generate(rng: random.Random, level: Level) -> Instance:
    """A complete graph: the full symmetric distance matrix (zero diagonal) as nested dicts
    keyed by city id."""
    count = rng.randint(*_LEVELS[level])
    distance = [[0] * count for _ in range(count)]
    for i in range(count):
        for j in range(i + 1, count):
            distance[i][j] = distance[j][i] = rng.randint(*_DISTANCE)
    return {str(i): {str(j): distance[i][j] for j in range(count)} for i in range(count)}


def solve(instance: Instance, budget: float) -> Solution:
    """Shortest tour: one boolean per directed arc, ``add_circuit`` makes them one Hamiltonian
    cycle, minimise the total distance. CP-SAT's LP relaxation with subtour cuts proves
    optimality at the bench level (55 cities) in a few deterministic seconds."""
    count = len(instance)
    model = cp_model.CpModel()
    arcs = {
        (i, j): model.new_bool_var(f"a{i}_{j}")
        for i in range(count)
        for j in range(count)
        if i != j
    }
    model.add_circuit([(i, j, var) for (i, j), var in arcs.items()])
    model.minimize(sum(instance[str(i)][str(j)] * var for (i, j), var in arcs.items()))
    result, optimal = solver.solve(model, budget)
    following = {i: j for (i, j), var in arcs.items() if result.boolean_value(var)}
    tour = [0]
    for _ in range(count):
        tour.append(following[tour[-1]])
    answer = str(tour)
    return Solution(answer, CHECK.evaluate(instance, answer), optimal)


def greedy(instance: Instance) -> str:
    """Nearest neighbour from city 0 (lowest id on ties), then back to 0; always feasible."""
    left = set(range(1, len(instance)))
    tour = [0]
    while left:
        here = instance[str(tour[-1])]
        nearest = min(left, key=lambda j: (here[str(j)], j))
        tour.append(nearest)
        left.remove(nearest)
    tour.append(0)
    return str(tour)


TASK = OptTask(
    check=CHECK,
    original_key="TSP",
    category="planning",
    description=(
        "You are given a complete graph of cities and the distance between every pair of "
        "cities (the distances are symmetric). Find a round trip that starts at a city, visits "
        "every other city exactly once and returns to the city it started from, so that the "
        "total distance travelled is as short as possible."
    ),
    submission_format=(
        "The tour as a list of city ids in visiting order, starting and ending with the same "
        "city, for example [0, 1, 3, 2, 0] for four cities."
    ),
    example_input={
        "0": {"0": 0, "1": 10, "2": 15, "3": 20},
        "1": {"0": 10, "1": 0, "2": 35, "3": 25},
        "2": {"0": 15, "1": 35, "2": 0, "3": 30},
        "3": {"0": 20, "1": 25, "2": 30, "3": 0},
    },
    example_output="[0, 1, 3, 2, 0]",
    generate=generate,
    solve=solve,
    greedy=greedy,
)
