"""Latin square completion: a constraint puzzle to solve, row and column scans to verify."""

import random
import re
from typing import Any

NAME = "latin_square_completion"
DESCRIPTION = "Fill the blanks so that every row and column holds each symbol 1..n exactly once."
DIFFICULTIES = [1, 2, 3, 4, 5]
ANSWER_FORMAT = "<answer>each row as numbers separated by spaces, rows separated by ;</answer>"


def generate(seed: int, difficulty: int) -> dict[str, Any]:
    rng = random.Random(f"{NAME}/{seed}/{difficulty}")
    size = 3 + (difficulty + 1) // 2
    rows, cols, symbols = list(range(size)), list(range(size)), list(range(1, size + 1))
    rng.shuffle(rows)
    rng.shuffle(cols)
    rng.shuffle(symbols)
    square = [[symbols[(rows[r] + cols[c]) % size] for c in range(size)] for r in range(size)]
    blanks = min(size * size - 1, 2 + 2 * difficulty)
    hidden = rng.sample(range(size * size), blanks)
    puzzle = [[0 if r * size + c in hidden else square[r][c] for c in range(size)]
              for r in range(size)]  # fmt: skip
    return {"puzzle": puzzle, "solution": square}


def prompt(instance: dict[str, Any]) -> str:
    rows = "\n".join(" ".join(str(v) if v else "." for v in row) for row in instance["puzzle"])
    size = len(instance["puzzle"])
    return (
        f"Complete this {size}x{size} Latin square (. is a blank; each row and each column "
        f"must contain 1..{size} once):\n{rows}\nReply with {ANSWER_FORMAT}."
    )


def reference(instance: dict[str, Any]) -> str:
    rows = "; ".join(" ".join(map(str, row)) for row in instance["solution"])
    return f"<answer>{rows}</answer>"


def score(instance: dict[str, Any], response: str) -> float | None:
    found = re.findall(r"<answer>(.*?)</answer>", response, re.DOTALL)
    if not found:
        return None
    try:
        grid = [[int(v) for v in row.split()] for row in found[-1].strip().split(";")]
    except ValueError:
        return None
    puzzle = instance["puzzle"]
    size = len(puzzle)
    if len(grid) != size or any(len(row) != size for row in grid):
        return 0.0
    symbols = list(range(1, size + 1))
    latin = all(sorted(row) == symbols for row in grid) and all(
        sorted(grid[r][c] for r in range(size)) == symbols for c in range(size)
    )
    kept = all(puzzle[r][c] in (0, grid[r][c]) for r in range(size) for c in range(size))
    return 1.0 if latin and kept else 0.0
