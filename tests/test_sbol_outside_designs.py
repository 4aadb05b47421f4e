"""Designs written outside this project's style reach level 5, and their broken twins fail at the
level that names the fault.

The programs here are written as other pySBOL3 users write them, not as the generator renders
its answers: SynBioHub-style namespaces, iGEM ``BBa_`` ids or lower-case gene names for the CDSs
with the protein named apart, inducers as small molecules, activators and hybrid promoters, a NOR
gate whose repressor is expressed from two units, and both classes of feed-forward loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

pytest.importorskip("sbol3", reason="the sbol extra is not installed")

from verifiers.sbol import VERIFIER

ROLES = {
    "P": "sbol3.SO_PROMOTER",
    "R": "sbol3.SO_RBS",
    "C": "sbol3.SO_CDS",
    "T": "sbol3.SO_TERMINATOR",
}


@dataclass
class Outside:
    """A circuit as an outside author writes it: parts by display id and role letter, units,
    what each CDS makes, regulations and inductions by interaction kind."""

    namespace: str
    parts: dict[str, str]
    units: dict[str, list[str]]
    makes: dict[str, str]
    regulates: list[tuple[str, str, str]] = field(default_factory=list)  # protein, promoter
    induces: list[tuple[str, str, str]] = field(default_factory=list)  # chemical, protein

    def program(self) -> str:
        lines = [
            "import sbol3",
            f"sbol3.set_namespace({self.namespace!r})",
            "doc = sbol3.Document()",
            "parts = {}",
            "for pid, role in [",
        ]
        lines += [f"    ({pid!r}, {ROLES[r]})," for pid, r in self.parts.items()]
        lines += [
            "]:",
            "    parts[pid] = sbol3.Component(pid, sbol3.SBO_DNA, roles=[role])",
            "    doc.add(parts[pid])",
            "for tu_id, members in [",
        ]
        lines += [f"    ({tu!r}, {members!r})," for tu, members in self.units.items()]
        lines += [
            "]:",
            "    tu = sbol3.Component(tu_id, sbol3.SBO_DNA, roles=[sbol3.SO_ENGINEERED_REGION])",
            "    subs = [sbol3.SubComponent(parts[m]) for m in members]",
            "    tu.features = subs",
            "    for a, b in zip(subs, subs[1:]):",
            "        tu.constraints.append(sbol3.Constraint(sbol3.SBOL_PRECEDES, a, b))",
            "    doc.add(tu)",
            "design = sbol3.Component('design', sbol3.SBO_FUNCTIONAL_ENTITY)",
            "doc.add(design)",
            "molecules, subs = {}, {}",
            "def use(c):",
            "    if c.identity not in subs:",
            "        subs[c.identity] = sbol3.SubComponent(c)",
            "        design.features.append(subs[c.identity])",
            "    return subs[c.identity]",
            "def molecule(mid, kind):",
            "    if mid not in molecules:",
            "        molecules[mid] = sbol3.Component(mid, kind)",
            "        doc.add(molecules[mid])",
            "    return molecules[mid]",
            "def act(kind, roles):",
            "    design.interactions.append(sbol3.Interaction([kind], participations=["
            "sbol3.Participation([r], use(c)) for r, c in roles]))",
            "for cds, protein in [",
        ]
        lines += [f"    ({cds!r}, {protein!r})," for cds, protein in self.makes.items()]
        lines += [
            "]:",
            "    act(sbol3.SBO_GENETIC_PRODUCTION, [(sbol3.SBO_TEMPLATE, parts[cds]), "
            "(sbol3.SBO_PRODUCT, molecule(protein, sbol3.SBO_PROTEIN))])",
        ]
        kinds = {
            "inhibition": "sbol3.SBO_INHIBITION, sbol3.SBO_INHIBITOR, sbol3.SBO_INHIBITED",
            "stimulation": "sbol3.SBO_STIMULATION, sbol3.SBO_STIMULATOR, sbol3.SBO_STIMULATED",
        }
        for protein, promoter, kind in self.regulates:
            k, a, b = kinds[kind].split(", ")
            protein_of = f"molecule({protein!r}, sbol3.SBO_PROTEIN)"
            lines.append(f"act({k}, [({a}, {protein_of}), ({b}, parts[{promoter!r}])])")
        for chemical, protein, kind in self.induces:
            k, a, b = kinds[kind].split(", ")
            lines.append(
                f"act({k}, [({a}, molecule({chemical!r}, sbol3.SBO_SIMPLE_CHEMICAL)), "
                f"({b}, molecule({protein!r}, sbol3.SBO_PROTEIN))])"
            )
        return "\n".join(lines) + "\n"


def score(circuit: Outside, reference: dict[str, Any]) -> Any:
    return VERIFIER(f"```python\n{circuit.program()}```", reference)


PARTS_COMMON = {"B0034": "R", "B0015": "T"}

# A NOT gate in lower-case gene style: CDS lacI_cds makes protein LacI; IPTG releases LacI.
NOT_GATE = Outside(
    "https://synbiohub.org/user/someone/not_gate/",
    {"J23100": "P", "pLac": "P", **PARTS_COMMON, "lacI_cds": "C", "gfp_cds": "C"},
    {
        "tu_laci": ["J23100", "B0034", "lacI_cds", "B0015"],
        "tu_gfp": ["pLac", "B0034", "gfp_cds", "B0015"],
    },
    {"lacI_cds": "LacI", "gfp_cds": "GFP"},
    [("LacI", "pLac", "inhibition")],
    [("IPTG", "LacI", "inhibition")],
)
NOT_SPEC = {
    "circuit": "not_gate",
    "check": "function",
    "parts": ["J23100"],
    "inputs": ["IPTG"],
    "output": "GFP",
    "truth_table": [0, 1],
}

# The toggle switch in iGEM ids on the iGEM namespace: BBa_C0012 (LacI) ⊣ BBa_R0040 (pTet)...
TOGGLE = Outside(
    "https://synbiohub.org/public/igem/",
    {
        "BBa_R0011": "P",
        "BBa_R0040": "P",
        "BBa_B0034": "R",
        "BBa_B0015": "T",
        "BBa_C0012": "C",
        "BBa_C0040": "C",
    },
    {
        "tu1": ["BBa_R0011", "BBa_B0034", "BBa_C0040", "BBa_B0015"],
        "tu2": ["BBa_R0040", "BBa_B0034", "BBa_C0012", "BBa_B0015"],
    },
    {"BBa_C0012": "BBa_C0012_protein", "BBa_C0040": "BBa_C0040_protein"},
    [
        ("BBa_C0012_protein", "BBa_R0011", "inhibition"),
        ("BBa_C0040_protein", "BBa_R0040", "inhibition"),
    ],
)
TOGGLE_SPEC = {
    "circuit": "toggle_switch",
    "check": "function",
    "parts": ["pTet"],
    "repressors": ["LacI", "TetR"],
}

# NOR gate: SrpR expressed from two units, one per input promoter (Cello's other layout).
NOR_TWO_UNITS = Outside(
    "https://example.com/nor/",
    {"pTac": "P", "pTet": "P", "pSrpR": "P", **PARTS_COMMON, "SrpR": "C", "YFP": "C"},
    {
        "tu_a": ["pTac", "B0034", "SrpR", "B0015"],
        "tu_b": ["pTet", "B0034", "SrpR", "B0015"],
        "tu_out": ["pSrpR", "B0034", "YFP", "B0015"],
    },
    {"SrpR": "SrpR_protein", "YFP": "YFP_protein"},
    [("SrpR_protein", "pSrpR", "inhibition")],
)
NOR_SPEC = {
    "circuit": "logic_gate",
    "check": "function",
    "parts": ["pTac"],
    "inputs": ["pTac", "pTet"],
    "output": "YFP",
    "truth_table": [1, 0, 0, 0],
    "repressors": ["SrpR", "PhlF"],
}

# Incoherent type-1 feed-forward loop: AraC (with arabinose) activates pBAD (→ TetR) and the
# hybrid pBAD_tetO (→ GFP), which TetR represses: a pulse of GFP.
I1_FFL = Outside(
    "https://example.com/i1ffl/",
    {
        "J23100": "P",
        "pBAD": "P",
        "pBAD_tetO": "P",
        **PARTS_COMMON,
        "araC": "C",
        "tetR": "C",
        "gfp": "C",
    },
    {
        "tu_arac": ["J23100", "B0034", "araC", "B0015"],
        "tu_tetr": ["pBAD", "B0034", "tetR", "B0015"],
        "tu_gfp": ["pBAD_tetO", "B0034", "gfp", "B0015"],
    },
    {"araC": "AraC", "tetR": "TetR", "gfp": "GFP"},
    [
        ("AraC", "pBAD", "stimulation"),
        ("AraC", "pBAD_tetO", "stimulation"),
        ("TetR", "pBAD_tetO", "inhibition"),
    ],
    [("L_arabinose", "AraC", "stimulation")],
)
FFL_SPEC = {
    "circuit": "feed_forward_loop",
    "check": "function",
    "parts": ["pBAD"],
    "inputs": ["arabinose"],
    "output": "GFP",
    "activation": True,
    "feed_forward": "incoherent",
}

# Coherent type-1: AraC activates pBAD (→ LuxR) and pBAD_pLux (→ GFP), which LuxR also activates.
C1_FFL = Outside(
    "https://example.com/c1ffl/",
    {
        "J23100": "P",
        "pBAD": "P",
        "pBAD_pLux": "P",
        **PARTS_COMMON,
        "araC": "C",
        "luxR": "C",
        "gfp": "C",
    },
    {
        "tu_arac": ["J23100", "B0034", "araC", "B0015"],
        "tu_luxr": ["pBAD", "B0034", "luxR", "B0015"],
        "tu_gfp": ["pBAD_pLux", "B0034", "gfp", "B0015"],
    },
    {"araC": "AraC", "luxR": "LuxR", "gfp": "GFP"},
    [
        ("AraC", "pBAD", "stimulation"),
        ("AraC", "pBAD_pLux", "stimulation"),
        ("LuxR", "pBAD_pLux", "stimulation"),
    ],
    [("arabinose", "AraC", "stimulation")],
)

# An AND gate of two activators on a hybrid promoter, their inducers as the inputs.
AND_GATE = Outside(
    "https://example.com/and/",
    {
        "J23100": "P",
        "J23106": "P",
        "pBAD_pLux": "P",
        **PARTS_COMMON,
        "araC": "C",
        "luxR": "C",
        "rfp": "C",
    },
    {
        "tu_arac": ["J23100", "B0034", "araC", "B0015"],
        "tu_luxr": ["J23106", "B0034", "luxR", "B0015"],
        "tu_rfp": ["pBAD_pLux", "B0034", "rfp", "B0015"],
    },
    {"araC": "AraC", "luxR": "LuxR", "rfp": "RFP"},
    [("AraC", "pBAD_pLux", "stimulation"), ("LuxR", "pBAD_pLux", "stimulation")],
    [("arabinose", "AraC", "stimulation"), ("OC6HSL", "LuxR", "stimulation")],
)
AND_SPEC = {
    "circuit": "logic_gate",
    "check": "function",
    "parts": ["pBAD"],
    "inputs": ["arabinose", "AHL"],
    "output": "RFP",
    "truth_table": [0, 0, 0, 1],
    "activation": True,
}

CASES = {
    "not_gate": (NOT_GATE, NOT_SPEC),
    "toggle_igem": (TOGGLE, TOGGLE_SPEC),
    "nor_two_units": (NOR_TWO_UNITS, NOR_SPEC),
    "incoherent_ffl": (I1_FFL, FFL_SPEC),
    "coherent_ffl": (C1_FFL, {**FFL_SPEC, "feed_forward": "coherent"}),
    "and_gate": (AND_GATE, AND_SPEC),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_outside_design_reaches_level_5(name: str) -> None:
    circuit, spec = CASES[name]
    result = score(circuit, spec)
    assert (result.status, result.reward) == ("ok", 1.0), result.detail


def _with(circuit: Outside, **changes: Any) -> Outside:
    return Outside(**{**circuit.__dict__, **changes})


TWINS: dict[str, tuple[Outside, dict[str, Any], int, str]] = {
    # L3: a library part under its iGEM id given another role.
    "igem_id_wrong_role": (
        _with(TOGGLE, parts={**TOGGLE.parts, "BBa_R0040": "T"}),
        TOGGLE_SPEC,
        3,
        "BBa_R0040",
    ),
    # L4: a known repressor stated as binding a known promoter it does not bind.
    "lacI_on_pTet": (
        _with(
            NOT_GATE,
            parts={**NOT_GATE.parts, "pLac": "P", "pTet": "P"},
            units={**NOT_GATE.units, "tu_gfp": ["pTet", "B0034", "gfp_cds", "B0015"]},
            regulates=[("LacI", "pTet", "inhibition")],
        ),
        NOT_SPEC,
        4,
        "LacI does not bind 'pTet'",
    ),
    # L4: the inducer acting on a protein nothing makes.
    "inducer_on_orphan": (
        _with(NOT_GATE, induces=[("IPTG", "TetR", "inhibition")]),
        NOT_SPEC,
        4,
        "no CDS in the circuit produces it",
    ),
    # L4: an inducer stated the wrong way round (IPTG does not activate LacI).
    "iptg_stimulates": (
        _with(NOT_GATE, induces=[("IPTG", "LacI", "stimulation")]),
        NOT_SPEC,
        4,
        "IPTG does not act so on LacI",
    ),
    # L5: the NOR gate's second unit drives the reporter's repressor from the wrong input: OR-less.
    "nor_one_input": (
        _with(
            NOR_TWO_UNITS, units={**NOR_TWO_UNITS.units, "tu_b": ["pTac", "B0034", "SrpR", "B0015"]}
        ),
        NOR_SPEC,
        5,
        "L5 function failed",
    ),
    # L5: a coherent loop where the task asks for an incoherent one.
    "ffl_wrong_class": (C1_FFL, FFL_SPEC, 5, "not incoherent"),
    # L5: a repressor made an 'activator' by saying so.
    "tetR_stimulates": (
        _with(
            I1_FFL,
            regulates=[
                ("AraC", "pBAD", "stimulation"),
                ("AraC", "pBAD_tetO", "stimulation"),
                ("TetR", "pBAD_tetO", "stimulation"),
            ],
        ),
        {**FFL_SPEC, "feed_forward": "coherent"},
        5,
        "TetR represses pBAD_tetO in the library",
    ),
    # L5: activation in a task built from repressors.
    "activation_not_admitted": (
        I1_FFL,
        {**FFL_SPEC, "activation": False},
        5,
        "must be an inhibition",
    ),
    # L5: the AND gate with one activator's site missing from the promoter: output follows AraC.
    "and_gate_one_activator": (
        _with(AND_GATE, regulates=[("AraC", "pBAD_pLux", "stimulation")]),
        AND_SPEC,
        5,
        "truth table",
    ),
}


@pytest.mark.parametrize("name", sorted(TWINS))
def test_a_broken_twin_fails_at_the_level_naming_its_fault(name: str) -> None:
    circuit, spec, level, message = TWINS[name]
    result = score(circuit, spec)
    assert result.status == "ok"
    assert result.metrics["levels_passed"] == level - 1, result.detail
    assert message in result.detail, result.detail
