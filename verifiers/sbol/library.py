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
"""

from __future__ import annotations

import hashlib
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
    found += [_part(r, "CDS", "reporter") for r in REPORTERS]
    found += [_part(r, "RBS", "ribosome binding site") for r in RBSS]
    found += [_part(t, "terminator", "terminator") for t in TERMINATORS]
    return {part.name: part for part in found}


def cognate(repressor: str) -> str | None:
    """The promoter ``repressor`` represses (None for a CDS that regulates nothing)."""
    found = REPRESSORS.get(repressor)
    return found.promoter if found else None


def repressor_of(promoter: str) -> str | None:
    """The repressor of ``promoter`` (None for inputs' AraC, constitutive promoters)."""
    return next((r.name for r in REPRESSORS.values() if r.promoter == promoter), None)


def allowed_parts(held_out: bool) -> list[str]:
    """Part names a task may use: everything, or everything but the held-out repressors and
    their promoters (in-distribution tasks never see them)."""
    excluded = set() if held_out else {n for r in HELD_OUT for n in (r, REPRESSORS[r].promoter)}
    return [name for name in parts() if name not in excluded]
