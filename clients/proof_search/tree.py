"""The AND/OR proof tree a search builds from ``expand`` answers.

A ``Goal`` (OR node) is proven when one of its methods is; a ``Method`` (AND node) is proven when
every case it opens is proven (a method that opens none closes the goal). A goal whose node is a
found trace ends the whole analysis at once: the search stops there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class Goal:
    """An open goal: its state token, what the server said about it, and the search's tally."""

    state: str
    path: tuple[str, ...]
    info: dict[str, Any]
    trace: bool = False
    """Reaching this goal finished the analysis (a trace was found)."""
    dead: bool = False
    """No method here can lead to a proof (unfinishable, or every method failed)."""
    methods: list[Method] | None = None
    """None until expanded."""
    visits: int = 0
    value_sum: float = 0.0

    @property
    def proven(self) -> bool:
        """One method closes it."""
        return self.trace or any(m.proven for m in self.methods or ())

    @property
    def value(self) -> float:
        """Mean backed-up value in [0, 1]."""
        return 1.0 if self.proven else (self.value_sum / self.visits if self.visits else 0.5)

    def proof_size(self) -> float:
        """Methods in the smallest proof found below this goal (``math.inf`` when none)."""
        if self.trace:
            return 0
        return min((m.proof_size() for m in self.methods or () if m.proven), default=math.inf)


@dataclass(eq=False)
class Method:
    """One proof method at a goal and the cases it opened."""

    text: str
    prior: float
    cases: list[Goal] = field(default_factory=list)
    failed: bool = False
    visits: int = 0
    value_sum: float = 0.0

    @property
    def proven(self) -> bool:
        """Every case is proven (or one case found a trace)."""
        if self.failed:
            return False
        return any(c.trace for c in self.cases) or all(c.proven for c in self.cases)

    @property
    def dead(self) -> bool:
        """It failed, or one of its cases cannot be proven."""
        return self.failed or any(c.dead for c in self.cases)

    @property
    def value(self) -> float:
        """Mean backed-up value; before any visit, the chance that all cases are proven if each
        one is a coin flip, so that methods opening fewer cases look better."""
        if self.proven:
            return 1.0
        if self.visits:
            return self.value_sum / self.visits
        return 0.5 ** sum(1 for c in self.cases if not c.proven)

    def proof_size(self) -> float:
        """1 plus the smallest proofs of its cases (a found trace counts for the whole)."""
        traced = [c for c in self.cases if c.trace]
        if traced:
            return 1
        return 1 + sum(c.proof_size() for c in self.cases)
