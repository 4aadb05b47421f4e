"""The one interface every proof backend implements (interactive server, JSON fork, replay)."""

from __future__ import annotations

from typing import Literal, Protocol

from environments.tamarin.model import NodeView, Path
from verifiers.tamarin.theory import Theory

Quantifier = Literal["all-traces", "exists-trace"]


class ProofBackend(Protocol):
    """Observes and extends proofs of one prover.

    Nodes are named by ``(theory, lemma, path)``; a backend may cache live handles for paths
    (theory indices of an interactive server, constraint-system blobs of the JSON fork), but a
    path it has never seen must still work: it replays the path from the lemma's root.
    Every method raises the errors of ``environments.tamarin.model``, never a bare exception
    from a library.
    """

    @property
    def name(self) -> str:
        """``interactive``, ``json-api`` or ``replay``."""
        ...

    @property
    def prover(self) -> str:
        """Which prover answers (e.g. ``tamarin-prover 1.8.0``): states record it, because
        method texts and case names of one prover version do not replay on another."""
        ...

    def lemmas(self, theory: Theory) -> dict[str, Quantifier]:
        """The theory's lemmas in order, with their trace quantifier."""
        ...

    def observe(self, theory: Theory, lemma: str, path: Path) -> NodeView:
        """The node at ``path``: constraint system, ranked methods, status."""
        ...

    def apply(self, theory: Theory, lemma: str, path: Path, rank: int) -> tuple[str, ...]:
        """Apply method ``rank`` (1-based, as Tamarin numbers them) at ``path``; returns the
        resulting case names in Tamarin's order (``""`` for an unnamed case; empty when the
        method closed the branch, as ``contradiction`` does)."""
        ...

    def close(self) -> None:
        """Stop every prover process this backend started; idempotent."""
        ...
