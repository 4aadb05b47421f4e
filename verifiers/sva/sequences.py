"""Sequence matching as forward propagation over cycles (an NFA run per cycle, not enumerated
start/end pairs): ``ends(seq, starts)`` maps "an attempt starts at cycle j" Booleans to "a match
ends at cycle e" Booleans, linear in the window for every operator but the start-correlated
ones (``and``, ``intersect``, ``first_match``), which are evaluated per start and memoised.

Empty matches follow IEEE 1800 16.9.2.1: an empty match started at j is recorded as ending at
j - 1, so ``empty ##n s`` is ``##(n-1) s`` and ``s ##n empty`` is ``s ##(n-1) 1`` for free; the
``##0`` cases, which never match, are cut explicitly.
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
    return False  # a concatenation always spans at least one cycle


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
        self._unit: dict[tuple[int, int], tuple[Vec, Vec]] = {}
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
        key = (id(s), j)
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
            ne1, em1 = self.ends(s.left, {j: True})
            ne2, em2 = self.ends(s.right, {j: True})
            if s.op == "intersect":
                return _meet(ne1, ne2), _meet(em1, em2)
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
        if s.lhs is None:
            # A leading ##n shifts the start itself (no previous end to count from).
            src_zero = src_pos = starts
        else:
            ne0, em0 = self.ends(s.lhs, starts)
            src_pos = _union(ne0, em0)
            src_zero = ne0  # an empty left operand never joins with ##0
        lo, hi = s.lo, s.hi
        zero_starts = src_zero if lo == 0 else {}
        has_pos = hi is None or hi >= 1
        pos_starts = self._shift(src_pos, max(lo, 1), hi) if has_pos else {}
        if not nullable(s.rhs):
            ne, _ = self.ends(s.rhs, _union(zero_starts, pos_starts))
            return ne, {}
        ne_z, _ = self.ends(s.rhs, zero_starts)
        ne_p, em_p = self.ends(s.rhs, pos_starts)
        # s ##n empty = s ##(n-1) 1: an empty right operand ends the match the cycle before.
        return _union(ne_z, ne_p, em_p), {}

    def _repeat(self, s: ir.SRepeat, starts: Vec) -> tuple[Vec, Vec]:
        lo, hi = s.lo, s.hi
        em: Vec = {j - 1: v for j, v in starts.items()} if lo == 0 else {}
        if hi is not None and hi == 0:
            return {}, em
        if isinstance(s.seq, ir.SBool) and hi is None:
            return self._bool_star(s.seq, lo, starts), em
        results: list[Vec] = []
        cur = starts
        i = 0
        first = max(lo, 1)
        while cur:
            i += 1
            ne, _ = self.ends(s.seq, cur)
            if i >= first:
                results.append(ne)
            if hi is not None and i >= hi:
                break
            if hi is None and i >= first:
                # Unbounded: keep going from every new end until the window is exhausted.
                frontier = ne
                while frontier:
                    frontier, _ = self.ends(s.seq, self._shift(frontier, 1, 1))
                    results.append(frontier)
                break
            cur = self._shift(ne, 1, 1)
        return _union(*results), em

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
