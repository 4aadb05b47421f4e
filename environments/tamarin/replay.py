"""The ``replay`` backend: real recorded Tamarin states served offline.

It answers only what the recordings hold: a node outside them raises ``NotRecorded``; nothing is
ever invented. It is what the tests and a machine without Tamarin run on; the states and method
lists are those of the real prover that was recorded (Tamarin 1.8.0).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from importlib.resources.abc import Traversable

from environments.tamarin.backend import Quantifier
from environments.tamarin.model import (
    MethodNotApplicable,
    NodeView,
    NotRecorded,
    PathError,
    normalise_method,
)
from environments.tamarin.model import Path as ProofPath
from environments.tamarin.recordings import RecordedNode, RecordedTheory, load_recordings
from verifiers.tamarin.theory import Theory, UnknownLemma, parse_theory

RECORDED_PROVER = "tamarin-prover 1.8.0 (recorded)"


class ReplayBackend:
    """Serves the recorded theories from the files under ``paths``: a theory whose text is the
    one a recording printed (a recording without that text, an explored tree alone, serves
    nothing until a transcript of the same theory brings it)."""

    name = "replay"
    prover = RECORDED_PROVER

    def __init__(self, paths: list[Traversable]) -> None:
        self._paths = paths

    @cached_property
    def recorded(self) -> dict[str, RecordedTheory]:
        """The recordings, read on first use."""
        return load_recordings(self._paths)

    def theories(self) -> dict[str, Theory]:
        """The recorded theories whose text the recordings carry, by name."""
        return {
            name: parse_theory(recorded.source, trusted=True)
            for name, recorded in sorted(self.recorded.items())
            if recorded.source is not None
        }

    def serves(self, theory: Theory) -> bool:
        """Whether ``theory`` is a recorded one: its text byte for byte the text the recording
        prover printed. A theory is its text, not its name: another text under a recorded name
        (a user's false lemma) would otherwise be answered with the recorded theory's proofs."""
        recorded = self.recorded.get(theory.name)
        return recorded is not None and recorded.source == theory.text

    def _theory(self, theory: Theory) -> RecordedTheory:
        if not self.serves(theory):
            have = ", ".join(sorted(self.recorded)) or "none"
            raise NotRecorded(
                f"theory {theory.name} is not a recorded text; the replay backend serves only "
                f"the recorded theories ({have}), byte for byte. Install Tamarin to prove others."
            )
        return self.recorded[theory.name]

    def lemmas(self, theory: Theory) -> dict[str, Quantifier]:
        """The recorded lemmas, with the quantifier the theory text states."""
        stated = theory.lemmas
        return {lemma: stated.get(lemma, "all-traces") for lemma in self._theory(theory).roots}

    def _node(self, theory: Theory, lemma: str, path: ProofPath) -> RecordedNode:
        recorded = self._theory(theory)
        if lemma not in recorded.roots:
            raise UnknownLemma(
                f"no recording of lemma {lemma!r} of {theory.name}; recorded: "
                + ", ".join(recorded.roots)
            )
        node = self._recorded_node(recorded, recorded.roots[lemma])
        for depth, (method, case) in enumerate(path):
            rank = _rank_of(node, method)
            if rank is None:
                raise PathError(f"step {depth + 1}: no method {method!r} at this node")
            if rank not in node.expansions:
                raise NotRecorded(
                    f"step {depth + 1}: method {rank} ({method}) was never applied here in the "
                    "recording"
                )
            children = node.expansions[rank]
            if case not in children:
                raise PathError(
                    f"step {depth + 1}: method {method!r} has no case {case!r}; its cases: "
                    + (", ".join(repr(c) for c in children) or "none (it closes the branch)")
                )
            node = self._recorded_node(recorded, children[case])
        return node

    @staticmethod
    def _recorded_node(recorded: RecordedTheory, node_id: str) -> RecordedNode:
        try:
            return recorded.nodes[node_id]
        except KeyError:  # a truncated or hand-edited recording: no node, never a crash
            raise NotRecorded(
                f"the recording of {recorded.name} names node {node_id} but does not hold it"
            ) from None

    def observe(self, theory: Theory, lemma: str, path: ProofPath) -> NodeView:
        """The recorded node at ``path``, with the methods the recording applied there as the
        steppable ones (any other would be ``NotRecorded``)."""
        node = self._node(theory, lemma, path)
        return replace(node.view, steppable=tuple(sorted(node.expansions)))

    def apply(self, theory: Theory, lemma: str, path: ProofPath, rank: int) -> tuple[str, ...]:
        """The recorded cases of method ``rank`` at ``path``."""
        node = self._node(theory, lemma, path)
        if not 1 <= rank <= len(node.view.methods):
            raise MethodNotApplicable(
                f"method {rank} is out of range: this node has {len(node.view.methods)}"
            )
        if rank not in node.expansions:
            raise NotRecorded(
                f"method {rank} ({node.view.methods[rank - 1].text}) was never applied at this "
                "node in the recording"
            )
        return tuple(node.expansions[rank])

    def close(self) -> None:
        """Nothing to stop."""


def _rank_of(node: RecordedNode, method: str) -> int | None:
    wanted = normalise_method(method)
    for rank, candidate in enumerate(node.view.methods, start=1):
        if normalise_method(candidate.text) == wanted:
            return rank
    return None
