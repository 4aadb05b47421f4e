"""The Score contract shared by every verifier and environment step."""

from __future__ import annotations

import math
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

    ``reward`` lies in [0, 1] unless a family documents otherwise; ``components`` holds its named
    parts for shaping or logging; ``detail`` is a short human-readable explanation that never
    reveals the reference; ``extra`` carries JSON-serialisable evidence (counterexamples, traces).
    """

    reward: float | None
    status: Status
    components: dict[str, float] = field(default_factory=dict)
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status in ("ok", "invalid"):
            if self.reward is None or not math.isfinite(self.reward):
                raise ValueError(f"a Score with status {self.status!r} needs a finite reward")
        elif self.reward is not None:
            raise ValueError(f"a Score with status {self.status!r} carries no reward")
        if self.status == "invalid" and self.reward != 0.0:
            raise ValueError("an invalid response scores 0")

    @classmethod
    def ok(
        cls,
        reward: float,
        components: dict[str, float] | None = None,
        detail: str = "",
        extra: dict[str, Any] | None = None,
    ) -> Score:
        """A scored response."""
        return cls(float(reward), "ok", dict(components or {}), detail, dict(extra or {}))

    @classmethod
    def invalid(cls, detail: str, components: dict[str, float] | None = None) -> Score:
        """A malformed response: reward 0, and it counts."""
        return cls(0.0, "invalid", dict(components or {}), detail)

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
