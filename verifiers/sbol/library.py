"""The parts library, in the style of Cello's (Nielsen et al., Science 2016) user constraint file.

Names, roles and the repressor ↔ promoter pairs follow Cello's E. coli library (TetR-family
repressors PhlF, SrpR, BM3R1, HlyIIR, BetI, AmtR, AmeR, QacR, IcaRA, LitR, PsrA, LmrA, each with
its cognate promoter; input sensors pTac, pTet and pBAD; iGEM RBSs and Cello's terminators), plus
the classic LacI, TetR and lambda cI of the first toggle switch and repressilator. Sequences are
**placeholders**: deterministic IUPAC DNA derived from each name, of a typical length for the
role (Cello's own sequences come in a data file without a licence we can ship). No check
compares sequences, only their alphabet.

A held-out set of repressors (``HELD_OUT``) never appears in in-distribution tasks; the
out-of-distribution split uses at least one of them, as Cello-OOD does.

Beyond repressors: the activators AraC (pBAD, with arabinose) and LuxR (pLux, with AHL), hybrid
promoters regulated by two proteins (``HYBRIDS``), and the inducers that switch regulators
(``INDUCERS``). The library is a reference, not a whitelist: a design may use any parts, and
``canonical`` recognises the library's parts under the names other sources give them (iGEM's
``BBa_`` ids, a CDS named by its protein, other capitalisation), so that what the library knows
about a part (its role, what it regulates) is checked whatever the part is called.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Literal

Role = Literal["promoter", "RBS", "CDS", "terminator"]
ROLES: tuple[Role, ...] = ("promoter", "RBS", "CDS", "terminator")


@dataclass(frozen=True)
class Part:
    """One DNA part: its name (the SBOL display id), role, sequence and what it does."""

    name: str
    role: Role
    sequence: str
    note: str


@dataclass(frozen=True)
class Repressor:
    """A transcription factor (CDS name) and the promoter it represses."""

    name: str
    promoter: str
    held_out: bool = False
    sensor: bool = False  # also the host's sensor for an input promoter: not a gate repressor


CELLO_REPRESSORS: tuple[Repressor, ...] = (
    Repressor("PhlF", "pPhlF"),
    Repressor("SrpR", "pSrpR"),
    Repressor("BM3R1", "pBM3R1"),
    Repressor("HlyIIR", "pHlyIIR", held_out=True),
    Repressor("BetI", "pBetI"),
    Repressor("AmtR", "pAmtR", held_out=True),
    Repressor("AmeR", "pAmeR"),
    Repressor("QacR", "pQacR"),
    Repressor("IcaRA", "pIcaRA"),
    Repressor("LitR", "pLitR", held_out=True),
    Repressor("PsrA", "pPsrA", held_out=True),
    Repressor("LmrA", "pLmrA"),
)
CLASSIC_REPRESSORS: tuple[Repressor, ...] = (
    Repressor("LacI", "pTac", sensor=True),
    Repressor("TetR", "pTet", sensor=True),
    Repressor("cI", "pR"),
)
REPRESSORS: dict[str, Repressor] = {r.name: r for r in (*CELLO_REPRESSORS, *CLASSIC_REPRESSORS)}
HELD_OUT: frozenset[str] = frozenset(r.name for r in REPRESSORS.values() if r.held_out)

ACTIVATORS: dict[str, str] = {"AraC": "pBAD", "LuxR": "pLux"}
"""Activator CDS -> the promoter it activates (when its inducer is bound)."""

HYBRIDS: dict[str, tuple[tuple[str, int], ...]] = {
    "pBAD_tetO": (("AraC", 1), ("TetR", -1)),
    "pLux_lacO": (("LuxR", 1), ("LacI", -1)),
    "pBAD_pLux": (("AraC", 1), ("LuxR", 1)),
}
"""Hybrid promoters: each regulator with its sign (+1 activates, -1 represses). A promoter is on
when none of its repressors acts and every one of its activators does (its operators are all
bound): ``pBAD_tetO`` is AraC AND NOT TetR, ``pBAD_pLux`` AraC AND LuxR."""

INDUCERS: dict[str, tuple[str, int]] = {
    "IPTG": ("LacI", -1),
    "aTc": ("TetR", -1),
    "arabinose": ("AraC", 1),
    "AHL": ("LuxR", 1),
}
"""Small molecules and the regulator they switch: -1 releases a repressor (IPTG unbinds LacI),
+1 is what an activator needs to act (AraC with arabinose)."""

INPUTS: dict[str, str] = {
    "pTac": "IPTG (LacI sensor in the host)",
    "pTet": "aTc (TetR sensor in the host)",
    "pBAD": "arabinose (AraC sensor in the host)",
}
"""Cello's input promoters: their activity is the input signal."""

CONSTITUTIVE = ("J23100", "J23101", "J23106")
RBSS = ("B0030", "B0032", "B0034", "B0064")
TERMINATORS = ("B0015", "L3S2P21", "L3S3P21", "ECK120033737", "ECK120029600")
REPORTERS = ("YFP", "RFP", "GFP")

_LENGTHS: dict[Role, int] = {"promoter": 40, "RBS": 14, "CDS": 60, "terminator": 40}


def _placeholder(name: str, role: Role) -> str:
    """A deterministic stand-in sequence (a CDS starts with ATG and ends with a stop codon)."""
    digest = hashlib.sha256(f"sbol-library/{name}".encode()).digest()
    while len(digest) < _LENGTHS[role]:
        digest += hashlib.sha256(digest).digest()
    body = "".join("acgt"[b % 4] for b in digest[: _LENGTHS[role]])
    return f"atg{body[3:-3]}taa" if role == "CDS" else body


def _part(name: str, role: Role, note: str) -> Part:
    return Part(name, role, _placeholder(name, role), note)


@cache
def parts() -> dict[str, Part]:
    """Every part of the library, by name."""
    found: list[Part] = [_part(p, "promoter", f"input: {what}") for p, what in INPUTS.items()]
    found += [_part(p, "promoter", "constitutive") for p in CONSTITUTIVE]
    for repressor in REPRESSORS.values():
        if repressor.promoter not in INPUTS:
            found.append(_part(repressor.promoter, "promoter", f"repressed by {repressor.name}"))
        note = f"repressor of {repressor.promoter}"
        found.append(
            _part(repressor.name, "CDS", note + (" (held out)" if repressor.held_out else ""))
        )
    for activator, promoter in ACTIVATORS.items():
        if promoter not in INPUTS:
            found.append(_part(promoter, "promoter", f"activated by {activator}"))
        found.append(_part(activator, "CDS", f"activator of {promoter}"))
    for promoter, acting in HYBRIDS.items():
        what = " and ".join(f"{'activated' if s > 0 else 'repressed'} by {n}" for n, s in acting)
        found.append(_part(promoter, "promoter", f"hybrid: {what}"))
    found += [_part(r, "CDS", "reporter") for r in REPORTERS]
    found += [_part(r, "RBS", "ribosome binding site") for r in RBSS]
    found += [_part(t, "terminator", "terminator") for t in TERMINATORS]
    return {part.name: part for part in found}


def regulation(regulator: str) -> dict[str, int]:
    """What the library's ``regulator`` regulates: promoter -> sign (empty when unknown)."""
    found: dict[str, int] = {}
    if regulator in REPRESSORS:
        found[REPRESSORS[regulator].promoter] = -1
    if regulator in ACTIVATORS:
        found[ACTIVATORS[regulator]] = 1
    for promoter, acting in HYBRIDS.items():
        for name, sign in acting:
            if name == regulator:
                found[promoter] = sign
    return found


def regulators_of(promoter: str) -> dict[str, int]:
    """The library's regulators of ``promoter``: regulator -> sign (empty when unknown)."""
    return {
        name: signs[promoter]
        for name in (*REPRESSORS, *ACTIVATORS)
        if promoter in (signs := regulation(name))
    }


IGEM: dict[str, str] = {
    "BBa_R0040": "pTet",
    "BBa_R0051": "pR",
    "BBa_R0062": "pLux",
    "BBa_R0080": "pBAD",
    "BBa_I0500": "pBAD",
    "BBa_R0011": "pTac",  # the LacI-repressed pLlacO-1 stands in for the host's IPTG input
    "BBa_C0012": "LacI",
    "BBa_C0040": "TetR",
    "BBa_C0051": "cI",
    "BBa_C0062": "LuxR",
    "BBa_C0080": "AraC",
    "BBa_E0040": "GFP",
    "BBa_E0030": "YFP",
    "BBa_E1010": "RFP",
}
"""iGEM Registry ids of the library's parts (others, such as ``BBa_B0034``, are the library
name with the ``BBa_`` prefix)."""

SYNONYMS: dict[str, str] = {
    "l_arabinose": "arabinose",
    "ara": "arabinose",
    "anhydrotetracycline": "aTc",
    "3oc6hsl": "AHL",
    "oc6hsl": "AHL",
    "3oc6_hsl": "AHL",
    "3_oxo_c6_hsl": "AHL",
    "lambda_ci": "cI",
    "ptrc": "pTac",
}
"""Other names sources give the library's parts and inducers (case-folded, with ``-``, ``.``
and spaces read as ``_``)."""

_SUFFIX = re.compile(r"_?(cds|gene|protein|prot|promoter|prom|part|rbs|terminator|term)$")


@cache
def _known() -> dict[str, str]:
    """Case-folded name -> library name, for every part, inducer and synonym."""
    found = {name.casefold(): name for name in (*parts(), *INDUCERS)}
    found.update({igem.casefold(): name for igem, name in IGEM.items()})
    found.update(SYNONYMS)
    return found


def canonical(names: Iterable[str]) -> str | None:
    """The library name the first of ``names`` recognisable as a library part or inducer has
    (an exact, case-folded, ``BBa_``-stripped or suffix-stripped match), else None."""
    known = _known()
    for name in names:
        folded = re.sub(r"[-. ]", "_", name.casefold())
        for candidate in (folded, folded.removeprefix("bba_"), _SUFFIX.sub("", folded)):
            if candidate in known:
                return known[candidate]
    return None


def allowed_parts(held_out: bool) -> list[str]:
    """Part names a task may use: everything, or everything but the held-out repressors and
    their promoters (in-distribution tasks never see them)."""
    excluded = set() if held_out else {n for r in HELD_OUT for n in (r, REPRESSORS[r].promoter)}
    return [name for name in parts() if name not in excluded]
