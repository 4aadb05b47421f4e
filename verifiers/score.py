"""The Score contract shared by every verifier and environment step, and the helpers that
combine scores where a family builds its reward from parts (``gate``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["ok", "invalid", "timeout", "error"]
"""How a check ended.

``ok``       scored; the reward is meaningful (0 is a real zero).
``invalid``  the response is malformed (no answer, unparsable); reward 0, and it counts.
``timeout``  the check ran out of time; reward None: trainers mask it.
``error``    infrastructure failed (worker crash, solver crash, bad reference); reward None.
"""

STATUSES: tuple[Status, ...] = ("ok", "invalid", "timeout", "error")
FAILURE_KIND = "failure_kind"
"""The ``extra`` key that says what an ``error`` was (NeMo Gym's name for it)."""
BAD_REFERENCE = "bad_reference"
"""``extra["failure_kind"]`` of an ``error`` caused by the item's reference (unreadable,
malformed): a data error that fails the same way every time, not an infrastructure failure.
Adapters for trainers that cannot mask a sample score it 0 and flag it (OpenRLHF, verl)."""


@dataclass(frozen=True, slots=True)
class Score:
    """The outcome of one check.

    ``reward`` lies in [0, 1] unless a family documents otherwise; ``components`` holds the
    named parts the reward is made of (for shaping or logging); ``metrics`` holds named
    diagnostics recorded beside it and never part of it (tests run, the first failing test, a
    reference that is a tautology); a name is in one or the other. ``detail`` is a short
    human-readable explanation that never reveals the reference; ``extra`` carries
    JSON-serialisable evidence (counterexamples, traces).
    """

    reward: float | None
    status: Status
    components: dict[str, float] = field(default_factory=dict)
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status in ("ok", "invalid"):
            if self.reward is None or not math.isfinite(self.reward):
                raise ValueError(f"a Score with status {self.status!r} needs a finite reward")
        elif self.reward is not None:
            raise ValueError(f"a Score with status {self.status!r} carries no reward")
        if self.status == "invalid" and self.reward != 0.0:
            raise ValueError("an invalid response scores 0")
        if self.metrics and (both := self.components.keys() & self.metrics.keys()):
            raise ValueError(f"{sorted(both)} are both components and metrics")

    @classmethod
    def ok(
        cls,
        reward: float,
        components: dict[str, float] | None = None,
        detail: str = "",
        extra: dict[str, Any] | None = None,
        metrics: dict[str, float] | None = None,
    ) -> Score:
        """A scored response."""
        parts, diagnostics = dict(components or {}), dict(metrics or {})
        return cls(float(reward), "ok", parts, detail, dict(extra or {}), diagnostics)

    @classmethod
    def invalid(
        cls,
        detail: str,
        components: dict[str, float] | None = None,
        metrics: dict[str, float] | None = None,
    ) -> Score:
        """A malformed response: reward 0, and it counts."""
        return cls(0.0, "invalid", dict(components or {}), detail, {}, dict(metrics or {}))

    @classmethod
    def timeout(cls, detail: str) -> Score:
        """The check ran out of time; no reward."""
        return cls(None, "timeout", {}, detail)

    @classmethod
    def error(cls, detail: str) -> Score:
        """Infrastructure failed; no reward, so trainers mask the item."""
        return cls(None, "error", {}, detail)

    @classmethod
    def bad_reference(cls, detail: str) -> Score:
        """The item's reference cannot be used (a data error); no reward, marked so callers can
        tell it from an infrastructure failure."""
        return cls(None, "error", {}, detail, {FAILURE_KIND: BAD_REFERENCE})


def gate(condition: Score, then: Callable[[], Score]) -> Score:
    """A check in two steps: ``then()`` only where ``condition`` passed (status ok, reward 1),
    its score carrying ``condition``'s components and metrics too; otherwise ``condition``
    itself. A step that ran out of time or failed (``timeout``, ``error``) ends the check with
    that status as it is, never a 0; a first step that fails ends it with its own verdict (0 or
    invalid); and the second step (often the expensive one) runs only after the first passed."""
    if condition.status != "ok" or condition.reward != 1.0:
        return condition
    after = then()
    if after.reward is None:  # timeout or error
        return after
    return Score(
        after.reward,
        after.status,
        {**condition.components, **after.components},
        after.detail,
        after.extra,
        {**condition.metrics, **after.metrics},
    )
