"""One-token mutants of a reference assertion: the workload of the checker's tests, the
cross-check test and the benchmark, and a model of the near-misses models make (``|->``/``|=>``,
delay shifts, ``&&``/``||``, ``===``/``!==``, range edges). Every occurrence of a token gives
its own mutant, so the set is systematic."""

from __future__ import annotations

import re

_SWAPS: tuple[tuple[str, str, str], ...] = (
    ("overlap_to_next", r"\|->", "|=>"),
    ("next_to_overlap", r"\|=>", "|->"),
    ("and_to_or", r"&&", "||"),
    ("or_to_and", r"\|\|", "&&"),
    ("case_eq_to_neq", r"===", "!=="),
    ("case_neq_to_eq", r"!==", "==="),
)
_DELAY = re.compile(r"##(\d+)\b")
_RANGE = re.compile(r"##\[(\d+):(\d+|\$)\]")


def mutants(assertion: str) -> list[tuple[str, str]]:
    """``(rule, mutant)`` pairs, each changing one token of ``assertion``."""
    out: list[tuple[str, str]] = []

    def replace(rule: str, match: re.Match[str], text: str) -> None:
        out.append((rule, assertion[: match.start()] + text + assertion[match.end() :]))

    for rule, pattern, replacement in _SWAPS:
        for match in re.finditer(pattern, assertion):
            replace(rule, match, replacement)
    for match in _DELAY.finditer(assertion):
        replace("delay_plus_one", match, f"##{int(match[1]) + 1}")
    for match in _RANGE.finditer(assertion):
        low, high = int(match[1]), match[2]
        replace("range_lower_plus_one", match, f"##[{low + 1}:{high}]")
        if high != "$":
            replace("range_upper_plus_one", match, f"##[{low}:{int(high) + 1}]")
    return out
