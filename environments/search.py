"""What a family gives the searching adversary of ``envserver audit --search``: where to start
(solutions and near-solutions), how to change an answer (mutators), and an independent judge of
what an answer deserves.

A red-team suite is a list of attacks somebody thought of; a policy under RL searches. The search
starts from answers that earn reward (the expert's, the reference) and mutates them (hedges,
wrappers, restatements, type confusions, encodings, a family's own moves such as an SVA horizon
extension), scores every mutant with the verifier under test, and reports each one that earns
more than it deserves. What a mutant deserves is decided without the verifier under test:

- by construction, where the mutation itself settles it (two answers offered for one are a
  hedge: 0; a restatement that holds a dummy symbol is outside the answer class: 0); a mutator
  says so in ``Mutant.deserves``;
- otherwise by the family's ``SearchSpace.deserves``, an independent check (math: the exact
  value of the answer; SVA: a longer bounded check; OPT: the exact checker; EvoEnv: the
  reference); None where it cannot tell, and the mutant then only feeds the search.

Nothing here scores or imports the server: ``envserver.search`` runs the search on a registry
or a live server.
"""

from __future__ import annotations

import random
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class Probe:
    """One answer and where it is scored: exactly one of ``task_id`` (single-turn by id),
    ``verifier`` with ``reference`` and ``options``, or ``env`` with ``seed``, ``options`` and
    ``actions`` (an episode; ``response`` is then unused). The same shape as a red-team case.
    ``origin`` is the chain of moves that made it (``expert > hedge.or > wrap.text``)."""

    response: str = ""
    task_id: str | None = None
    verifier: str | None = None
    reference: Any = None
    options: Mapping[str, Any] = field(default_factory=dict)
    env: str | None = None
    seed: int | None = None
    actions: tuple[str, ...] | None = None
    origin: str = "seed"

    def __post_init__(self) -> None:
        targets = [self.task_id, self.verifier, self.env]
        if sum(target is not None for target in targets) != 1:
            raise ValueError("a probe is scored by exactly one of task_id, verifier or env")
        if self.env is not None and (self.seed is None or self.actions is None):
            raise ValueError("an episode probe needs a seed and actions")

    @property
    def target(self) -> str:
        """The environment or verifier that scores it (a task id's environment)."""
        if self.task_id is not None:
            return self.task_id.split("@", maxsplit=1)[0]
        return str(self.verifier if self.verifier is not None else self.env)

    def answer(self, response: str, move: str) -> Probe:
        """The same target with another response, made by ``move``."""
        return replace(self, response=response, origin=f"{self.origin} > {move}")

    def played(self, actions: Sequence[str], move: str) -> Probe:
        """The same episode with other actions, made by ``move``."""
        return replace(self, actions=tuple(actions), origin=f"{self.origin} > {move}")


@dataclass(frozen=True)
class Mutant:
    """A changed answer, and what it deserves when the change settles it (None: ask the family's
    judge). ``deserves`` is the most reward a correct verifier may give it."""

    probe: Probe
    deserves: float | None = None


class Mutator(Protocol):
    """One class of move. ``name`` is the class (``several``, ``restate``, ``horizon``...): the
    report counts by it, and the control plugin plants one loophole per class."""

    @property
    def name(self) -> str: ...

    def __call__(self, parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
        """Mutants of ``parent``; none where the move does not apply to it. A move that cannot
        make a wrong answer right (a wrapper, an encoding) passes on a parent's ``deserves`` of
        0 (see ``kept``)."""
        ...


Judge = Callable[[Probe], float | None]
"""The independent judge: the most reward ``probe``'s answer deserves, or None where it cannot
tell (the mutant is then not counted as a finding either way)."""


def unjudged(probe: Probe) -> float | None:
    """No judge: only mutants their move settled count."""
    del probe
    return None


@dataclass(frozen=True)
class SearchSpace:
    """A family's search: ``seeds(rng)`` yields starting points that earn reward, each with
    what it deserves (normally its full reward), drawn afresh from ``rng`` (random task ids,
    the expert's answers, references, near-misses that deserve 0); ``mutators`` change them;
    ``deserves`` judges a mutant that its mutator did not settle."""

    seeds: Callable[[random.Random], Iterator[Mutant]]
    mutators: Sequence[Mutator]
    deserves: Judge = unjudged


@dataclass(frozen=True)
class Move:
    """A mutator from a function: ``Move("several", fn)``, ``fn(parent, rng)`` yields mutants."""

    name: str
    make: Callable[[Mutant, random.Random], Iterator[Mutant]]

    def __call__(self, parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
        return self.make(parent, rng)


def kept(parent: Mutant, probe: Probe) -> Mutant:
    """``probe`` made from ``parent`` by a move that cannot make a wrong answer right: it
    deserves 0 where the parent did, and is left to the judge otherwise."""
    return Mutant(probe, 0.0 if parent.deserves == 0 else None)


@cache
def must_pay(suite: Path) -> tuple[Mutant, ...]:
    """The cases of a red-team suite (``redteam.toml``) that must keep full reward, as seeds
    deserving 1: the equivalent forms a family promised to pay are where a search starts."""
    cases = tomllib.loads(suite.read_text())["case"]
    return tuple(
        Mutant(
            Probe(
                case.get("response", ""),
                task_id=case.get("task_id"),
                verifier=case.get("verifier"),
                reference=case.get("reference"),
                options=case.get("options") or {},
                env=case.get("env"),
                seed=case.get("seed"),
                actions=tuple(case["actions"]) if "actions" in case else None,
                origin=f"redteam: {case['name']}",
            ),
            1.0,
        )
        for case in cases
        if case["expect"] == "full"
    )
