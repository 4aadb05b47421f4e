"""Level 5, function: the circuit's signed regulatory graph against what the task asks for.

See ``spec.py`` for the three kinds of check. Messages name the failed check and describe the
candidate's own circuit (never the reference).
"""

from __future__ import annotations

import itertools
import re

from verifiers.sbol import library, render
from verifiers.sbol.design import (
    TITLES,
    Design,
    Edge,
    chain_length,
    classify,
    feed_forward_kind,
    feed_forward_motifs,
    ring_size,
    truth_table,
)
from verifiers.sbol.extract import Failed
from verifiers.sbol.spec import CircuitSpec

MAX_LISTED = 3


def _constraints(design: Design, spec: CircuitSpec) -> None:
    regulators = {r.regulator for r in design.acting(spec.inputs)}
    used = {name for unit in design.units for name in unit.parts}
    for name in spec.forbidden:
        if name in used:
            raise Failed(f"{name!r} must not be used any more, but the circuit still uses it")
    if spec.repressors is not None:
        outside = sorted(regulators - set(spec.repressors))
        if outside:
            raise Failed(
                f"regulator(s) {', '.join(outside)} are not among the repressors the task allows "
                f"({', '.join(sorted(spec.repressors))})"
            )
    if spec.at_least_one_of and not regulators & set(spec.at_least_one_of):
        raise Failed(
            "the circuit must use at least one of the repressors "
            f"{', '.join(sorted(spec.at_least_one_of))}"
        )
    if spec.distinct:
        for gene in sorted(regulators):
            count = sum(
                1
                for unit in design.units
                for name, role in zip(unit.parts, unit.roles, strict=True)
                if role == "CDS" and name == gene
            )
            if count > 1:
                raise Failed(f"repressor {gene} is expressed from {count} units: use each once")


def _rows(count: int) -> list[str]:
    return ["".join(bits) for bits in itertools.product("01", repeat=count)]


def _truth_table(design: Design, spec: CircuitSpec) -> None:
    if spec.truth_table is None or spec.output is None:
        return
    table = truth_table(design, spec.inputs, spec.output)
    if table is None:
        raise Failed("the circuit has feedback, so it has no truth table: a gate must be acyclic")
    for row, got, want in zip(_rows(len(spec.inputs)), table, spec.truth_table, strict=True):
        if got != want:
            values = ", ".join(f"{p}={bit}" for p, bit in zip(spec.inputs, row, strict=True))
            raise Failed(
                f"truth table: with {values} the circuit expresses {spec.output}={got}, the "
                f"specification says {want}"
            )


def _signs(design: Design, spec: CircuitSpec) -> None:
    """Repressor-only tasks admit no stimulation; and no regulation may contradict the library
    (a known repressor cannot be made an activator by saying so)."""
    for regulation in design.acting(spec.inputs):
        gene, promoter, sign = regulation.regulator, regulation.promoter, regulation.sign
        if sign > 0 and not spec.activation:
            raise Failed(
                f"{gene} stimulates {promoter}: these circuits are built from repressors, so "
                "every regulation must be an inhibition"
            )
        known = library.regulation(gene).get(promoter)
        if known is not None and known != sign:
            verb = "represses" if known < 0 else "activates"
            raise Failed(f"{gene} {verb} {promoter} in the library; the document says otherwise")


def _feed_forward(design: Design, spec: CircuitSpec) -> None:
    if spec.feed_forward is None:
        return
    edges = {e for e in design.edges(spec.inputs) if e[0] in design.genes()}
    kinds = {feed_forward_kind(edges, m) for m in feed_forward_motifs(edges, design.genes())}
    if spec.feed_forward not in kinds:
        raise Failed(
            f"the feed-forward loop is {' and '.join(sorted(kinds))}, not {spec.feed_forward} "
            "(coherent: the direct path has the sign of the indirect one)"
        )


def _function(design: Design, spec: CircuitSpec) -> None:
    _signs(design, spec)
    found = classify(design, spec.inputs)
    if found != spec.circuit:
        raise Failed(f"the circuit is {TITLES[found]}, not {TITLES[spec.circuit]}")
    if spec.output is not None and spec.output not in design.genes():
        raise Failed(f"the reporter {spec.output} is expressed by no unit")
    if spec.size is not None:
        size = (
            ring_size(design)
            if spec.circuit == "repressilator"
            else chain_length(design, spec.inputs)
        )
        what = "ring" if spec.circuit == "repressilator" else "chain"
        if spec.circuit in ("repressilator", "cascade") and size != spec.size:
            raise Failed(f"the {what} has {size} repressors; the task asks for {spec.size}")
    _feed_forward(design, spec)
    _truth_table(design, spec)


def _describe(edges: set[Edge] | list[Edge]) -> str:
    return ", ".join(render.edge(edge) for edge in sorted(edges)[:MAX_LISTED]) + (
        f" and {len(edges) - MAX_LISTED} more" if len(edges) > MAX_LISTED else ""
    )


def _exact(design: Design, spec: CircuitSpec) -> None:
    expected = {tuple(edge) for edge in spec.edges or []}
    found = design.edges(spec.inputs)
    missing = expected - found
    extra = found - expected
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing {_describe(missing)}")  # type: ignore[arg-type]
        if extra:
            parts.append(f"unexpected {_describe(extra)}")
        raise Failed("the regulatory graph differs from the intended one: " + "; ".join(parts))


_ABSTRACT = re.compile(r"G\d+")


def _isomorphic(design: Design, spec: CircuitSpec) -> None:
    expected = {(a, b, s) for a, b, s in spec.edges or []}
    nodes = {n for a, b, _ in expected for n in (a, b)}
    abstract = sorted(n for n in nodes if _ABSTRACT.fullmatch(n))
    fixed = nodes - set(abstract)
    found = design.edges(spec.inputs)
    genes = sorted({n for a, b, _ in found for n in (a, b)} - fixed)
    pool = set(spec.repressors) if spec.repressors is not None else set(genes)
    if len(genes) != len(abstract) or len(found) != len(expected):
        raise Failed(
            f"the topology differs: the task's circuit has {len(abstract)} repressors and "
            f"{len(expected)} regulations, yours has {len(genes)} and {len(found)}"
        )
    for choice in itertools.permutations(genes):
        rename = dict(zip(abstract, choice, strict=True))
        mapped = {(rename.get(a, a), rename.get(b, b), s) for a, b, s in expected}
        if mapped == found and set(choice) <= pool:
            return
    raise Failed(
        "the topology differs: no assignment of your repressors to the task's nodes gives the "
        "same signed regulations"
    )


def check(design: Design, spec: CircuitSpec) -> None:
    """Level 5; raises ``Failed`` with the failed check."""
    _constraints(design, spec)
    if spec.check == "function":
        _function(design, spec)
    elif spec.check == "exact":
        _exact(design, spec)
    else:
        _isomorphic(design, spec)
        _truth_table(design, spec)
