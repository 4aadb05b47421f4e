"""One-token mutants of a reference assertion: the workload of the cross-check test and the
benchmark, and a model of the near-misses models make (``|->``/``|=>``, delay shifts,
``&&``/``||``, range edges)."""

from __future__ import annotations

import re

_RULES: tuple[tuple[str, str, str], ...] = (
    ("overlap_to_next", r"\|->", "|=>"),
    ("next_to_overlap", r"\|=>", "|->"),
    ("and_to_or", r"&&", "||"),
    ("or_to_and", r"\|\|", "&&"),
    ("case_eq_to_neq", r"===", "!=="),
)
_DELAY = re.compile(r"##(\d+)\b")
_RANGE = re.compile(r"##\[(\d+):(\d+)\]")


def mutants(assertion: str) -> list[tuple[str, str]]:
    """``(rule, mutant)`` pairs, each changing one token of ``assertion`` (first occurrence)."""
    out = []
    for rule, pattern, replacement in _RULES:
        mutated = re.sub(pattern, replacement, assertion, count=1)
        if mutated != assertion:
            out.append((rule, mutated))
    delay = _DELAY.search(assertion)
    if delay is not None:
        shifted = f"##{int(delay[1]) + 1}"
        out.append(
            ("delay_plus_one", assertion[: delay.start()] + shifted + assertion[delay.end() :])
        )
    window = _RANGE.search(assertion)
    if window is not None:
        low, high = int(window[1]), int(window[2])
        wider = f"##[{low}:{high + 1}]"
        out.append(
            (
                "range_upper_plus_one",
                assertion[: window.start()] + wider + assertion[window.end() :],
            )
        )
    return out
