"""What an agent sees of a node, and how its answer names a method."""

from __future__ import annotations

import re
from typing import Any

from environments.tamarin.model import NodeView, one_line

_RANK = re.compile(r"\s*(?:method\s*)?#?(\d{1,4})\.?\s*")


# Method texts are shown and recorded on one line, as in Tamarin's proof scripts.
def observation(theory: str, lemma: str, quantifier: str, path: list[str], view: NodeView) -> str:
    """The node as text: where it is, its constraint system, and the ranked methods."""
    where = " / ".join(name or "(unnamed)" for name in path) or "root"
    methods = "\n".join(
        f"{rank}. {one_line(method.text)}"
        + (f"  {method.explanation}" if method.explanation else "")
        for rank, method in enumerate(view.methods, start=1)
    )
    steppable = view.steppable_ranks()
    limited = ""
    if len(steppable) < len(view.methods):  # replayed: the recording went no further
        taken = ", ".join(map(str, steppable)) or "none"
        limited = f"Replayed from a recording: the methods that can be taken here: {taken}.\n\n"
    return (
        f"Theory {theory}, lemma {lemma} ({quantifier}); goal: {where}\n\n"
        f"Constraint system:\n{view.system}\n\n"
        f"Proof methods (Tamarin's ranking):\n{methods}\n\n"
        f"{limited}Answer with a method's number or its text."
    )


def view_info(view: NodeView) -> dict[str, Any]:
    """The node's methods as structured data, for policies that read goals rather than text.
    ``valid_actions`` are the ranks a step can take here: on the replay backend only the
    methods the recording applied, so an agent sampling from it never steps off the record."""
    steppable = view.steppable_ranks()
    return {
        "methods": [
            {
                "rank": rank,
                "text": one_line(method.text),
                "explanation": method.explanation,
                "kind": method.kind,
                "goal_kind": method.goal.kind if method.goal else None,
                "steppable": rank in steppable,
            }
            for rank, method in enumerate(view.methods, start=1)
        ],
        "valid_actions": [str(rank) for rank in steppable],
    }


def _squash(text: str) -> str:
    return "".join(text.split())


def resolve_action(action: str, view: NodeView) -> int | None:
    """The rank ``action`` names: a number (``"2"``, ``"2."``, ``"method 2"``) or a method's
    text, compared without white space (``solve(X)`` matches Tamarin's ``solve( X )``);
    None when it names no method here."""
    match = _RANK.fullmatch(action)
    if match is not None:
        rank = int(match[1])
        return rank if 1 <= rank <= len(view.methods) else None
    wanted = _squash(action.strip().removeprefix("by "))
    if not wanted:
        return None
    for rank, method in enumerate(view.methods, start=1):
        if _squash(method.text) == wanted:
            return rank
    # "contradiction" alone names the contradiction Tamarin offers with its reason comment.
    for rank, method in enumerate(view.methods, start=1):
        if method.kind == wanted and method.kind in ("contradiction", "simplify", "induction"):
            return rank
    return None
