"""Bit-vector semantics of SystemVerilog integer expressions over a lasso trace, at the widths
and signedness slang resolved (its implicit conversions arrive as ``Resize`` nodes)."""

from __future__ import annotations

import z3

from . import ir
from .lasso import BoolLike, Lasso, mk_and, mk_not, mk_or


class ExprEncoder:
    """Evaluates IR expressions at a cycle, memoised per (node, cycle)."""

    def __init__(self, lasso: Lasso) -> None:
        self.lasso = lasso
        self._bv: dict[tuple[int, int], z3.BitVecRef] = {}
        self._bool: dict[tuple[int, int], BoolLike] = {}
        self._keep: list[object] = []  # keeps memo keys (ids) alive

    # -- Booleans -----------------------------------------------------------------------------
    def truth(self, e: ir.Expr, t: int) -> BoolLike:
        """``e`` in a Boolean context (non-zero) at cycle t."""
        key = (id(e), t)
        got = self._bool.get(key)
        if got is None:
            self._keep.append(e)
            got = self._truth(e, t)
            self._bool[key] = got
        return got

    def _truth(self, e: ir.Expr, t: int) -> BoolLike:
        if isinstance(e, ir.Const):
            return e.value != 0
        if isinstance(e, ir.Unary):
            if e.op == "lnot":
                return mk_not(self.truth(e.arg, t))
            if e.op == "red_or":
                return self.truth(e.arg, t)
            if e.op == "red_nor":
                return mk_not(self.truth(e.arg, t))
        if isinstance(e, ir.Binary):
            if e.op == "land":
                return mk_and([self.truth(e.left, t), self.truth(e.right, t)])
            if e.op == "lor":
                return mk_or([self.truth(e.left, t), self.truth(e.right, t)])
            if e.op == "limp":
                return mk_or([mk_not(self.truth(e.left, t)), self.truth(e.right, t)])
            if e.op == "leqv":
                a, b = self.truth(e.left, t), self.truth(e.right, t)
                if isinstance(a, bool) or isinstance(b, bool):
                    return mk_or([mk_and([a, b]), mk_and([mk_not(a), mk_not(b)])])
                return a == b
            if e.op in _CMP:
                return self._compare(e, t)
        if isinstance(e, ir.Resize) and e.width >= e.arg.width:
            return self.truth(e.arg, t)
        if isinstance(e, ir.Past):
            return self.truth(e.arg, t - e.n)
        v = self.bv(e, t)
        return _simp(v != 0)

    def _compare(self, e: ir.Binary, t: int) -> BoolLike:
        a, b = self.bv(e.left, t), self.bv(e.right, t)
        w = max(e.left.width, e.right.width)
        signed = e.left.signed and e.right.signed
        a, b = _extend(a, e.left.width, w, signed), _extend(b, e.right.width, w, signed)
        op = e.op
        if op == "eq":
            r = a == b
        elif op == "ne":
            r = a != b
        elif signed:
            r = {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]
        else:
            r = {
                "lt": z3.ULT(a, b),
                "le": z3.ULE(a, b),
                "gt": z3.UGT(a, b),
                "ge": z3.UGE(a, b),
            }[op]
        return _simp(r)

    # -- Bit vectors --------------------------------------------------------------------------
    def bv(self, e: ir.Expr, t: int) -> z3.BitVecRef:
        """``e`` as a bit-vector of ``e.width`` bits at cycle t."""
        key = (id(e), t)
        got = self._bv.get(key)
        if got is None:
            self._keep.append(e)
            got = self._bitvec(e, t)
            self._bv[key] = got
        return got

    def _bitvec(self, e: ir.Expr, t: int) -> z3.BitVecRef:
        self.lasso.tick()
        w = e.width
        if isinstance(e, ir.Const):
            return z3.BitVecVal(e.value, w)
        if isinstance(e, ir.Sig):
            return self.lasso.sig(e.name, t)
        if isinstance(e, ir.Past):
            return self.bv(e.arg, t - e.n)
        if isinstance(e, ir.Resize):
            return _extend(self.bv(e.arg, t), e.arg.width, w, e.arg.signed and e.signed)
        if isinstance(e, ir.Unary):
            return self._unary(e, t)
        if isinstance(e, ir.Binary):
            return self._binary(e, t)
        if isinstance(e, ir.Cond):
            c = self.truth(e.cond, t)
            a = _extend(self.bv(e.then, t), e.then.width, w, e.then.signed and e.signed)
            b = _extend(self.bv(e.other, t), e.other.width, w, e.other.signed and e.signed)
            if isinstance(c, bool):
                return a if c else b
            return z3.If(c, a, b)
        if isinstance(e, ir.Concat):
            parts = [self.bv(p, t) for p in e.parts]
            v = parts[0] if len(parts) == 1 else z3.Concat(parts)
            return _extend(v, sum(p.width for p in e.parts), w, False)
        if isinstance(e, ir.Extract):
            return _slice(self.bv(e.arg, t), e.arg.width, e.lsb, w)
        if isinstance(e, ir.DynExtract):
            return self._dyn(e, t)
        raise AssertionError(f"unknown expression {e!r}")

    def _unary(self, e: ir.Unary, t: int) -> z3.BitVecRef:
        w, op = e.width, e.op
        x = self.bv(e.arg, t)
        aw = e.arg.width
        if op == "neg":
            return _extend(-x, aw, w, e.signed)
        if op == "not":
            return _extend(~x, aw, w, e.signed)
        if op == "popcount":
            bits = [z3.ZeroExt(w - 1, z3.Extract(i, i, x)) for i in range(aw)]
            return _sum(bits, w)
        if op in ("red_xor", "red_xnor"):
            v = z3.Extract(0, 0, x)
            for i in range(1, aw):
                v = v ^ z3.Extract(i, i, x)
            if op == "red_xnor":
                v = ~v
            return _extend(v, 1, w, False)
        return _bool_bv(self.truth(_as_truth(e), t), w)

    def _binary(self, e: ir.Binary, t: int) -> z3.BitVecRef:
        w, op = e.width, e.op
        if op in _CMP or op in ("land", "lor", "limp", "leqv"):
            return _bool_bv(self.truth(e, t), w)
        if op in ("shl", "lshr", "ashr"):
            x = _extend(self.bv(e.left, t), e.left.width, w, e.left.signed and e.signed)
            n = self.bv(e.right, t)
            m = max(w, e.right.width)
            xs = _extend(x, w, m, op == "ashr" and e.signed)
            ns = _extend(n, e.right.width, m, False)
            if op == "shl":
                r = xs << ns
            elif op == "ashr" and e.signed:
                r = xs >> ns
            else:
                r = z3.LShR(xs, ns)
            return z3.Extract(w - 1, 0, r) if m > w else r
        a = _extend(self.bv(e.left, t), e.left.width, w, e.left.signed and e.signed)
        b = _extend(self.bv(e.right, t), e.right.width, w, e.right.signed and e.signed)
        zero = z3.BitVecVal(0, w)
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op in ("div", "mod"):
            # 2-state reading of division by zero (X in 4-state): 0.
            if e.signed:
                q = a / b if op == "div" else z3.SRem(a, b)
            else:
                q = z3.UDiv(a, b) if op == "div" else z3.URem(a, b)
            return z3.If(b == zero, zero, q)
        if op == "and":
            return a & b
        if op == "or":
            return a | b
        if op == "xor":
            return a ^ b
        if op == "xnor":
            return ~(a ^ b)
        raise AssertionError(f"unknown operator {op}")

    def _dyn(self, e: ir.DynExtract, t: int) -> z3.BitVecRef:
        x = self.bv(e.arg, t)
        idx = self.bv(e.index, t)
        iw = e.index.width
        out: z3.BitVecRef = z3.BitVecVal(0, e.width)
        for pos in range(-e.width + 1, e.arg.width):
            if (pos - e.offset) % e.scale:
                continue
            i = (pos - e.offset) // e.scale
            lo, hi = (
                (-(1 << (iw - 1)), (1 << (iw - 1)) - 1) if e.index.signed else (0, (1 << iw) - 1)
            )
            if not lo <= i <= hi:
                continue
            out = z3.If(
                idx == z3.BitVecVal(i % (1 << iw), iw), _slice(x, e.arg.width, pos, e.width), out
            )
        return out


_CMP = ("eq", "ne", "lt", "le", "gt", "ge")


def _as_truth(e: ir.Unary) -> ir.Expr:
    """A reduction and/or/nand/nor/lnot as a Boolean expression."""
    aw = e.arg.width
    ones = ir.Const((1 << aw) - 1, aw)
    zero = ir.Const(0, aw)
    table = {
        "red_and": ir.Binary("eq", e.arg, ones, 1),
        "red_nand": ir.Binary("ne", e.arg, ones, 1),
        "red_or": ir.Binary("ne", e.arg, zero, 1),
        "red_nor": ir.Binary("eq", e.arg, zero, 1),
        "lnot": ir.Binary("eq", e.arg, zero, 1),
    }
    return table[e.op]


def _simp(b: z3.BoolRef) -> BoolLike:
    if z3.is_true(b):
        return True
    if z3.is_false(b):
        return False
    return b


def _bool_bv(b: BoolLike, w: int) -> z3.BitVecRef:
    if isinstance(b, bool):
        return z3.BitVecVal(int(b), w)
    return z3.If(b, z3.BitVecVal(1, w), z3.BitVecVal(0, w))


def _extend(x: z3.BitVecRef, fw: int, tw: int, signed: bool) -> z3.BitVecRef:
    if tw == fw:
        return x
    if tw < fw:
        return z3.Extract(tw - 1, 0, x)
    return z3.SignExt(tw - fw, x) if signed else z3.ZeroExt(tw - fw, x)


def _slice(x: z3.BitVecRef, xw: int, lsb: int, w: int) -> z3.BitVecRef:
    """Bits [lsb + w - 1 : lsb] of x; bits outside x read 0 (2-state out-of-range select)."""
    if lsb >= xw or lsb + w <= 0:
        return z3.BitVecVal(0, w)
    y, yw = x, xw
    if lsb < 0:
        y, yw, lsb = z3.Concat(y, z3.BitVecVal(0, -lsb)), yw - lsb, 0
    if lsb + w > yw:
        y, yw = z3.ZeroExt(lsb + w - yw, y), lsb + w
    return y if (lsb == 0 and w == yw) else z3.Extract(lsb + w - 1, lsb, y)


def _sum(items: list[z3.BitVecRef], w: int) -> z3.BitVecRef:
    if not items:
        return z3.BitVecVal(0, w)
    total = items[0]
    for x in items[1:]:
        total = total + x
    return total
