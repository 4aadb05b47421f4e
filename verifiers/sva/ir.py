"""The checker's intermediate representation: plain frozen dataclasses (hashable, so a whole
assertion can key the result cache) for bit-vector expressions, sequences and properties."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# ---------------------------------------------------------------------------------------------
# Expressions: every node carries its width and signedness as slang resolved them.


@dataclass(frozen=True)
class Const:
    """A constant (already masked to ``width`` bits, unknown bits read as 0)."""

    value: int
    width: int
    signed: bool = False


@dataclass(frozen=True)
class Sig:
    """A free signal of the trace."""

    name: str
    width: int
    signed: bool = False


@dataclass(frozen=True)
class Unary:
    """``op`` is one of: neg, not (bitwise), red_and, red_or, red_xor, red_nand, red_nor,
    red_xnor, lnot, popcount."""

    op: str
    arg: Expr
    width: int
    signed: bool = False


@dataclass(frozen=True)
class Binary:
    """Arithmetic, bitwise, comparison, logical and shift operators (slang's operand widths)."""

    op: str
    left: Expr
    right: Expr
    width: int
    signed: bool = False


@dataclass(frozen=True)
class Cond:
    """``c ? a : b`` (2-state, so no X-merging)."""

    cond: Expr
    then: Expr
    other: Expr
    width: int
    signed: bool = False


@dataclass(frozen=True)
class Concat:
    """``{parts}`` with the first part in the most significant bits."""

    parts: tuple[Expr, ...]
    width: int
    signed: bool = False


@dataclass(frozen=True)
class Extract:
    """Bits ``[lsb + width - 1 : lsb]`` of ``arg`` (lsb may lie outside: those bits read 0)."""

    arg: Expr
    lsb: int
    width: int
    signed: bool = False


@dataclass(frozen=True)
class DynExtract:
    """``width`` bits of ``arg`` starting at bit ``offset + index * scale`` (index dynamic)."""

    arg: Expr
    index: Expr
    offset: int
    scale: int
    width: int
    signed: bool = False


@dataclass(frozen=True)
class Resize:
    """Width conversion: truncate, or extend (sign-extend when both sides are signed)."""

    arg: Expr
    width: int
    signed: bool = False


@dataclass(frozen=True)
class Past:
    """``$past(arg, n)``: ``arg`` evaluated ``n`` cycles earlier (signals read 0 before 0)."""

    arg: Expr
    n: int
    width: int
    signed: bool = False


Expr = Const | Sig | Unary | Binary | Cond | Concat | Extract | DynExtract | Resize | Past

# ---------------------------------------------------------------------------------------------
# Sequences.


@dataclass(frozen=True)
class SBool:
    """A Boolean expression: matches the single cycle where it is true."""

    expr: Expr


@dataclass(frozen=True)
class SDelay:
    """``lhs ##[lo:hi] rhs`` (``lhs`` None: a leading delay; ``hi`` None: ``$``)."""

    lhs: Seq | None
    lo: int
    hi: int | None
    rhs: Seq


@dataclass(frozen=True)
class SRepeat:
    """Consecutive repetition ``seq[*lo:hi]`` (``hi`` None: ``$``). Goto and non-consecutive
    repetition are lowered to this by the front end."""

    seq: Seq
    lo: int
    hi: int | None


@dataclass(frozen=True)
class SBin:
    """``or``, ``and`` or ``intersect`` of two sequences (throughout/within are lowered)."""

    op: Literal["or", "and", "intersect"]
    left: Seq
    right: Seq


@dataclass(frozen=True)
class SFirst:
    """``first_match(seq)``."""

    seq: Seq


Seq = SBool | SDelay | SRepeat | SBin | SFirst

# ---------------------------------------------------------------------------------------------
# Properties.

Strength = Literal["strong", "weak", "unmarked"]


@dataclass(frozen=True)
class PSeq:
    """A sequence used as a property."""

    seq: Seq
    strength: Strength


@dataclass(frozen=True)
class PNot:
    """``not p``."""

    prop: Prop


@dataclass(frozen=True)
class PBin:
    """``and``, ``or``, ``implies``, ``iff`` of two properties."""

    op: Literal["and", "or", "implies", "iff"]
    left: Prop
    right: Prop


@dataclass(frozen=True)
class PImpl:
    """``seq |-> prop`` (overlapped) / ``seq |=> prop``; ``follows``: ``#-#`` / ``#=#``."""

    seq: Seq
    prop: Prop
    overlapped: bool
    follows: bool = False


@dataclass(frozen=True)
class PIf:
    """``if (cond) then [else other]`` (``other`` None: vacuously true)."""

    cond: Expr
    then: Prop
    other: Prop | None


@dataclass(frozen=True)
class PNext:
    """``nexttime[n] p`` / ``s_nexttime[n] p`` (identical on infinite traces)."""

    prop: Prop
    n: int


@dataclass(frozen=True)
class PAlways:
    """``always [lo:hi] p`` (hi None: unbounded) and the ``s_always`` forms."""

    prop: Prop
    lo: int
    hi: int | None


@dataclass(frozen=True)
class PEventually:
    """``s_eventually [lo:hi] p`` / ``eventually [lo:hi] p`` (hi None: unbounded, strong)."""

    prop: Prop
    lo: int
    hi: int | None


@dataclass(frozen=True)
class PUntil:
    """``p until q`` family: ``strong`` requires q to occur, ``inclusive`` (``_with``) needs p
    also where q occurs."""

    left: Prop
    right: Prop
    strong: bool
    inclusive: bool


@dataclass(frozen=True)
class PConst:
    """A constant property (used for tautology checks)."""

    value: bool


Prop = PSeq | PNot | PBin | PImpl | PIf | PNext | PAlways | PEventually | PUntil | PConst


@dataclass(frozen=True)
class AssertionIR:
    """One concurrent assertion: its property, its ``disable iff`` condition and clock."""

    prop: Prop
    disable: Expr | None
    clock: str
