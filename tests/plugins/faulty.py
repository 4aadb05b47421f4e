"""Verifiers that misbehave on purpose, loaded only by the test server (ENVSERVER_PLUGINS).

They let the tests show what the executor does with a hung item, a dead worker and a verifier
that raises, against the real pool.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from environments.family import Contents, Family
from verifiers.base import Verifier
from verifiers.score import Score


def _sleep(response: str, reference: Any, options: Any) -> Score:
    # "sleep:<seconds>" sleeps; anything else returns at once.
    if response.startswith("sleep:"):
        time.sleep(float(response.removeprefix("sleep:")))
    return Score.ok(1.0 if response == str(reference) else 0.0)


def _crash(response: str, reference: Any, options: Any) -> Score:
    if response == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    return Score.ok(1.0 if response == str(reference) else 0.0)


def _spin(response: str, reference: Any, options: Any) -> Score:
    if response == "spin":
        while True:  # a CPU-bound loop that no in-process timeout can interrupt
            pass
    return Score.ok(1.0 if response == str(reference) else 0.0)


def _raise(response: str, reference: Any, options: Any) -> Score:
    raise RuntimeError("this verifier is broken")


VERIFIERS = (
    Verifier("test.sleep", "1", "Sleeps 'sleep:<s>' seconds.", _sleep, timeout_s=1.0),
    Verifier("test.crash", "1", "Kills its worker on 'crash'.", _crash),
    Verifier("test.spin", "1", "Spins forever on 'spin'.", _spin, timeout_s=1.0),
    Verifier("test.raise", "1", "Always raises.", _raise),
)
FAMILY = Family(
    name="test",
    load=lambda: Contents(verifiers=VERIFIERS),
    suite=Path(__file__).with_suffix(".redteam.toml"),
)
