"""Problems on matrices: transpose, rotations, mirror, row and column sums."""

from __future__ import annotations

import random
from collections.abc import Callable

from environments.code.problem import Args, Param, Problem, Size, int_list

Matrix = list[list[int]]

GRID = Param(
    "grid", "matrix", "a matrix of integers `grid` (a list of rows, at least one row and column)"
)

# name, what it returns, the trusted transform, the Python body, the C++ body
_TWISTS: list[tuple[str, str, Callable[[Matrix], Matrix], str, str]] = [
    (
        "transpose",
        "the transpose of `grid` (row `i` of the result is column `i` of `grid`)",
        lambda g: [list(col) for col in zip(*g, strict=True)],
        "    return [list(column) for column in zip(*grid)]\n",
        "    vector<vector<long long>> out(grid[0].size(), vector<long long>(grid.size()));\n"
        "    for (size_t r = 0; r < grid.size(); ++r)\n"
        "        for (size_t c = 0; c < grid[0].size(); ++c) out[c][r] = grid[r][c];\n"
        "    return out;\n",
    ),
    (
        "rotate_clockwise",
        "`grid` rotated by 90 degrees clockwise (its first column, read from bottom to top, "
        "becomes the first row)",
        lambda g: [list(col) for col in zip(*g[::-1], strict=True)],
        "    return [list(column) for column in zip(*grid[::-1])]\n",
        "    size_t rows = grid.size(), cols = grid[0].size();\n"
        "    vector<vector<long long>> out(cols, vector<long long>(rows));\n"
        "    for (size_t r = 0; r < rows; ++r)\n"
        "        for (size_t c = 0; c < cols; ++c) out[c][rows - 1 - r] = grid[r][c];\n"
        "    return out;\n",
    ),
    (
        "rotate_counterclockwise",
        "`grid` rotated by 90 degrees counterclockwise (its last column, read from top to "
        "bottom, becomes the first row)",
        lambda g: [list(col) for col in zip(*g, strict=True)][::-1],
        "    return [list(column) for column in zip(*grid)][::-1]\n",
        "    size_t rows = grid.size(), cols = grid[0].size();\n"
        "    vector<vector<long long>> out(cols, vector<long long>(rows));\n"
        "    for (size_t r = 0; r < rows; ++r)\n"
        "        for (size_t c = 0; c < cols; ++c) out[cols - 1 - c][r] = grid[r][c];\n"
        "    return out;\n",
    ),
    (
        "mirror_rows",
        "`grid` mirrored left to right (every row reversed)",
        lambda g: [row[::-1] for row in g],
        "    return [row[::-1] for row in grid]\n",
        "    vector<vector<long long>> out = grid;\n"
        "    for (auto& row : out) reverse(row.begin(), row.end());\n"
        "    return out;\n",
    ),
]


def matrix_transform(rng: random.Random) -> Problem:
    """Transpose, rotate or mirror a rectangular matrix."""
    name, task, transform, python, cpp = rng.choice(_TWISTS)

    def case(rng: random.Random, size: Size) -> Args:
        side = size.pick(4, 8, 40)
        rows, cols = rng.randint(1, side), rng.randint(1, side)
        bound = size.pick(9, 100, 10**9)
        return ([int_list(rng, cols, -bound, bound) for _ in range(rows)],)

    return Problem(
        name=name,
        params=(GRID,),
        returns="matrix",
        task=task,
        rules="`grid` is rectangular: every row has the same length. It need not be square.",
        solve=transform,
        python=python,
        cpp=cpp,
        random_case=case,
        edge_cases=(([[7]],), ([[1, 2, 3]],), ([[1], [2]],), ([[1, 2], [3, 4]],)),
    )


def line_sums(rng: random.Random) -> Problem:
    """The sum of every row, or of every column, of a matrix."""
    by_row = rng.random() < 0.5
    which = "row" if by_row else "column"

    def solve(grid: Matrix) -> list[int]:
        return [sum(row) for row in grid] if by_row else [sum(c) for c in zip(*grid, strict=True)]

    def case(rng: random.Random, size: Size) -> Args:
        side = size.pick(4, 8, 40)
        rows, cols = rng.randint(1, side), rng.randint(1, side)
        bound = size.pick(9, 100, 10**9)
        return ([int_list(rng, cols, -bound, bound) for _ in range(rows)],)

    return Problem(
        name=f"{which}_sums",
        params=(GRID,),
        returns="ints",
        task=f"the list of the sums of the {which}s of `grid`, {which} by {which} in order",
        rules="`grid` is rectangular: every row has the same length.",
        solve=solve,
        python=(
            "    return [sum(row) for row in grid]\n"
            if by_row
            else "    return [sum(column) for column in zip(*grid)]\n"
        ),
        cpp=(
            "    vector<long long> out;\n"
            "    for (const auto& row : grid)\n"
            "        out.push_back(accumulate(row.begin(), row.end(), 0LL));\n"
            "    return out;\n"
            if by_row
            else "    vector<long long> out(grid[0].size(), 0);\n"
            "    for (const auto& row : grid)\n"
            "        for (size_t c = 0; c < row.size(); ++c) out[c] += row[c];\n"
            "    return out;\n"
        ),
        random_case=case,
        edge_cases=(([[7]],), ([[1, 2, 3]],), ([[1], [2], [3]],), ([[-1, 1], [1, -1]],)),
    )
