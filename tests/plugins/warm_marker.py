"""A verifier whose example marks the worker that ran it, loaded only by the warm-up's tests
(ENVSERVER_PLUGINS): the marks show which of the pool's workers warmed up before ready."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from environments.family import Contents, Family
from verifiers.base import Verifier
from verifiers.score import Score

MARKS = "warmed"
"""The folder under the server's data directory that holds one empty file per warmed worker,
named by its pid."""


def _mark(response: str, reference: Any, options: Any) -> Score:
    if response != str(reference):
        return Score.invalid("only the example scores")
    marks = Path(os.environ["ENVSERVER_DATA_DIR"]) / MARKS
    marks.mkdir(parents=True, exist_ok=True)
    (marks / str(os.getpid())).touch()
    return Score.ok(1.0)


MARKER = Verifier(
    "test.warm_marker",
    "1",
    "Marks the worker that ran its example.",
    _mark,
    example=("warm", "warm"),
)
FAMILY = Family(name="test.warm_marker", load=lambda: Contents(verifiers=(MARKER,)))
