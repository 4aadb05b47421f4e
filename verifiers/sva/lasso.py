"""Lasso-shaped traces: cycles 0..k-1 are explicit z3 variables, and every later cycle j is
cycle l + (j - l) mod (k - l) for a loop start l chosen by the solver (one selector per l).

Values before cycle 0 are 0 (the 2-state default). So that sampled-value functions agree across
the wrap, the ``depth`` cycles before k equal the ``depth`` cycles before l (reading 0 before
cycle 0): the *history closure*.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeAlias

import z3
from z3 import z3core

# A z3 BoolRef or a Python bool constant (z3 has no type stubs, so this is Any to mypy).
BoolLike: TypeAlias = Any


class Timeout(Exception):
    """The per-check wall-clock limit passed while the formula was being built."""


def mk_and(items: list[BoolLike]) -> BoolLike:
    """Conjunction with constant folding (Python ``True``/``False`` are constants)."""
    out: list[z3.BoolRef] = []
    for x in items:
        if x is False:
            return False
        if x is not True:
            out.append(x)
    if not out:
        return True
    return out[0] if len(out) == 1 else z3.And(out)


def mk_or(items: list[BoolLike]) -> BoolLike:
    """Disjunction with constant folding."""
    out: list[z3.BoolRef] = []
    for x in items:
        if x is True:
            return True
        if x is not False:
            out.append(x)
    if not out:
        return False
    return out[0] if len(out) == 1 else z3.Or(out)


def mk_not(x: BoolLike) -> BoolLike:
    """Negation with constant folding."""
    if isinstance(x, bool):
        return not x
    return z3.Not(x)


def to_z3(x: BoolLike) -> z3.BoolRef:
    """A z3 Boolean for a possibly constant value."""
    return z3.BoolVal(x) if isinstance(x, bool) else x


class Lasso:
    """The shared trace of one check: signal variables, loop selectors, closure constraints."""

    def __init__(
        self, k: int, signals: dict[str, int], depth: int, deadline: float, prefix: str = ""
    ) -> None:
        self.k = k
        self.depth = depth
        self.deadline = deadline
        self.ticks = 0
        # The loop start as a bit-vector (for folding) and as one selector per value.
        self.pos_width = k
        self.loop = z3.BitVec(f"{prefix}loop", self.pos_width)
        self.sel = [self.loop == l_ for l_ in range(k)]
        self._vecs: dict[object, z3.BitVecRef | bool] = {}
        self._pos: dict[int, z3.BitVecRef] = {}
        self._consts: dict[int, z3.BitVecRef] = {}
        self.widths = dict(signals)
        self.vars: dict[str, list[z3.BitVecRef]] = {
            name: [z3.BitVec(f"{prefix}{name}@{t}", w) for t in range(k)]
            for name, w in signals.items()
        }
        self.constraints: list[z3.BoolRef] = [z3.ULT(self.loop, k)]
        for l_ in range(k):
            eqs = []
            for i in range(1, depth + 1):
                for name, vs in self.vars.items():
                    before_loop = self.sig(name, l_ - i)
                    eqs.append(vs[k - i] == before_loop if k - i >= 0 else z3.BoolVal(True))
            if eqs:
                self.constraints.append(z3.Implies(self.sel[l_], z3.And(eqs)))
        self._sig_memo: dict[tuple[str, int], z3.BitVecRef] = {}

    def tick(self) -> None:
        """Check the wall-clock limit now and then (formula building is Python-bound)."""
        self.ticks += 1
        if self.ticks & 15 == 0 and time.monotonic() > self.deadline:
            raise Timeout

    def sig(self, name: str, t: int) -> z3.BitVecRef:
        """The value of ``name`` at cycle ``t`` (0 before cycle 0, folded past k)."""
        if t < 0:
            return z3.BitVecVal(0, self.widths[name])
        if t < self.k:
            return self.vars[name][t]
        key = (name, t)
        got = self._sig_memo.get(key)
        if got is None:
            k = self.k
            got = self.sig(name, t - k)  # placeholder for the l = 0 case (period k)
            for l_ in range(1, k):
                got = z3.If(self.sel[l_], self.sig(name, t - k + l_), got)
            self._sig_memo[key] = got
        return got

    def fold(self, key: object, j: int, value_at: Callable[[int], BoolLike]) -> BoolLike:
        """A Boolean of cycle j >= k as the same Boolean at the cycle it repeats.

        The values of one node at cycles 0..k-1 are packed once into a k-bit vector and cycle
        j reads bit ``l + (j - l) mod (k - l)`` of it, with l the symbolic loop start: O(1) terms
        per folded cycle instead of one per possible loop start."""
        self.tick()
        vec = self._vecs.get(key)
        if vec is None:
            bits = [value_at(q) for q in range(self.k)]
            if all(isinstance(b, bool) for b in bits) and len(set(bits)) == 1:
                vec = bits[0]
            else:
                one, zero = z3.BitVecVal(1, 1), z3.BitVecVal(0, 1)
                parts = [
                    (one if b else zero) if isinstance(b, bool) else z3.If(b, one, zero)
                    for b in reversed(bits)
                ]
                vec = parts[0] if len(parts) == 1 else z3.Concat(parts)
            self._vecs[key] = vec
        if isinstance(vec, bool):
            return vec
        bit = z3.Extract(0, 0, z3.LShR(vec, self.position(j)))
        return bit == z3.BitVecVal(1, 1)

    def position(self, j: int) -> z3.BitVecRef:
        """The explicit cycle (< k) that cycle j >= k repeats, as a term over the loop start
        (a small multiplexer over the constant answers, shared by every node)."""
        got = self._pos.get(j)
        if got is None:
            self.tick()
            k = self.k
            # Raw C API calls: this multiplexer is the hottest spot of formula building and
            # z3.If's argument coercion would dominate it.
            ctx = self.loop.ctx
            ref = ctx.ref()
            acc = self._const(j % k)  # loop start 0: period k
            for l_ in range(1, k):
                target = self._const(l_ + (j - l_) % (k - l_))
                # Wrapping each step in a BitVecRef keeps z3's reference count right.
                acc = z3.BitVecRef(
                    z3core.Z3_mk_ite(ref, self.sel[l_].as_ast(), target.as_ast(), acc.as_ast()),
                    ctx,
                )
            got = acc
            self._pos[j] = got
        return got

    def _const(self, v: int) -> z3.BitVecRef:
        got = self._consts.get(v)
        if got is None:
            got = z3.BitVecVal(v, self.pos_width)
            self._consts[v] = got
        return got
