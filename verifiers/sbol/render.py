"""The text look at a circuit: its units, its regulations and its signed gene graph.

Shown in observations (the circuit a repair or completion task intends) and in level-5
messages (the candidate's own circuit), so people and policies read the same notation:
``X ⊣ Y`` X represses Y, ``X → Y`` X activates Y, ``input pTac → X`` an input promoter drives X.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from verifiers.sbol.design import TITLES, Design, Edge, classify

SYMBOLS = {-1: "⊣", 1: "→"}


def edge(item: Edge, inputs: Iterable[str] = ()) -> str:
    """One signed edge; a source that is an input promoter is marked as such."""
    source, target, sign = item
    prefix = "input " if source in inputs else ""
    return f"{prefix}{source} {SYMBOLS[sign]} {target}"


def edges(items: Iterable[Edge], inputs: Sequence[str] = ()) -> list[str]:
    """Edges sorted: input edges first, then by source."""
    return [edge(item, inputs) for item in sorted(items, key=lambda e: (e[0] not in inputs, e))]


def circuit(design: Design, inputs: Sequence[str] = (), *, with_type: bool = True) -> str:
    """Units, promoter-level regulations, the gene graph and (optionally) the topology."""
    lines = ["units:"]
    width = max((len(unit.name) for unit in design.units), default=0)
    lines += [f"  {unit.name:<{width}}  {' > '.join(unit.parts)}" for unit in design.units]
    lines.append("regulation:")
    lines += [f"  {r.regulator} {SYMBOLS[r.sign]} {r.promoter}" for r in design.regulations] or [
        "  (none)"
    ]
    if design.inductions:
        lines.append("inducers:")
        lines += [f"  {i.chemical} {SYMBOLS[i.sign]} {i.regulator}" for i in design.inductions]
    lines.append("gene graph:")
    lines += [f"  {line}" for line in edges(design.edges(inputs), inputs)] or ["  (none)"]
    if with_type:
        lines.append(f"topology: {TITLES[classify(design, inputs)]}")
    return "\n".join(lines)
