"""Sequence matching as forward propagation over cycles (an NFA run per cycle, not enumerated
start/end pairs): ``ends(seq, starts)`` maps "an attempt starts at cycle j" Booleans to "a match
ends at cycle e" Booleans, linear in the window for every operator but the start-correlated
ones (``and``, ``intersect``, ``first_match``), which are evaluated per start and memoised.

Empty matches follow IEEE 1800 16.9.2.1 and Annex F: an empty match started at j is recorded as
ending at j - 1, so ``empty ##n s`` is ``##(n-1) s`` and ``s ##n empty`` is ``s ##(n-1) 1`` for
free; the ``##0`` cases, which never match, are cut explicitly, and ``empty ##1 empty`` (Annex
F's ``##1`` concatenates) is empty.
"""

from __future__ import annotations

from collections.abc import Callable

from . import ir
from .lasso import BoolLike, mk_and, mk_not, mk_or

Vec = dict[int, BoolLike]  # cycle -> condition; an absent cycle is False


def nullable(s: ir.Seq) -> bool:
    """Whether ``s`` admits an empty match."""
    if isinstance(s, ir.SBool):
        return False
    if isinstance(s, ir.SRepeat):
        return s.lo == 0 or nullable(s.seq)
    if isinstance(s, ir.SBin):
        if s.op == "or":
            return nullable(s.left) or nullable(s.right)
        return nullable(s.left) and nullable(s.right)
    if isinstance(s, ir.SFirst):
        return nullable(s.seq)
    # A concatenation is empty only as empty ##1 empty (Annex F.4.3: ##0 never is); a leading
    # ##[m:n] r is empty ##[m+1:n+1] r.
    if s.lhs is None:
        return s.lo == 0 and nullable(s.rhs)
    joins = s.lo <= 1 and (s.hi is None or s.hi >= 1)
    return joins and nullable(s.lhs) and nullable(s.rhs)


def longest(s: ir.Seq) -> int | None:
    """The most cycles after its start at which a match of ``s`` can end (None: unbounded)."""
    if isinstance(s, ir.SBool):
        return 0
    if isinstance(s, ir.SDelay):
        left = 0 if s.lhs is None else longest(s.lhs)
        right = longest(s.rhs)
        if left is None or right is None or s.hi is None:
            return None
        return left + s.hi + right
    if isinstance(s, ir.SRepeat):
        inner = longest(s.seq)
        if inner is None or s.hi is None:
            return None
        return max(0, s.hi * (inner + 1) - 1)
    if isinstance(s, ir.SBin):
        left, right = longest(s.left), longest(s.right)
        if s.op == "intersect":
            bounded = [x for x in (left, right) if x is not None]
            return min(bounded) if bounded else None
        return None if left is None or right is None else max(left, right)
    return longest(s.seq)


def _add(acc: dict[int, list[BoolLike]], j: int, v: BoolLike) -> None:
    if v is not False:
        acc.setdefault(j, []).append(v)


def _collect(acc: dict[int, list[BoolLike]]) -> Vec:
    out: Vec = {}
    for j, items in acc.items():
        v = mk_or(items)
        if v is not False:
            out[j] = v
    return out


def _meet(a: Vec, b: Vec) -> Vec:
    out: Vec = {}
    for j in a.keys() & b.keys():
        c = mk_and([a[j], b[j]])
        if c is not False:
            out[j] = c
    return out


def _union(*vecs: Vec) -> Vec:
    acc: dict[int, list[BoolLike]] = {}
    for vec in vecs:
        for j, v in vec.items():
            _add(acc, j, v)
    return _collect(acc)


class SeqEncoder:
    """Match ends of sequences over the cycles [0, window) of one lasso.

    ``leaf(expr, j)`` gives a Boolean at cycle j (folded onto the lasso by the caller).
    """

    def __init__(
        self, leaf: Callable[[ir.Expr, int], BoolLike], window: int, tick: Callable[[], None]
    ) -> None:
        self.leaf = leaf
        self.tick = tick  # raises lasso.Timeout past the deadline
        self.window = window
        self._unit: dict[tuple[int, int, int], tuple[Vec, Vec]] = {}
        self._keep: list[object] = []

    def ends(self, s: ir.Seq, starts: Vec) -> tuple[Vec, Vec]:
        """(non-empty match ends, empty match "ends") of ``s`` from the given starts."""
        starts = {j: v for j, v in starts.items() if j < self.window and v is not False}
        if not starts:
            return {}, {}
        if len(starts) == 1:
            ((j, v),) = starts.items()
            if v is True:
                return self._unit_ends(s, j)
        if (isinstance(s, ir.SBin) and s.op != "or") or isinstance(s, ir.SFirst):
            return self._per_start(s, starts)
        return self._ends(s, starts)

    def _unit_ends(self, s: ir.Seq, j: int) -> tuple[Vec, Vec]:
        key = (id(s), j, self.window)
        got = self._unit.get(key)
        if got is None:
            self._keep.append(s)
            got = self._ends(s, {j: True})
            self._unit[key] = got
        return got

    def _per_start(self, s: ir.Seq, starts: Vec) -> tuple[Vec, Vec]:
        ne: dict[int, list[BoolLike]] = {}
        em: dict[int, list[BoolLike]] = {}
        for j, v in starts.items():
            self.tick()
            une, uem = self._unit_ends(s, j)
            for e, c in une.items():
                _add(ne, e, mk_and([v, c]))
            for e, c in uem.items():
                _add(em, e, mk_and([v, c]))
        return _collect(ne), _collect(em)

    def _ends(self, s: ir.Seq, starts: Vec) -> tuple[Vec, Vec]:
        self.tick()
        if isinstance(s, ir.SBool):
            out: Vec = {}
            for j, v in starts.items():
                c = mk_and([v, self.leaf(s.expr, j)])
                if c is not False:
                    out[j] = c
            return out, {}
        if isinstance(s, ir.SDelay):
            return self._delay(s, starts)
        if isinstance(s, ir.SRepeat):
            return self._repeat(s, starts)
        if isinstance(s, ir.SBin):
            if s.op == "or":
                ne1, em1 = self.ends(s.left, starts)
                ne2, em2 = self.ends(s.right, starts)
                return _union(ne1, ne2), _union(em1, em2)
            assert len(starts) == 1
            ((j, _),) = starts.items()
            if s.op == "intersect":
                # Both ends agree, so neither side needs cycles past the shorter one's longest
                # match, and an empty right part of a side starts one cycle later (throughout and
                # within have an unbounded side and, usually, a short one).
                span = longest(s)
                outer = self.window
                if span is not None:
                    self.window = min(outer, j + span + 2)
                try:
                    ne1, em1 = self.ends(s.left, {j: True})
                    ne2, em2 = self.ends(s.right, {j: True})
                finally:
                    self.window = outer
                return _meet(ne1, ne2), _meet(em1, em2)
            ne1, em1 = self.ends(s.left, {j: True})
            ne2, em2 = self.ends(s.right, {j: True})
            # and: both match from j; the composite ends at the later end. An empty match of
            # one operand counts as done at j - 1.
            done1, done2 = self._prefix(ne1, em1, j), self._prefix(ne2, em2, j)
            acc: dict[int, list[BoolLike]] = {}
            for e, c in ne1.items():
                _add(acc, e, mk_and([c, done2.get(e, False)]))
            for e, c in ne2.items():
                _add(acc, e, mk_and([c, done1.get(e, False)]))
            return _collect(acc), _meet(em1, em2)
        if isinstance(s, ir.SFirst):
            assert len(starts) == 1
            ((j, _),) = starts.items()
            ne1, em1 = self.ends(s.seq, {j: True})
            if em1:
                # The empty match comes first.
                blocked = mk_or(list(em1.values()))
                ne1 = _meet(ne1, dict.fromkeys(ne1, mk_not(blocked)))
            out = {}
            earlier: list[BoolLike] = []
            for e in sorted(ne1):
                self.tick()
                c = mk_and([ne1[e], mk_not(mk_or(earlier))])
                if c is not False:
                    out[e] = c
                earlier.append(ne1[e])
            return out, em1
        raise AssertionError(f"unknown sequence {s!r}")

    def _prefix(self, ne: Vec, em: Vec, j: int) -> Vec:
        """cycle e -> "some match ended at or before e" (over [j - 1, window))."""
        out: Vec = {}
        run: BoolLike = mk_or(list(em.values()))
        for e in range(j, self.window):
            self.tick()
            run = mk_or([run, ne.get(e, False)])
            if run is not False:
                out[e] = run
        return out

    def _shift(self, vec: Vec, lo: int, hi: int | None) -> Vec:
        """cycle j -> OR of vec[j - d] for d in [lo, hi] (hi None: unbounded)."""
        if not vec:
            return {}
        if hi is None:
            out: Vec = {}
            run: BoolLike = False
            first = min(vec)
            for j in range(first + lo, self.window):
                self.tick()
                run = mk_or([run, vec.get(j - lo, False)])
                if run is not False:
                    out[j] = run
            return out
        acc: dict[int, list[BoolLike]] = {}
        for j, v in vec.items():
            for d in range(lo, hi + 1):
                if j + d < self.window:
                    _add(acc, j + d, v)
        return _collect(acc)

    def _delay(self, s: ir.SDelay, starts: Vec) -> tuple[Vec, Vec]:
        lo, hi = s.lo, s.hi
        if s.lhs is None:
            # A leading ##[m:n] r is empty ##[m+1:n+1] r (16.9.2.1: empty ##n r = ##(n-1) r):
            # an empty left operand at every start.
            ne0: Vec = {}
            em0: Vec = {j - 1: v for j, v in starts.items()}
            lo, hi = lo + 1, None if hi is None else hi + 1
        else:
            ne0, em0 = self.ends(s.lhs, starts)
        # Where the right operand starts: ##0 fuses with a non-empty left match only (an empty
        # operand never joins with ##0); ##d (d >= 1) starts d cycles after the left one ends.
        zero = ne0 if lo == 0 else {}
        after_ne = self._shift(ne0, max(lo, 1), hi) if hi is None or hi >= 1 else {}
        after_em = self._shift(em0, max(lo, 1), hi) if hi is None or hi >= 1 else {}
        ne, _ = self.ends(s.rhs, _union(zero, after_ne, after_em))
        if not nullable(s.rhs):
            return ne, {}
        # An empty right operand: l ##d empty = l ##(d-1) 1'b1 ends d - 1 cycles after l, a
        # non-empty match unless l was empty too and d = 1 (Annex F: ##1 concatenates, so
        # empty ##1 empty is empty).
        _, em_after_ne = self.ends(s.rhs, after_ne)
        longer = self._shift(em0, max(lo, 2), hi) if hi is None or hi >= 2 else {}
        _, em_longer = self.ends(s.rhs, longer)
        adjacent = self._shift(em0, 1, 1) if lo <= 1 and (hi is None or hi >= 1) else {}
        _, em_adjacent = self.ends(s.rhs, adjacent)
        return _union(ne, em_after_ne, em_longer), em_adjacent

    def _repeat(self, s: ir.SRepeat, starts: Vec) -> tuple[Vec, Vec]:
        lo, hi = s.lo, s.hi
        if nullable(s.seq):
            # s[*n] concatenates n matches of s (Annex F), and an empty copy adds nothing: for
            # a nullable s, s[*m:n] is its non-empty matches repeated 1..n times, or empty.
            em = {j - 1: v for j, v in starts.items()} if lo == 0 else self.ends(s.seq, starts)[1]
            lo = min(lo, 1)
        else:
            em = {j - 1: v for j, v in starts.items()} if lo == 0 else {}
        if hi is not None and hi == 0:
            return {}, em
        if isinstance(s.seq, ir.SBool) and hi is None:
            return self._bool_star(s.seq, lo, starts), em
        results: list[Vec] = []
        cur = starts
        first = max(lo, 1)
        for i in range(1, first + 1 if hi is None else hi + 1):
            ne, _ = self.ends(s.seq, cur)
            if hi is None and i == first:
                results.append(self._chain(s.seq, ne))
            elif i >= first:
                results.append(ne)
            cur = self._shift(ne, 1, 1)
            if not cur:
                break
        return _union(*results), em

    def _chain(self, seq: ir.Seq, first: Vec) -> Vec:
        """The given match ends followed by any number of further non-empty copies of
        ``seq``, in one forward sweep: copies are non-empty, so an end is final once the sweep
        has passed it, and each cycle starts at most one new copy."""
        if not first:
            return {}
        acc: dict[int, list[BoolLike]] = {e: [c] for e, c in first.items()}
        out: Vec = {}
        for j in range(min(first), self.window):
            self.tick()
            items = acc.pop(j, None)
            v = False if items is None else mk_or(items)
            if v is False:
                continue
            out[j] = v
            ne, _ = self.ends(seq, {j + 1: True})
            for e, c in ne.items():
                _add(acc, e, mk_and([v, c]))
        return out

    def _bool_star(self, b: ir.SBool, lo: int, starts: Vec) -> Vec:
        """b[*lo:$] in one pass: runs of b of length at least max(lo, 1)."""
        need = max(lo, 1)
        cur = starts
        ne: Vec = {}
        for i in range(need):
            ne, _ = self.ends(b, cur)
            if i < need - 1:
                cur = self._shift(ne, 1, 1)
        out: Vec = {}
        run: BoolLike = False
        if not ne:
            return {}
        for e in range(min(ne), self.window):
            self.tick()
            run = mk_or([ne.get(e, False), mk_and([run, self.leaf(b.expr, e)])])
            if run is not False:
                out[e] = run
        return out
