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
from functools import cache
from typing import Any

from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

from benchmarks.common import math_rates, print_rates, unboxed
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--unboxed", action="store_true", help="answers without a box")
    args = parser.parse_args()
    paths = {"math-verify alone": bare, "verifier": verifier}
    rates = math_rates(paths, unboxed if args.unboxed else list, args.items, args.rounds)
    shape = "unboxed" if args.unboxed else "boxed"
    title = f"math answer checks, {shape}, {args.items} items x {args.rounds} rounds (medians)"
    print_rates(title, rates, "math-verify alone")


if __name__ == "__main__":
    main()
