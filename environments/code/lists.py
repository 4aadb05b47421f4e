"""Problems on lists of integers: filtered sums, runs, pairs, binary search, subarrays."""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable

from environments.code.problem import Args, Param, Problem, Size, int_list

NUMS = Param("nums", "ints", "a list of integers `nums`")


def _length(rng: random.Random, size: Size, low: int = 0) -> int:
    return rng.randint(low, size.pick(6, 25, 200))


def _bound(size: Size) -> int:
    return size.pick(20, 1000, 10**9)


def _nums(rng: random.Random, size: Size, low: int = 0) -> Args:
    bound = _bound(size)
    return (int_list(rng, _length(rng, size, low), -bound, bound),)


def list_sum(rng: random.Random) -> Problem:
    """The sum of the elements that pass a filter (even, odd, positive, multiple of k, above t)."""
    k, t = rng.randint(3, 7), rng.randint(-5, 10)
    twists: list[tuple[str, str, Callable[[int], bool], str]] = [
        ("sum_of_evens", "the even numbers", lambda x: x % 2 == 0, "x % 2 == 0"),
        ("sum_of_odds", "the odd numbers", lambda x: x % 2 != 0, "x % 2 != 0"),
        ("sum_of_positives", "the strictly positive numbers", lambda x: x > 0, "x > 0"),
        (
            f"sum_of_multiples_of_{k}",
            f"the multiples of {k}",
            lambda x: x % k == 0,
            f"x % {k} == 0",
        ),
        ("sum_above", f"the numbers strictly greater than {t}", lambda x: x > t, f"x > {t}"),
    ]
    name, which, keep, condition = rng.choice(twists)
    return Problem(
        name=name,
        params=(NUMS,),
        returns="int",
        task=f"the sum of {which} in `nums` (0 when there are none)",
        rules="Negative numbers may occur."
        + (" Zero and negative multiples count too." if "multiples" in name else ""),
        solve=lambda nums: sum(x for x in nums if keep(x)),
        python=f"    return sum(x for x in nums if {condition})\n",
        cpp=(
            "    long long total = 0;\n"
            f"    for (long long x : nums) if ({condition}) total += x;\n"
            "    return total;\n"
        ),
        random_case=_nums,
        edge_cases=(([],), ([rng.choice([-4, 6, 7, 9, 12])],), ([0, 0],), ([-1, -2, -3],)),
    )


def longest_run(rng: random.Random) -> Problem:
    """The length of the longest contiguous run whose neighbours satisfy a relation."""
    twists = [
        ("longest_increasing_run", "strictly increasing", "<"),
        ("longest_non_decreasing_run", "non-decreasing", "<="),
        ("longest_decreasing_run", "strictly decreasing", ">"),
        ("longest_constant_run", "constant (all elements equal)", "=="),
    ]
    name, which, op = rng.choice(twists)
    relation: Callable[[int, int], bool] = {
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b,
        "==": lambda a, b: a == b,
    }[op]

    def solve(nums: list[int]) -> int:
        best = current = 0
        for i, x in enumerate(nums):
            current = current + 1 if i and relation(nums[i - 1], x) else 1
            best = max(best, current)
        return best

    def case(rng: random.Random, size: Size) -> Args:
        # Values from a narrow range, so that runs of every relation occur.
        spread = size.pick(4, 8, 30)
        return (int_list(rng, _length(rng, size), -spread, spread),)

    return Problem(
        name=name,
        params=(NUMS,),
        returns="int",
        task=f"the length of the longest contiguous run of `nums` that is {which}",
        rules="A single element is a run of length 1; the answer for an empty list is 0.",
        solve=solve,
        python=(
            "    best = current = 0\n"
            "    for i, x in enumerate(nums):\n"
            f"        current = current + 1 if i and nums[i - 1] {op} x else 1\n"
            "        best = max(best, current)\n"
            "    return best\n"
        ),
        cpp=(
            "    long long best = 0, current = 0;\n"
            "    for (size_t i = 0; i < nums.size(); ++i) {\n"
            f"        current = (i > 0 && nums[i - 1] {op} nums[i]) ? current + 1 : 1;\n"
            "        best = max(best, current);\n"
            "    }\n"
            "    return best;\n"
        ),
        random_case=case,
        edge_cases=(([],), ([rng.randint(-9, 9)],), ([3, 3, 3, 3],), ([5, 4, 3, 4, 5, 6],)),
    )


def two_sum(rng: random.Random) -> Problem:
    """Indices of two elements with a given sum: the first such pair in a stated order."""
    name = rng.choice(["two_sum", "pair_with_sum", "find_pair"])

    def solve(nums: list[int], target: int) -> list[int]:
        first: dict[int, int] = {}
        for j, x in enumerate(nums):
            if target - x in first:
                return [first[target - x], j]
            first.setdefault(x, j)
        return [-1, -1]

    def case(rng: random.Random, size: Size) -> Args:
        bound = _bound(size)
        nums = int_list(rng, _length(rng, size, 2), -bound, bound)
        if rng.random() < 0.75:  # most cases have a pair; the rest very likely none
            i, j = rng.sample(range(len(nums)), 2)
            return nums, nums[i] + nums[j]
        return nums, rng.randint(-2 * bound, 2 * bound)

    return Problem(
        name=name,
        params=(NUMS, Param("target", "int", "an integer `target`")),
        returns="ints",
        task="the indices `[i, j]` of two elements with `i < j` and `nums[i] + nums[j] == target`",
        rules="If several pairs qualify, choose the one with the smallest `j`, and for that `j` "
        "the smallest `i`. If no pair qualifies, the answer is `[-1, -1]`.",
        solve=solve,
        python=(
            "    first = {}\n"
            "    for j, x in enumerate(nums):\n"
            "        if target - x in first:\n"
            "            return [first[target - x], j]\n"
            "        first.setdefault(x, j)\n"
            "    return [-1, -1]\n"
        ),
        cpp=(
            "    unordered_map<long long, long long> first;\n"
            "    for (size_t j = 0; j < nums.size(); ++j) {\n"
            "        auto it = first.find(target - nums[j]);\n"
            "        if (it != first.end()) return {it->second, (long long)j};\n"
            "        first.emplace(nums[j], (long long)j);\n"
            "    }\n"
            "    return {-1, -1};\n"
        ),
        random_case=case,
        edge_cases=(([], 0), ([4, 4], 8), ([5], 10), ([1, 2, 3, 4, 3], 6)),
    )


def search_position(rng: random.Random) -> Problem:
    """Binary-search questions on a sorted list: insert position, count at most, index or -1."""
    twists = [
        (
            "search_insert",
            "the index at which `target` would be inserted to keep `nums` sorted, before any "
            "elements equal to it (the index of the first element not less than `target`, or "
            "the length of `nums` when there is none)",
            "    lo, hi = 0, len(nums)\n"
            "    while lo < hi:\n"
            "        mid = (lo + hi) // 2\n"
            "        if nums[mid] < target:\n"
            "            lo = mid + 1\n"
            "        else:\n"
            "            hi = mid\n"
            "    return lo\n",
            "    return lower_bound(nums.begin(), nums.end(), target) - nums.begin();\n",
        ),
        (
            "count_at_most",
            "the number of elements of `nums` that are less than or equal to `target`",
            "    lo, hi = 0, len(nums)\n"
            "    while lo < hi:\n"
            "        mid = (lo + hi) // 2\n"
            "        if nums[mid] <= target:\n"
            "            lo = mid + 1\n"
            "        else:\n"
            "            hi = mid\n"
            "    return lo\n",
            "    return upper_bound(nums.begin(), nums.end(), target) - nums.begin();\n",
        ),
        (
            "first_index_of",
            "the index of the first occurrence of `target` in `nums`, or -1 when it does not occur",
            "    lo, hi = 0, len(nums)\n"
            "    while lo < hi:\n"
            "        mid = (lo + hi) // 2\n"
            "        if nums[mid] < target:\n"
            "            lo = mid + 1\n"
            "        else:\n"
            "            hi = mid\n"
            "    return lo if lo < len(nums) and nums[lo] == target else -1\n",
            "    auto it = lower_bound(nums.begin(), nums.end(), target);\n"
            "    return (it != nums.end() && *it == target) ? it - nums.begin() : -1;\n",
        ),
    ]
    name, task, python, cpp = rng.choice(twists)

    def solve(nums: list[int], target: int) -> int:
        if name == "search_insert":
            return bisect.bisect_left(nums, target)
        if name == "count_at_most":
            return bisect.bisect_right(nums, target)
        index = bisect.bisect_left(nums, target)
        return index if index < len(nums) and nums[index] == target else -1

    def case(rng: random.Random, size: Size) -> Args:
        bound = _bound(size)
        # Narrow values at the small sizes, so that duplicates and hits occur.
        spread = min(bound, size.pick(10, 60, 10**9))
        nums = sorted(int_list(rng, _length(rng, size), -spread, spread))
        if nums and rng.random() < 0.5:
            return nums, rng.choice(nums)
        return nums, rng.randint(-spread - 2, spread + 2)

    return Problem(
        name=name,
        params=(
            Param("nums", "ints", "a list of integers `nums` sorted in non-decreasing order"),
            Param("target", "int", "an integer `target`"),
        ),
        returns="int",
        task=task,
        rules="`nums` may contain repeated values. Indices start at 0.",
        solve=solve,
        python=python,
        cpp=cpp,
        random_case=case,
        edge_cases=(([], 5), ([3], 3), ([1, 2, 2, 2, 5], 2), ([1, 3], 0)),
    )


def max_subarray(rng: random.Random) -> Problem:
    """The largest sum of a contiguous block: of any length (Kadane) or of exactly ``k``."""
    if rng.random() < 0.5:

        def kadane(nums: list[int]) -> int:
            best = current = nums[0]
            for x in nums[1:]:
                current = max(x, current + x)
                best = max(best, current)
            return best

        return Problem(
            name=rng.choice(["max_subarray_sum", "best_block_sum"]),
            params=(Param("nums", "ints", "a non-empty list of integers `nums`"),),
            returns="int",
            task="the largest sum of a non-empty contiguous block of elements of `nums`",
            rules="All elements may be negative.",
            solve=kadane,
            python=(
                "    best = current = nums[0]\n"
                "    for x in nums[1:]:\n"
                "        current = max(x, current + x)\n"
                "        best = max(best, current)\n"
                "    return best\n"
            ),
            cpp=(
                "    long long best = nums[0], current = nums[0];\n"
                "    for (size_t i = 1; i < nums.size(); ++i) {\n"
                "        current = max(nums[i], current + nums[i]);\n"
                "        best = max(best, current);\n"
                "    }\n"
                "    return best;\n"
            ),
            random_case=lambda rng, size: _nums(rng, size, 1),
            edge_cases=(([-7],), ([-3, -1, -2],), ([2, -1, 2],), ([0],)),
        )

    def window(nums: list[int], k: int) -> int:
        current = sum(nums[:k])
        best = current
        for i in range(k, len(nums)):
            current += nums[i] - nums[i - k]
            best = max(best, current)
        return best

    def case(rng: random.Random, size: Size) -> Args:
        (nums,) = _nums(rng, size, 1)
        return nums, rng.randint(1, len(nums))

    return Problem(
        name=rng.choice(["max_window_sum", "best_window"]),
        params=(
            Param("nums", "ints", "a non-empty list of integers `nums`"),
            Param("k", "int", "an integer `k` with `1 <= k <= len(nums)`"),
        ),
        returns="int",
        task="the largest sum of `k` consecutive elements of `nums`",
        rules="Elements may be negative.",
        solve=window,
        python=(
            "    current = sum(nums[:k])\n"
            "    best = current\n"
            "    for i in range(k, len(nums)):\n"
            "        current += nums[i] - nums[i - k]\n"
            "        best = max(best, current)\n"
            "    return best\n"
        ),
        cpp=(
            "    long long current = 0;\n"
            "    for (long long i = 0; i < k; ++i) current += nums[i];\n"
            "    long long best = current;\n"
            "    for (size_t i = k; i < nums.size(); ++i) {\n"
            "        current += nums[i] - nums[i - k];\n"
            "        best = max(best, current);\n"
            "    }\n"
            "    return best;\n"
        ),
        random_case=case,
        edge_cases=(([-7], 1), ([1, 2, 3], 3), ([-5, -1, -3], 1), ([4, -9, 4], 2)),
    )
