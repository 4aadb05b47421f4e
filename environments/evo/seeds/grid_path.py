"""Cheapest path through a weighted grid: Dijkstra as code, a search by hand."""

import heapq
import random
import re
from typing import Any

NAME = "weighted_grid_path"
DESCRIPTION = "The least total cost of a 4-neighbour path from the top-left to the bottom-right."
DIFFICULTIES = [1, 2, 3, 4, 5]
ANSWER_FORMAT = "<answer>an integer</answer>"


def generate(seed: int, difficulty: int) -> dict[str, Any]:
    rng = random.Random(f"{NAME}/{seed}/{difficulty}")
    size = 2 + difficulty
    return {"grid": [[rng.randint(1, 9) for _ in range(size)] for _ in range(size)]}


def prompt(instance: dict[str, Any]) -> str:
    rows = "\n".join(" ".join(map(str, row)) for row in instance["grid"])
    return (
        f"Grid of cell costs:\n{rows}\nMove up, down, left or right from the top-left cell to "
        "the bottom-right cell. A path costs the sum of the cells it enters, both corners "
        f"included. What is the least cost? Reply with {ANSWER_FORMAT}."
    )


def _cheapest(grid: list[list[int]]) -> int:
    size = len(grid)
    best = {(0, 0): grid[0][0]}
    queue = [(grid[0][0], 0, 0)]
    while queue:
        cost, row, col = heapq.heappop(queue)
        if (row, col) == (size - 1, size - 1):
            return cost
        if cost > best[(row, col)]:
            continue
        for r, c in ((row + 1, col), (row - 1, col), (row, col + 1), (row, col - 1)):
            if 0 <= r < size and 0 <= c < size and cost + grid[r][c] < best.get((r, c), 10**9):
                best[(r, c)] = cost + grid[r][c]
                heapq.heappush(queue, (cost + grid[r][c], r, c))
    raise ValueError("unreachable corner")


def reference(instance: dict[str, Any]) -> str:
    return f"<answer>{_cheapest(instance['grid'])}</answer>"


def score(instance: dict[str, Any], response: str) -> float | None:
    found = re.findall(r"<answer>\s*(-?\d+)\s*</answer>", response)
    if not found:
        return None
    return 1.0 if int(found[-1]) == _cheapest(instance["grid"]) else 0.0
