"""What every proof backend speaks: nodes, ranked proof methods, paths and errors.

A node of a proof is named by its **path**: the ``(method text, case name)`` steps from the
lemma's root. Method *texts* (not ranks) name the steps because Tamarin recomputes its ranking
at every node, so a text stays meaningful when a path is replayed on another replica.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

NodeStatus = Literal["open", "solved", "unfinishable"]
"""``open``: methods can be applied; ``solved``: a trace was found (the constraint system is
solved: an attack on an all-traces lemma, a witness for an exists-trace lemma);
``unfinishable``: Tamarin declares the branch cannot be finished."""

MethodKind = Literal["simplify", "induction", "solve", "contradiction", "sorry", "solved", "other"]
GoalKind = Literal["action", "premise", "chain", "disjunction", "split_eqs", "subterm", "other"]


@dataclass(frozen=True)
class Goal:
    """The goal inside ``solve( … )``, classified by Tamarin's goal syntax (reference §3.4)."""

    kind: GoalKind
    text: str


@dataclass(frozen=True)
class ProofMethod:
    """One ranked proof method: its text as Tamarin prints it and Tamarin's explanation."""

    text: str
    explanation: str = ""

    @property
    def kind(self) -> MethodKind:
        """What the method does, from its first word."""
        return method_kind(self.text)

    @property
    def goal(self) -> Goal | None:
        """The goal of a ``solve( … )`` method, else None."""
        return parse_goal(self.text)


@dataclass(frozen=True)
class NodeView:
    """What a backend reports about one node: the constraint system, the ranked methods
    (position i is rank i + 1) and the status."""

    system: str
    methods: tuple[ProofMethod, ...]
    status: NodeStatus = "open"
    steppable: tuple[int, ...] | None = None
    """The ranks a step can apply here; None: all of them (a live prover). The replay backend
    lists Tamarin's whole ranking (what the prover showed) but can only step the methods the
    recording applied at this node."""

    def steppable_ranks(self) -> tuple[int, ...]:
        """The ranks a step can apply here, in rank order."""
        if self.steppable is None:
            return tuple(range(1, len(self.methods) + 1))
        return self.steppable


Step = tuple[str, str]
"""``(method text, case name)``; the unnamed case is ``""``."""
Path = tuple[Step, ...]


class TamarinError(Exception):
    """Base of everything a backend raises on purpose."""


class MethodNotApplicable(TamarinError):
    """No such method at this node (rank out of range, unknown text), or the prover refused it."""


class PathError(TamarinError):
    """The path leaves the proof: an unknown case, or a step below a closed case."""


class NotRecorded(TamarinError):
    """The replay backend was asked for a node outside the recorded tree."""


class ProverUnavailable(TamarinError):
    """No prover can serve this request (no binary, or it failed to start)."""


class ProverTimeout(TamarinError):
    """The prover did not answer within its time limit; the process was killed and reaped."""


class ProverCrashed(TamarinError):
    """The prover process died or answered garbage."""


def normalise_method(text: str) -> str:
    """A method text with runs of white space folded, for comparing a typed text with
    Tamarin's (which pads ``solve(`` with spaces)."""
    return " ".join(text.split())


def one_line(text: str) -> str:
    """A method text on one line, as Tamarin prints it in proof scripts: its HTML wraps long
    goals over lines, but the spacing within a line (``(φ1)  ∥ (φ2)``) is Tamarin's own."""
    return re.sub(r"\s*\n\s*", " ", text).strip()


def method_kind(text: str) -> MethodKind:
    """The kind of a method text: ``solve( … )`` → solve, ``contradiction /* … */`` → …"""
    word = text.strip().split("(", 1)[0].split(maxsplit=1)
    head = word[0] if word else ""
    kinds: dict[str, MethodKind] = {
        "simplify": "simplify",
        "induction": "induction",
        "solve": "solve",
        "contradiction": "contradiction",
        "sorry": "sorry",
        "SOLVED": "solved",
    }
    return kinds.get(head, "other")


_SOLVE = re.compile(r"^\s*solve\(\s*(?P<goal>.*?)\s*\)\s*$", re.DOTALL)
_PREMISE = re.compile(r"▶[₀-₉]+\s*#")


def parse_goal(text: str) -> Goal | None:
    """Classify the goal of a ``solve( … )`` method (reference §3.4); None for other methods."""
    match = _SOLVE.match(text)
    if match is None:
        return None
    goal = match["goal"]
    kind: GoalKind
    if goal.startswith("splitEqs("):
        kind = "split_eqs"
    elif "~~>" in goal:
        kind = "chain"
    elif _PREMISE.search(goal):
        kind = "premise"
    elif "∥" in goal:
        kind = "disjunction"
    elif "⊏" in goal:
        kind = "subterm"
    elif re.search(r"@\s*#", goal):
        kind = "action"
    else:
        kind = "other"
    return Goal(kind, goal)
