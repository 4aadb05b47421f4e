"""A circuit as the checks see it: ordered transcription units and signed regulations.

Both sides use this model: the generator builds a ``Design`` and renders it as a program; the
verifier extracts one from the document a program leaves. Regulation is a property of parts:
the protein of CDS ``X`` acting on promoter ``p`` (sign -1 inhibition, +1 stimulation) acts on
every unit that ``p`` drives. From units and regulations follow the gene-level signed graph
(``edges``), its topology (``classify``) and, for acyclic circuits, a Boolean truth table
(``truth_table``): a regulator acts when its gene is expressed and its inducers allow it (no
inducer that releases it is present; one it needs is); a promoter is on when none of its
repressors acts and every one of its activators does (a hybrid promoter's operators are all
bound); an input promoter is on when its input is; a gene is expressed when any promoter
upstream of it in its unit segment (tandem promoters) is on. Inputs are input promoters or
inducers (small molecules, on when present). An input promoter stands for its input: what the
document says regulates it (the host's sensor) is not part of the circuit's graph.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from verifiers.sbol.library import Role

CircuitType = Literal[
    "not_gate", "toggle_switch", "repressilator", "cascade", "feed_forward_loop", "logic_gate"
]
CIRCUIT_TYPES: tuple[CircuitType, ...] = (
    "not_gate", "toggle_switch", "repressilator", "cascade", "feed_forward_loop", "logic_gate",
)  # fmt: skip
TITLES: dict[str, str] = {
    "not_gate": "a NOT gate (inverter)",
    "toggle_switch": "a toggle switch (mutual repression)",
    "repressilator": "a repressilator (odd ring of repression)",
    "cascade": "a transcriptional cascade",
    "feed_forward_loop": "a feed-forward loop",
    "logic_gate": "a two-input logic gate",
    "feedback": "another feedback topology",
    "other": "another acyclic topology",
    "unregulated": "a circuit without regulation",
}

Edge = tuple[str, str, int]
"""``(source, target, sign)``: a gene (or an input promoter) regulating a gene."""


@dataclass(frozen=True)
class Unit:
    """A transcription unit: part names in order, with their roles."""

    name: str
    parts: tuple[str, ...]
    roles: tuple[Role, ...]

    def segments(self) -> list[tuple[list[str], list[str]]]:
        """``(promoters, CDSs)`` per stretch ending at a terminator: every promoter of a
        stretch drives every CDS after it in that stretch."""
        found: list[tuple[list[str], list[str]]] = []
        promoters: list[str] = []
        cdss: list[str] = []
        for name, role in zip(self.parts, self.roles, strict=True):
            if role == "promoter":
                if cdss:  # a promoter after a CDS starts a new stretch of drivers
                    found.append((promoters, cdss))
                    promoters, cdss = [], []
                promoters.append(name)
            elif role == "CDS":
                cdss.append(name)
            elif role == "terminator":
                found.append((promoters, cdss))
                promoters, cdss = [], []
        if promoters or cdss:
            found.append((promoters, cdss))
        return found


@dataclass(frozen=True)
class Regulation:
    """The protein of CDS ``regulator`` acting on ``promoter``."""

    regulator: str
    promoter: str
    sign: int  # -1 inhibition, +1 stimulation


@dataclass(frozen=True)
class Induction:
    """Small molecule ``chemical`` switching the protein of CDS ``regulator``: -1 releases it
    (IPTG and LacI), +1 is what it needs to act (arabinose and AraC)."""

    chemical: str
    regulator: str
    sign: int


@dataclass(frozen=True)
class Design:
    """Units, regulations and inductions; ``name`` is the system component's display id."""

    name: str
    units: tuple[Unit, ...]
    regulations: tuple[Regulation, ...]
    proteins: dict[str, str] = field(default_factory=dict, compare=False)  # CDS -> protein id
    inductions: tuple[Induction, ...] = ()

    def acting(self, inputs: Sequence[str] = ()) -> tuple[Regulation, ...]:
        """The regulations of the circuit itself: not those of input promoters (the input
        stands for them)."""
        return tuple(r for r in self.regulations if r.promoter not in inputs)

    def genes(self) -> list[str]:
        """CDS names in the units, in order of first appearance."""
        seen: dict[str, None] = {}
        for unit in self.units:
            for name, role in zip(unit.parts, unit.roles, strict=True):
                if role == "CDS":
                    seen.setdefault(name)
        return list(seen)

    def drivers(self) -> dict[str, set[str]]:
        """The promoters driving each gene (across all its units)."""
        found: dict[str, set[str]] = {gene: set() for gene in self.genes()}
        for unit in self.units:
            for promoters, cdss in unit.segments():
                for cds in cdss:
                    found[cds].update(promoters)
        return found

    def edges(self, inputs: Sequence[str] = ()) -> set[Edge]:
        """The signed gene graph; an input promoter drives its genes with sign +1, an input
        inducer switches its regulator with the induction's sign."""
        drivers = self.drivers()
        acting = self.acting(inputs)
        found: set[Edge] = {
            (i.chemical, i.regulator, i.sign) for i in self.inductions if i.chemical in inputs
        }
        for gene, promoters in drivers.items():
            for promoter in promoters:
                if promoter in inputs:
                    found.add((promoter, gene, 1))
                for regulation in acting:
                    if regulation.promoter == promoter:
                        found.add((regulation.regulator, gene, regulation.sign))
        return found


def _sccs(nodes: Iterable[str], edges: set[Edge]) -> list[set[str]]:
    """Strongly connected components with a cycle (two or more nodes, or a self-loop)."""
    succ: dict[str, set[str]] = {n: set() for n in nodes}
    for a, b, _ in edges:
        succ.setdefault(a, set()).add(b)
        succ.setdefault(b, set())
    reach: dict[str, set[str]] = {}
    for start in succ:
        seen, stack = set(), [start]
        while stack:
            for nxt in succ[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        reach[start] = seen
    found: list[set[str]] = []
    for node in succ:
        if node in reach[node] and not any(node in comp for comp in found):
            found.append({other for other in reach[node] if node in reach[other]} | {node})
    return found


def feed_forward_motifs(edges: set[Edge], genes: Iterable[str]) -> list[tuple[str, str, str]]:
    """Every ``(X, Y, Z)`` among genes with X → Y, X → Z and Y → Z (linear in the edges times
    the genes, so a document with many genes cannot make it slow)."""
    names = set(genes)
    succ: dict[str, set[str]] = {}
    for a, b, _ in edges:
        if a in names and b in names and a != b:
            succ.setdefault(a, set()).add(b)
    return sorted(
        (x, y, z)
        for x, targets in succ.items()
        for z in targets
        for y in targets
        if y not in (x, z) and z in succ.get(y, set())
    )


def feed_forward_kind(edges: set[Edge], motif: tuple[str, str, str]) -> str:
    """'coherent' when the direct path X → Z has the sign of the indirect X → Y → Z, else
    'incoherent' (Mangan and Alon's classes)."""
    x, y, z = motif
    sign = {(a, b): s for a, b, s in edges}
    return "coherent" if sign[(x, z)] == sign[(x, y)] * sign[(y, z)] else "incoherent"


def classify(design: Design, inputs: Sequence[str] = ()) -> str:  # noqa: PLR0911 - one per type
    """The circuit type of ``design`` (one of ``CIRCUIT_TYPES``, or 'feedback', 'other',
    'unregulated' for what fits none of them)."""
    genes = design.genes()
    edges = design.edges(inputs)
    gene_edges = {e for e in edges if e[0] in genes}
    cycles = _sccs(genes, gene_edges)
    if cycles:
        if len(cycles) == 1:
            ring = cycles[0]
            inner = [e for e in gene_edges if e[0] in ring and e[1] in ring]
            outs = {a for a, _, _ in inner}
            ins = {b for _, b, _ in inner}
            simple = len(inner) == len(ring) and outs == ring and ins == ring
            repressive = all(sign == -1 for _, _, sign in inner)
            if simple and repressive and len(ring) == 2:
                return "toggle_switch"
            if simple and repressive and len(ring) >= 3 and len(ring) % 2 == 1:
                return "repressilator"
        return "feedback"
    used_inputs = {a for a, _, _ in edges if a in inputs}
    if len(used_inputs) >= 2:
        return "logic_gate"
    if feed_forward_motifs(gene_edges, genes):
        return "feed_forward_loop"
    if not gene_edges:
        return "unregulated"
    regulators = {a for a, _, _ in gene_edges}
    in_degree = {g: sum(1 for e in gene_edges if e[1] == g) for g in genes}
    out_degree = {g: sum(1 for e in gene_edges if e[0] == g) for g in genes}
    if len(used_inputs) == 1 and max(in_degree.values()) <= 1 and max(out_degree.values()) <= 1:
        return "not_gate" if len(regulators) == 1 else "cascade"
    return "other"


def chain_length(design: Design, inputs: Sequence[str] = ()) -> int:
    """How many regulators a linear chain (NOT gate, cascade) passes through."""
    genes = set(design.genes())
    return len({r.regulator for r in design.acting(inputs) if r.regulator in genes})


def ring_size(design: Design) -> int:
    """The length of the (single) feedback ring, 0 when acyclic."""
    genes = design.genes()
    gene_edges = {e for e in design.edges() if e[0] in genes}
    cycles = _sccs(genes, gene_edges)
    return len(cycles[0]) if len(cycles) == 1 else 0


def evaluate(design: Design, inputs: Sequence[str], values: Sequence[int]) -> dict[str, int] | None:
    """Which genes are expressed for input values (None when the circuit has feedback)."""
    given = dict(zip(inputs, values, strict=True))
    drivers = design.drivers()
    regulators: dict[str, list[Regulation]] = {}
    for regulation in design.acting(inputs):
        regulators.setdefault(regulation.promoter, []).append(regulation)
    switched: dict[str, list[Induction]] = {}
    for induction in design.inductions:
        switched.setdefault(induction.regulator, []).append(induction)
    state: dict[str, int] = {}
    pending = set(drivers)
    while pending:
        progressed = False
        for gene in sorted(pending):
            needed = {
                r.regulator for p in drivers[gene] for r in regulators.get(p, []) if p not in given
            }
            if not needed <= state.keys() | (needed - set(drivers)):
                continue
            acts = {r: _acts(r, given, switched, state) for r in needed}
            state[gene] = int(any(_on(p, given, regulators, acts) for p in drivers[gene]))
            pending.discard(gene)
            progressed = True
        if not progressed:
            return None
    return state


def _acts(
    regulator: str,
    given: dict[str, int],
    switched: dict[str, list[Induction]],
    state: dict[str, int],
) -> bool:
    """The regulator's protein is made and its inducers let it act (an inducer that is not an
    input is absent)."""
    inductions = switched.get(regulator, [])
    released = any(given.get(i.chemical, 0) for i in inductions if i.sign < 0)
    needs = [i for i in inductions if i.sign > 0]
    induced = not needs or any(given.get(i.chemical, 0) for i in needs)
    return bool(state.get(regulator, 0)) and not released and induced


def _on(
    promoter: str,
    given: dict[str, int],
    regulators: dict[str, list[Regulation]],
    acts: dict[str, bool],
) -> bool:
    if promoter in given:
        return bool(given[promoter])
    acting = regulators.get(promoter, [])
    repressed = any(acts.get(r.regulator, False) for r in acting if r.sign < 0)
    return not repressed and all(acts.get(r.regulator, False) for r in acting if r.sign > 0)


def truth_table(design: Design, inputs: Sequence[str], output: str) -> list[int] | None:
    """``output``'s expression for every input combination (first input most significant),
    None when the circuit has feedback."""
    rows: list[int] = []
    for values in itertools.product((0, 1), repeat=len(inputs)):
        state = evaluate(design, inputs, values)
        if state is None:
            return None
        rows.append(state.get(output, 0))
    return rows
