"""What the math verifier's own checks cost on top of math-verify, in-process on one core.

Side by side in one run: the verifier (``verifiers.math.VERIFIER``: boxes, hedges, final
values, approximations, then math-verify) against bare math-verify on the same kind of items
(``parse`` of the response, ``verify`` against the reference parsed once, the same timeouts).
Items are the generator's (half right, half wrong, as ``math_verify_throughput``); each path
gets fresh items every round, and which path goes first alternates, so neither benefits from
math-verify's caches warmed by the other. No server: this measures the check, not the service.
Rates are per second of this process's CPU time, not wall time: on a shared machine the wall
clock mostly measures the neighbours.

    .venv/bin/python -m benchmarks.math_answer_checks [--items 300] [--rounds 4] [--unboxed]

``--unboxed`` writes each answer without its box and dollars ("the answer is \\frac{1}{2}.", "the
result is \\frac{1}{2} + 1."): math-verify reads it from plain text, and the verifier finds the
whole expression around what it read.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from functools import cache
from typing import Any

from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

from benchmarks.common import math_items, median
from verifiers.math import VERIFIER

_RESPONSE = (LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig())
_REFERENCE = (LatexExtractionConfig(), ExprExtractionConfig())


@cache
def _gold(reference: str) -> list[Any]:
    return list(parse(f"${reference}$", _REFERENCE, fallback_mode="no_fallback"))


def bare(response: str, reference: str) -> None:
    """math-verify alone, as the verifier calls it."""
    verify(_gold(reference), parse(response, _RESPONSE, parsing_timeout=3), timeout_seconds=3)


def verifier(response: str, reference: str) -> None:
    """The math verifier, every check included."""
    VERIFIER(response, reference)


def unboxed(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The same items with each answer written without its box and dollars."""
    return [(re.sub(r"\$\\boxed\{(.*)\}\$", r"\1", r), ref) for r, ref in items]


def rate(check: Callable[[str, str], None], items: list[tuple[str, str]]) -> float:
    """Items per CPU second."""
    started = time.process_time()
    for response, reference in items:
        check(response, reference)
    return len(items) / (time.process_time() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--unboxed", action="store_true", help="answers without a box")
    args = parser.parse_args()
    form = unboxed if args.unboxed else list

    warm = form(math_items(60, 10**9))
    rate(bare, warm)
    rate(verifier, warm)
    paths = {"math-verify alone": bare, "verifier": verifier}
    rates: dict[str, list[float]] = {name: [] for name in paths}
    for round_index in range(args.rounds):
        names = list(paths) if round_index % 2 == 0 else list(reversed(paths))
        for offset, name in enumerate(names):
            first_seed = (2 * round_index + offset) * args.items
            rates[name].append(rate(paths[name], form(math_items(args.items, first_seed))))

    # The ratio is taken within a round (the machine's load drifts between rounds).
    shape = "unboxed" if args.unboxed else "boxed"
    print(f"math answer checks, {shape}, {args.items} items x {args.rounds} rounds (medians)")
    print(f"{'path':<20}{'items/s':>10}{'ratio':>8}  per-round items per CPU second")
    baseline = rates["math-verify alone"]
    for name, values in rates.items():
        ratio = median([v / base for v, base in zip(values, baseline, strict=True)])
        rounds = " ".join(f"{v:.0f}" for v in values)
        print(f"{name:<20}{median(values):>10.0f}{ratio:>8.2f}  {rounds}")


if __name__ == "__main__":
    main()
