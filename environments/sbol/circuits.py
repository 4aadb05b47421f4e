"""Circuit blueprints: the six circuit types as concrete designs drawn from the parts library.

A blueprint is a ``Design`` (units and regulations, every part from ``verifiers.sbol.library``)
plus what the task reads from it (inputs, the reporter, the size, the gate's truth table). All
circuits are built, as Cello's are, from repressors acting on their cognate promoters:

=================  =========================================================================
not_gate           input → R; pR → reporter
toggle_switch      pA → B; pB → A (and reporters on one or both sides: medium, hard)
repressilator      ring of 3 (easy, medium) or 5 (hard) repressors; medium and hard add a reporter
cascade            input → R1; pR1 → R2 ... → reporter, with 2, 3 or 4 repressors
feed_forward_loop  input → X; pX → Y; pX pY (tandem) → Z or the reporter (X → Y, X → Z, Y → Z)
logic_gate         NOR, NAND (easy); OR, AND (medium); NIMPLY, XNOR (hard) over two inputs
=================  =========================================================================

With activators (``activation``), two types gain the variants that need them, their inputs the
inducers: a feed-forward loop where AraC (with arabinose) activates pBAD and a hybrid promoter
driving the reporter — coherent (pBAD → LuxR, which also activates pBAD_pLux) or incoherent
(pBAD → TetR, which represses pBAD_tetO) — and an AND gate of AraC and LuxR on pBAD_pLux.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from verifiers.sbol import library
from verifiers.sbol.design import CircuitType, Design, Induction, Regulation, Unit, truth_table

Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")
Split = Literal["id", "ood"]

GATES: dict[Difficulty, tuple[str, ...]] = {
    "easy": ("NOR", "NAND"),
    "medium": ("OR", "AND"),
    "hard": ("NIMPLY", "XNOR"),
}
GATE_TABLES: dict[str, tuple[int, ...]] = {
    "NOT": (1, 0),
    "NOR": (1, 0, 0, 0),
    "NAND": (1, 1, 1, 0),
    "OR": (0, 1, 1, 1),
    "AND": (0, 0, 0, 1),
    "NIMPLY": (0, 0, 1, 0),  # a AND NOT b
    "XNOR": (1, 0, 0, 1),
}


@dataclass(frozen=True)
class Blueprint:
    """A concrete circuit and what a task checks about it."""

    circuit: CircuitType
    design: Design
    inputs: tuple[str, ...] = ()
    output: str | None = None
    size: int | None = None
    gate: str | None = None
    feed_forward: Literal["coherent", "incoherent"] | None = None

    @property
    def activation(self) -> bool:
        """Whether any regulation is an activation."""
        return any(r.sign > 0 for r in self.design.regulations)

    @property
    def repressors(self) -> list[str]:
        """The regulators, in order of first appearance."""
        genes = self.design.genes()
        regulators = {r.regulator for r in self.design.regulations}
        return [gene for gene in genes if gene in regulators]

    def truth_table(self) -> list[int] | None:
        """The output per input row, for circuits with inputs and a reporter."""
        if not self.inputs or self.output is None:
            return None
        return truth_table(self.design, self.inputs, self.output)

    def renamed(self, mapping: dict[str, str], name: str | None = None) -> Blueprint:
        """The same circuit with repressors swapped (``mapping``: old repressor -> new)."""
        parts = dict(mapping)
        for old, new in mapping.items():
            parts[library.REPRESSORS[old].promoter] = library.REPRESSORS[new].promoter
        units = tuple(
            Unit(
                "tu_" + "_".join(parts.get(p, p) for p in u.name.removeprefix("tu_").split("_")),
                tuple(parts.get(p, p) for p in u.parts),
                u.roles,
            )
            for u in self.design.units
        )
        regulations = tuple(
            Regulation(
                parts.get(r.regulator, r.regulator), parts.get(r.promoter, r.promoter), r.sign
            )
            for r in self.design.regulations
        )
        design = Design(name or self.design.name, units, regulations)
        return replace(self, design=design)


def repressor_pool(split: Split, *, sensors: bool) -> list[str]:
    """Repressors a split draws from: in-distribution never includes the held-out ones;
    ``sensors`` admits LacI and TetR (not in circuits whose inputs are their promoters)."""
    return [
        r.name
        for r in library.REPRESSORS.values()
        if (split == "ood" or not r.held_out) and (sensors or not r.sensor)
    ]


def draw_repressors(rng: random.Random, count: int, split: Split, *, sensors: bool) -> list[str]:
    """``count`` distinct repressors; an out-of-distribution draw has at least one held out."""
    pool = repressor_pool(split, sensors=sensors)
    chosen = rng.sample(pool, count)
    if split == "ood" and not set(chosen) & library.HELD_OUT:
        chosen[rng.randrange(count)] = rng.choice(sorted(library.HELD_OUT - set(chosen)))
    return chosen


class _Builder:
    """Units with library RBSs and terminators drawn from the generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.units: list[Unit] = []

    def unit(self, promoters: list[str], cds: str) -> None:
        rbs = self.rng.choice(library.RBSS)
        terminator = self.rng.choice(library.TERMINATORS)
        names = {u.name for u in self.units}
        name, count = f"tu_{cds}", 1
        while name in names:
            count += 1
            name = f"tu_{cds}_{count}"
        parts = (*promoters, rbs, cds, terminator)
        roles = ("promoter",) * len(promoters) + ("RBS", "CDS", "terminator")
        self.units.append(Unit(name, parts, roles))  # type: ignore[arg-type]

    def design(self, name: str, repressors: list[str]) -> Design:
        regulations = tuple(
            Regulation(r, library.REPRESSORS[r].promoter, -1) for r in sorted(repressors)
        )
        return Design(name, tuple(self.units), regulations)


def _p(repressor: str) -> str:
    return library.REPRESSORS[repressor].promoter


def _reporter(rng: random.Random, difficulty: Difficulty) -> str:
    return rng.choice(library.REPORTERS) if difficulty == "hard" else "YFP"


def not_gate(rng: random.Random, difficulty: Difficulty, split: Split) -> Blueprint:
    """Input → R ⊣ reporter."""
    source = rng.choice(sorted(library.INPUTS))
    [r] = draw_repressors(rng, 1, split, sensors=False)
    out = _reporter(rng, difficulty)
    b = _Builder(rng)
    b.unit([source], r)
    b.unit([_p(r)], out)
    return Blueprint("not_gate", b.design("not_gate", [r]), (source,), out, 1, "NOT")


def toggle_switch(rng: random.Random, difficulty: Difficulty, split: Split) -> Blueprint:
    """A ⊣ B, B ⊣ A, with reporters at medium and hard."""
    a, c = draw_repressors(rng, 2, split, sensors=True)
    b = _Builder(rng)
    b.unit([_p(a)], c)
    b.unit([_p(c)], a)
    out = None
    if difficulty != "easy":
        out = "YFP"
        b.unit([_p(a)], out)
    if difficulty == "hard":
        b.unit([_p(c)], "RFP")
    return Blueprint("toggle_switch", b.design("toggle_switch", [a, c]), (), out, 2)


def repressilator(rng: random.Random, difficulty: Difficulty, split: Split) -> Blueprint:
    """An odd ring of repression (3 or 5), with a reporter at medium and hard."""
    size = 5 if difficulty == "hard" else 3
    ring = draw_repressors(rng, size, split, sensors=True)
    b = _Builder(rng)
    for i, r in enumerate(ring):
        b.unit([_p(ring[i - 1])], r)
    out = None
    if difficulty != "easy":
        out = "YFP"
        b.unit([_p(ring[-1])], out)
    return Blueprint("repressilator", b.design("repressilator", ring), (), out, size)


def cascade(rng: random.Random, difficulty: Difficulty, split: Split) -> Blueprint:
    """Input → R1 ⊣ R2 ... ⊣ reporter."""
    size = {"easy": 2, "medium": 3, "hard": 4}[difficulty]
    source = rng.choice(sorted(library.INPUTS))
    chain = draw_repressors(rng, size, split, sensors=False)
    out = _reporter(rng, difficulty)
    b = _Builder(rng)
    b.unit([source], chain[0])
    for upstream, downstream in itertools.pairwise(chain):
        b.unit([_p(upstream)], downstream)
    b.unit([_p(chain[-1])], out)
    return Blueprint("cascade", b.design("cascade", chain), (source,), out, size)


def feed_forward_loop(rng: random.Random, difficulty: Difficulty, split: Split) -> Blueprint:
    """X ⊣ Y, X ⊣ Z, Y ⊣ Z (Z the reporter, or a repressor driving it; hard: fed by W)."""
    count = {"easy": 2, "medium": 3, "hard": 4}[difficulty]
    source = rng.choice(sorted(library.INPUTS))
    names = draw_repressors(rng, count, split, sensors=False)
    out = _reporter(rng, difficulty)
    b = _Builder(rng)
    if difficulty == "hard":
        w, x, y, z = names
        b.unit([source], w)
        b.unit([_p(w)], x)
    else:
        x, y = names[:2]
        z = names[2] if count == 3 else out
        b.unit([source], x)
    b.unit([_p(x)], y)
    b.unit([_p(x), _p(y)], z)
    if z != out:
        b.unit([_p(z)], out)
    design = b.design("feed_forward_loop", names)
    return Blueprint("feed_forward_loop", design, (source,), out, None)


def _gate_units(b: _Builder, gate: str, inputs: tuple[str, str], rs: list[str], out: str) -> int:
    """Cello-style wiring of ``gate`` over two inputs from repressors ``rs``; how many used."""
    a, c = inputs
    if gate == "NOR":
        b.unit([a, c], rs[0])
        b.unit([_p(rs[0])], out)
        return 1
    if gate == "NAND":
        b.unit([a], rs[0])
        b.unit([c], rs[1])
        b.unit([_p(rs[0]), _p(rs[1])], out)
        return 2
    if gate == "OR":
        b.unit([a, c], rs[0])
        b.unit([_p(rs[0])], rs[1])
        b.unit([_p(rs[1])], out)
        return 2
    if gate == "AND":
        b.unit([a], rs[0])
        b.unit([c], rs[1])
        b.unit([_p(rs[0]), _p(rs[1])], rs[2])
        b.unit([_p(rs[2])], out)
        return 3
    if gate == "NIMPLY":
        b.unit([a], rs[0])
        b.unit([_p(rs[0]), c], rs[1])
        b.unit([_p(rs[1])], out)
        return 2
    # XNOR from four NOR stages
    b.unit([a, c], rs[0])
    b.unit([a, _p(rs[0])], rs[1])
    b.unit([c, _p(rs[0])], rs[2])
    b.unit([_p(rs[1]), _p(rs[2])], rs[3])
    b.unit([_p(rs[3])], out)
    return 4


GATE_SIZES = {"NOR": 1, "NAND": 2, "OR": 2, "AND": 3, "NIMPLY": 2, "XNOR": 4}


def logic_gate(rng: random.Random, difficulty: Difficulty, split: Split) -> Blueprint:
    """A two-input gate from repressors (Cello's NOT/NOR wiring)."""
    gate = rng.choice(GATES[difficulty])
    a, c = rng.sample(sorted(library.INPUTS), 2)
    rs = draw_repressors(rng, GATE_SIZES[gate], split, sensors=False)
    out = _reporter(rng, difficulty)
    b = _Builder(rng)
    _gate_units(b, gate, (a, c), rs, out)
    design = b.design(f"{gate.lower()}_gate", rs)
    return Blueprint("logic_gate", design, (a, c), out, None, gate)


def _activated(b: _Builder, name: str, regulations: list[tuple[str, str, int]]) -> Design:
    inductions = tuple(
        Induction(chemical, regulator, sign)
        for chemical, (regulator, sign) in sorted(library.INDUCERS.items())
        if regulator in {r for r, _, _ in regulations}
    )
    return Design(
        name, tuple(b.units), tuple(Regulation(*r) for r in sorted(regulations)), {}, inductions
    )


def activator_feed_forward_loop(rng: random.Random, difficulty: Difficulty) -> Blueprint:
    """AraC (arabinose) → pBAD → Y and AraC → hybrid → reporter, Y → or ⊣ the hybrid."""
    coherent = rng.random() < 0.5
    y, hybrid, sign = ("LuxR", "pBAD_pLux", 1) if coherent else ("TetR", "pBAD_tetO", -1)
    out = _reporter(rng, difficulty)
    b = _Builder(rng)
    b.unit([rng.choice(library.CONSTITUTIVE)], "AraC")
    b.unit(["pBAD"], y)
    b.unit([hybrid], out)
    design = _activated(
        b, "feed_forward_loop", [("AraC", "pBAD", 1), ("AraC", hybrid, 1), (y, hybrid, sign)]
    )
    kind: Literal["coherent", "incoherent"] = "coherent" if coherent else "incoherent"
    return Blueprint("feed_forward_loop", design, ("arabinose",), out, feed_forward=kind)


def activator_and_gate(rng: random.Random, difficulty: Difficulty) -> Blueprint:
    """AraC (arabinose) and LuxR (AHL) both needed on the hybrid pBAD_pLux."""
    out = _reporter(rng, difficulty)
    b = _Builder(rng)
    first, second = rng.sample(library.CONSTITUTIVE, 2)
    b.unit([first], "AraC")
    b.unit([second], "LuxR")
    b.unit(["pBAD_pLux"], out)
    design = _activated(b, "and_gate", [("AraC", "pBAD_pLux", 1), ("LuxR", "pBAD_pLux", 1)])
    return Blueprint("logic_gate", design, ("arabinose", "AHL"), out, gate="AND")


ACTIVATED: dict[CircuitType, Callable[[random.Random, Difficulty], Blueprint]] = {
    "feed_forward_loop": activator_feed_forward_loop,
    "logic_gate": activator_and_gate,
}


GENERATORS: dict[CircuitType, Callable[[random.Random, Difficulty, Split], Blueprint]] = {
    "not_gate": not_gate,
    "toggle_switch": toggle_switch,
    "repressilator": repressilator,
    "cascade": cascade,
    "feed_forward_loop": feed_forward_loop,
    "logic_gate": logic_gate,
}


def draw(
    circuit: CircuitType,
    rng: random.Random,
    difficulty: Difficulty,
    split: Split,
    *,
    activation: bool = False,
) -> Blueprint:
    """A blueprint of ``circuit`` (its activator variant with ``activation``)."""
    if activation:
        return ACTIVATED[circuit](rng, difficulty)
    return GENERATORS[circuit](rng, difficulty, split)
