"""Static measures of an assertion that size the lasso and bound what a check can claim: its
bounded temporal span H, its ``$past`` depth D and its number of unbounded operators.

The depth is read from *every* expression of the assertion, wherever it sits (a sequence's
Booleans, an ``if`` condition, the ``disable iff`` condition, a ``$past`` inside a ``$past``),
by one walk over the IR's dataclass fields, so a node kind added later is seen too; the span
follows the temporal operators, each of which says how far it reaches."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields, is_dataclass

from . import ir


@dataclass(frozen=True)
class Measure:
    """Span, past depth and unbounded-operator count of one assertion (or of several: the
    largest span and depth, the unbounded operators of all)."""

    span: int = 0
    depth: int = 0
    unbounded: int = 0


def children(node: object) -> Iterator[object]:
    """The IR nodes directly under ``node`` (its dataclass fields, tuples flattened)."""
    if not is_dataclass(node):
        return
    for f in fields(node):
        value = getattr(node, f.name)
        for item in value if isinstance(value, tuple) else (value,):
            if is_dataclass(item):
                yield item


def depth(node: object) -> int:
    """The deepest ``$past`` look-back anywhere under ``node`` (nested ones add up)."""
    own = node.n if isinstance(node, ir.Past) else 0
    return own + max((depth(c) for c in children(node)), default=0)


def unbounded(node: object) -> int:
    """How many operators under ``node`` range without an upper bound (``##[m:$]``,
    ``[*m:$]``, unbounded ``always``/``eventually``, the ``until`` family)."""
    own = isinstance(node, ir.PUntil) or (
        isinstance(node, ir.SDelay | ir.SRepeat | ir.PAlways | ir.PEventually) and node.hi is None
    )
    return int(own) + sum(unbounded(c) for c in children(node))


def seq_span(s: ir.Seq) -> int:
    """The most cycles after its start at which a match of ``s`` can end, an unbounded part
    counted at its minimum."""
    if isinstance(s, ir.SBool):
        return 0
    if isinstance(s, ir.SDelay):
        left = 0 if s.lhs is None else seq_span(s.lhs)
        return left + (s.lo if s.hi is None else s.hi) + seq_span(s.rhs)
    if isinstance(s, ir.SRepeat):
        return (seq_span(s.seq) + 1) * max(1, s.lo if s.hi is None else s.hi)
    if isinstance(s, ir.SBin):
        return max(seq_span(s.left), seq_span(s.right))
    return seq_span(s.seq)


def prop_span(p: ir.Prop) -> int:
    """The bounded temporal span of ``p``: how many cycles after its start an attempt may
    still read (an unbounded operator counted at its minimum)."""
    if isinstance(p, ir.PConst):
        return 0
    if isinstance(p, ir.PSeq):
        return seq_span(p.seq)
    if isinstance(p, ir.PNot):
        return prop_span(p.prop)
    if isinstance(p, ir.PBin | ir.PUntil):
        return max(prop_span(p.left), prop_span(p.right))
    if isinstance(p, ir.PImpl):
        return seq_span(p.seq) + (0 if p.overlapped else 1) + prop_span(p.prop)
    if isinstance(p, ir.PIf):
        return max(prop_span(p.then), 0 if p.other is None else prop_span(p.other))
    if isinstance(p, ir.PNext):
        return p.n + prop_span(p.prop)
    return (p.lo if p.hi is None else p.hi) + prop_span(p.prop)


def measure(*asserts: ir.AssertionIR) -> Measure:
    """Measure assertions together: the span and depth of the widest, every unbounded
    operator (the ``disable iff`` condition included, as every other expression)."""
    return Measure(
        span=max((prop_span(a.prop) for a in asserts), default=0),
        depth=max((depth(a) for a in asserts), default=0),
        unbounded=sum(unbounded(a) for a in asserts),
    )
