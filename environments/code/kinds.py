"""The problem kinds, by name (the name is the task's ``kind`` metadata)."""

from __future__ import annotations

from collections.abc import Mapping

from environments.code.arithmetic import digits, fizzbuzz, gcd_lcm, primes
from environments.code.grids import line_sums, matrix_transform
from environments.code.lists import list_sum, longest_run, max_subarray, search_position, two_sum
from environments.code.problem import ProblemKind
from environments.code.strings import (
    anagram_groups,
    balanced_brackets,
    count_letters,
    is_rotation,
    reverse_words,
    run_length,
)

# Order matters: a seed picks a kind by its position, so reordering or adding a kind changes
# tasks and needs a version bump. Every kind serves every difficulty, format and language.
KINDS: Mapping[str, ProblemKind] = {
    "list_sum": list_sum,
    "longest_run": longest_run,
    "two_sum": two_sum,
    "search_position": search_position,
    "max_subarray": max_subarray,
    "count_letters": count_letters,
    "reverse_words": reverse_words,
    "balanced_brackets": balanced_brackets,
    "run_length": run_length,
    "anagram_groups": anagram_groups,
    "is_rotation": is_rotation,
    "fizzbuzz": fizzbuzz,
    "gcd_lcm": gcd_lcm,
    "primes": primes,
    "digits": digits,
    "matrix_transform": matrix_transform,
    "line_sums": line_sums,
}
