"""Static measures of an assertion that size the lasso: its bounded temporal span H, its
``$past`` depth D and its number of unbounded operators."""

from __future__ import annotations

from dataclasses import dataclass

from . import ir


@dataclass
class Measure:
    """Span, past depth and unbounded-operator count of one assertion."""

    span: int = 0
    depth: int = 0
    unbounded: int = 0


def expr_depth(e: ir.Expr) -> int:
    """The deepest ``$past`` look-back in ``e``."""
    if isinstance(e, ir.Past):
        return e.n + expr_depth(e.arg)
    if isinstance(e, ir.Const | ir.Sig):
        return 0
    if isinstance(e, ir.Unary | ir.Resize | ir.Extract):
        return expr_depth(e.arg)
    if isinstance(e, ir.DynExtract):
        return max(expr_depth(e.arg), expr_depth(e.index))
    if isinstance(e, ir.Binary):
        return max(expr_depth(e.left), expr_depth(e.right))
    if isinstance(e, ir.Cond):
        return max(expr_depth(e.cond), expr_depth(e.then), expr_depth(e.other))
    return max((expr_depth(p) for p in e.parts), default=0)


def seq_measure(s: ir.Seq, m: Measure) -> int:
    """The longest bounded length of ``s`` (unbounded parts count their minimum)."""
    if isinstance(s, ir.SBool):
        m.depth = max(m.depth, expr_depth(s.expr))
        return 0
    if isinstance(s, ir.SDelay):
        left = 0 if s.lhs is None else seq_measure(s.lhs, m)
        if s.hi is None:
            m.unbounded += 1
        return left + (s.lo if s.hi is None else s.hi) + seq_measure(s.rhs, m)
    if isinstance(s, ir.SRepeat):
        inner = seq_measure(s.seq, m) + 1
        if s.hi is None:
            m.unbounded += 1
        return inner * max(1, s.lo if s.hi is None else s.hi)
    if isinstance(s, ir.SBin):
        return max(seq_measure(s.left, m), seq_measure(s.right, m))
    return seq_measure(s.seq, m)


def prop_measure(p: ir.Prop, m: Measure) -> int:
    """The bounded temporal span of ``p``."""
    if isinstance(p, ir.PConst):
        return 0
    if isinstance(p, ir.PSeq):
        return seq_measure(p.seq, m)
    if isinstance(p, ir.PNot):
        return prop_measure(p.prop, m)
    if isinstance(p, ir.PBin | ir.PUntil):
        if isinstance(p, ir.PUntil):
            m.unbounded += 1
        return max(prop_measure(p.left, m), prop_measure(p.right, m))
    if isinstance(p, ir.PImpl):
        return seq_measure(p.seq, m) + (0 if p.overlapped else 1) + prop_measure(p.prop, m)
    if isinstance(p, ir.PIf):
        m.depth = max(m.depth, expr_depth(p.cond))
        other = 0 if p.other is None else prop_measure(p.other, m)
        return max(prop_measure(p.then, m), other)
    if isinstance(p, ir.PNext):
        return p.n + prop_measure(p.prop, m)
    if p.hi is None:
        m.unbounded += 1
    return (p.lo if p.hi is None else p.hi) + prop_measure(p.prop, m)


def measure(a: ir.AssertionIR) -> Measure:
    """Measure one assertion."""
    m = Measure()
    m.span = prop_measure(a.prop, m)
    return m
