"""A verifier of known cost for the pool's benchmarks (loaded with
``ENVSERVER_PLUGINS=benchmarks.plugins.spin``): ``bench.spin`` keeps a worker's CPU busy for the
milliseconds its reference names (at most ``MAX_MS``) and scores 1, so a benchmark can mix slow
items of a chosen cost with cheap ones (``benchmarks/coalescing.py``)."""

from __future__ import annotations

import time
from typing import Any

from environments.family import Contents, Family
from verifiers.base import Verifier
from verifiers.score import Score

MAX_MS = 5000


def _check(response: str, reference: Any, options: Any) -> Score:
    until = time.thread_time() + min(float(reference), MAX_MS) / 1000
    while time.thread_time() < until:
        pass
    return Score.ok(1.0)


VERIFIER = Verifier(
    name="bench.spin",
    version="1",
    description="Spins for the reference's milliseconds of CPU, then scores 1.",
    check=_check,
    example=("", "1"),
    timeout_s=30.0,
)

FAMILY = Family(name="bench.spin", load=lambda: Contents(verifiers=(VERIFIER,)))
