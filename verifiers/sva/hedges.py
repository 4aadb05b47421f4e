"""Several answers at once: an answer that joins guesses with ``and`` implies the reference as
soon as one guess does (and one joined with ``or`` is implied by it as soon as one guess is
right), so it would earn the one-way credit without committing to an answer. Here an answer's
*parts* are the operands of its conjunctions (for a stronger answer) or disjunctions (for a
weaker one), and ``drops`` gives the answer with one part removed: each drop is a claim the
answer makes on its own terms (a stronger answer implies each of its conjunction drops, a
weaker one is implied by each of its disjunction drops), so if a drop still stands in the same
relation to the reference, the removed part was surplus guessing.

What counts as a conjunction: property ``and``; ``not`` over ``or``/``implies``/``not`` (De
Morgan); a consequent's conjunction (``a |-> (p and q)`` is ``(a |-> p) and (a |-> q)``); an
antecedent's disjunction (``(s or t) |-> p`` is ``(s |-> p) and (t |-> p)``); sequence
``and``/``intersect`` used as a property; a Boolean ``&&`` (or a 1-bit ``&``, or ``!`` over
``||``, or ``x === 1'b1`` over such) where a sequence reads a Boolean; ``##n`` (fixed) over any
of these; through ``always``, ``nexttime`` and ``if`` branches. Disjunctions mirror it: property
``or``/``implies``, ``not`` over ``and``, a consequent's disjunction, sequence ``or``, ``||``,
through ``##[m:n]`` and concatenation (which distribute over ``or``), ``s_eventually``,
``nexttime`` and ``if`` branches. Repetition and concatenation are single temporal claims and
are not split (``b[*2]`` is one claim; see ``environments/sva/README.md``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from itertools import islice
from typing import Literal, TypeVar

import z3

from . import ir
from .api import Assertion, CheckOptions
from .lasso import Timeout, mk_not, to_z3
from .solver import check, disables, encode, ir_of, solver, widths

MAX_PARTS = 8
"""Parts checked per answer (each is one more implication query); an answer with more is
judged as several answers at once without querying."""

_T = TypeVar("_T")


def drops(p: ir.Prop, conjunctive: bool) -> list[ir.Prop]:
    """``p`` with one of its conjunctive (else disjunctive) parts removed, one entry per part;
    empty when ``p`` is a single part. At most ``MAX_PARTS + 1`` entries: more parts than
    ``MAX_PARTS`` is all the caller needs to know."""
    return list(islice(_prop(p, conjunctive), MAX_PARTS + 1))


def _pair(
    left: _T, right: _T, split: Callable[[_T], Iterator[_T]], join: Callable[[_T, _T], _T]
) -> Iterator[_T]:
    """The drops of ``join(left, right)``: a part removed from ``left`` (or ``left`` itself when
    it is a single part), then likewise from ``right``."""
    yield from _drops(split(left), lambda x: join(x, right), right)
    yield from _drops(split(right), lambda y: join(left, y), left)


def _drops(parts: Iterator[_T], rebuild: Callable[[_T], _T], without: _T) -> Iterator[_T]:
    """Each of ``parts`` rebuilt into the whole; ``without`` when there is none (the side was a
    single part, so dropping it leaves the other side)."""
    found = False
    for part in parts:
        found = True
        yield rebuild(part)
    if not found:
        yield without


def _prop(p: ir.Prop, conj: bool) -> Iterator[ir.Prop]:
    op: Literal["and", "or"] = "and" if conj else "or"

    def split(q: ir.Prop) -> Iterator[ir.Prop]:
        return _prop(q, conj)

    def join(left: ir.Prop, right: ir.Prop) -> ir.Prop:
        return ir.PBin(op, left, right)

    if isinstance(p, ir.PBin) and p.op == op:
        yield from _pair(p.left, p.right, split, join)
    elif isinstance(p, ir.PBin) and p.op == "implies" and not conj:
        yield from _pair(ir.PNot(p.left), p.right, split, join)  # p implies q: not p or q
    elif isinstance(p, ir.PNot):
        q = p.prop
        if isinstance(q, ir.PNot):
            yield from _prop(q.prop, conj)
        elif isinstance(q, ir.PBin) and q.op == ("or" if conj else "and"):
            negated: tuple[ir.Prop, ir.Prop] = (ir.PNot(q.left), ir.PNot(q.right))
            yield from _pair(*negated, split, join)
        elif isinstance(q, ir.PBin) and q.op == "implies" and conj:
            yield from _pair(q.left, ir.PNot(q.right), split, join)  # p and not q
    elif isinstance(p, ir.PImpl) and not p.follows:
        for x in _prop(p.prop, conj):
            yield replace(p, prop=x)
        if conj:  # (s or t) |-> p: one implication per disjunct of the antecedent
            for s in _seq(p.seq, False):
                yield replace(p, seq=s)
    elif isinstance(p, ir.PIf):
        for x in _prop(p.then, conj):
            yield replace(p, then=x)
        if p.other is not None:
            for x in _prop(p.other, conj):
                yield replace(p, other=x)
    elif isinstance(p, ir.PNext | (ir.PAlways if conj else ir.PEventually)):
        # nexttime distributes over both; always over and, s_eventually over or.
        for x in _prop(p.prop, conj):
            yield replace(p, prop=x)
    elif isinstance(p, ir.PSeq):
        for s in _seq(p.seq, conj):
            yield replace(p, seq=s)


def _seq(s: ir.Seq, conj: bool) -> Iterator[ir.Seq]:
    """Parts of a sequence read as a property (it holds where it matches): ``and`` and
    ``intersect`` are conjunctions (dropping one side of an ``intersect`` leaves the other, a
    claim it implies), ``or`` a disjunction."""

    def split(q: ir.Seq) -> Iterator[ir.Seq]:
        return _seq(q, conj)

    if isinstance(s, ir.SBin) and (s.op == "or") != conj:
        yield from _pair(s.left, s.right, split, lambda x, y: replace(s, left=x, right=y))
    elif isinstance(s, ir.SBool):
        for e in _expr(_positive(s.expr), conj):
            yield ir.SBool(e)
    elif isinstance(s, ir.SDelay) and s.lhs is None and (not conj or s.lo == s.hi):
        for x in _seq(s.rhs, conj):
            yield replace(s, rhs=x)
    elif isinstance(s, ir.SDelay) and s.lhs is not None and not conj:
        # Concatenation distributes over or on both sides (its sides are not parts).
        for x in _seq(s.lhs, conj):
            yield replace(s, lhs=x)
        for x in _seq(s.rhs, conj):
            yield replace(s, rhs=x)


def _expr(e: ir.Expr, conj: bool) -> Iterator[ir.Expr]:
    """Parts of a Boolean read for its truth (non-zero)."""

    def split(q: ir.Expr) -> Iterator[ir.Expr]:
        return _expr(_positive(q), conj)

    if isinstance(e, ir.Binary) and _is_junction(e, conj):
        yield from _pair(e.left, e.right, split, lambda x, y: replace(e, left=x, right=y))
    elif isinstance(e, ir.Unary) and e.op == "lnot":
        inner = _positive(e.arg)
        if isinstance(inner, ir.Unary) and inner.op == "lnot":
            yield from _expr(_positive(inner.arg), conj)
        elif isinstance(inner, ir.Binary) and _is_junction(inner, not conj):
            left, right = _not(inner.left), _not(inner.right)
            op = "land" if conj else "lor"
            yield from _pair(left, right, split, lambda x, y: ir.Binary(op, x, y, 1))


def _is_junction(e: ir.Binary, conj: bool) -> bool:
    """``&&`` (``||``), or ``&`` (``|``) of 1-bit operands, which is the same."""
    logical, bitwise = ("land", "and") if conj else ("lor", "or")
    return e.op == logical or (
        e.op == bitwise and e.width == 1 and e.left.width == 1 and e.right.width == 1
    )


def _not(e: ir.Expr) -> ir.Expr:
    return ir.Unary("lnot", e, 1)


def _positive(e: ir.Expr) -> ir.Expr:
    """``x === 1'b1``/``x !== 1'b0`` as ``x``, ``x === 1'b0``/``x !== 1'b1`` as ``!x`` (``x`` of
    one bit), the form the NL2SVA references use; anything else as it is."""
    if isinstance(e, ir.Binary) and e.op in ("eq", "ne"):
        for x, c in ((e.left, e.right), (e.right, e.left)):
            if isinstance(c, ir.Const) and c.width == 1 and x.width == 1:
                return x if (c.value == 1) == (e.op == "eq") else _not(x)
    return e


def surplus(
    a: Assertion,
    b: Assertion,
    options: CheckOptions,
    conjunctive: bool,
    deadline: float | None = None,
) -> bool | None:
    """Whether some part of ``a`` is surplus against ``b``: for ``a`` stronger than ``b``
    (``conjunctive``), a drop of a conjunct that still implies ``b``; for ``a`` weaker, a drop
    of a disjunct that ``b`` still implies. More than ``MAX_PARTS`` parts count as surplus.
    None: undecided by ``deadline`` (default: ``options.timeout_s`` from now)."""
    air, bir = ir_of(a), ir_of(b)
    try:
        parts = drops(air.prop, conjunctive)
    except RecursionError:
        return True  # nested past the recursion limit: far more parts than MAX_PARTS
    if not parts:
        return False
    if len(parts) > MAX_PARTS:
        return True
    if deadline is None:
        deadline = time.monotonic() + options.timeout_s
    da, db = disables(air, bir, options)
    try:
        enc = encode([air, bir], widths([a, b]), options, deadline)
        fb = enc.props.assertion(bir.prop, db)
        fds = [enc.props.assertion(d, da) for d in parts]
    except (Timeout, RecursionError):
        return None
    s = solver(enc, deadline)
    for fd in fds:
        # Stronger: can the drop hold where b fails? Weaker: can b hold where the drop fails?
        hold, fail = (fd, fb) if conjunctive else (fb, fd)
        s.push()
        s.add(to_z3(hold), to_z3(mk_not(fail)))
        r = check(s, deadline)
        s.pop()
        if r == z3.unknown:
            return None
        if r == z3.unsat:
            return True
    return False
