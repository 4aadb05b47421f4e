"""OPT in the playground (``environments.renderer``): an answer's verdict in words a person reads
(the reference's value and whether it is proven optimal, the answer's value, why it failed)
instead of the verifier's components (``optimal 1``, ``quality_ratio 0.8``).

Everything shown comes from the turn (the step's components, metrics and detail): no engine,
no task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from environments.base import JSONValue
from environments.renderer import Turn

TEMPLATES = Path(__file__).parent / "templates"


class VerdictRenderer:
    """The verdict on an OPT answer."""

    templates = TEMPLATES
    template = "opt/verdict.html"

    def context(self, state: JSONValue, turn: Turn) -> dict[str, Any]:
        """Nothing before an answer or without a verdict (a timeout, an error); else the
        reference, the answer's value (None when it has none: unreadable or infeasible) and
        what the verdict was."""
        parts, measured = turn.components, turn.metrics
        if not turn.action or "reference" not in measured:
            return {}
        feasible = parts.get("feasible") == 1.0
        if turn.status == "invalid":
            verdict = "unreadable"
        elif not feasible:
            verdict = "infeasible"
        else:
            verdict = "optimal" if turn.reward == 1.0 else "feasible"
        return {
            "verdict": verdict,
            "reference": measured["reference"],
            "proven": measured.get("optimal") == 1.0,
            "value": measured.get("objective") if feasible else None,
            "ratio": parts.get("quality_ratio") if feasible else None,
            "why": turn.detail,
        }
