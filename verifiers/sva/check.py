"""Equivalence, tautology and vacuity checks: both implication directions as z3 queries over one
lasso, verdicts, counterexamples minimised to few toggles, a per-check time limit and a cache
on the (normalised) pair."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

import z3

from . import ir
from .api import CheckOptions, CheckResult, Counterexample, SvaError, Verdict
from .expressions import ExprEncoder
from .horizon import measure
from .lasso import BoolLike, Lasso, Timeout, mk_not, to_z3
from .properties import PropEncoder

K_MIN = 6
K_MAX = 40  # lasso length cap; past it "equivalent" is bounded (see README)
MINIMISE_ROUNDS = 24
CACHE_SIZE = 4096

_cache: OrderedDict[tuple[object, ...], CheckResult] = OrderedDict()


@dataclass
class _Encoding:
    lasso: Lasso
    props: PropEncoder
    bounded: bool  # the lasso cap cut the recommended length


def _sizes(irs: list[ir.AssertionIR]) -> tuple[int, int, int, bool]:
    """(lasso length k, sequence window, $past depth, capped) for a set of assertions."""
    ms = [measure(a) for a in irs]
    span = max(m.span for m in ms)
    depth = max(m.depth for m in ms)
    unbounded = sum(m.unbounded for m in ms)
    # §4.5: a safety violation shows within H cycles of an attempt, so 2H cycles leave room for
    # the attempt and a loop. $past needs 2D more: cycles 0..D-1 read the all-zero values
    # before cycle 0, so they cannot repeat on the loop, and the D cycles before the loop are
    # the copy of its last D (the history closure). With only D, a trace that is quiet for D
    # cycles and then periodic did not fit: `a |-> $past(x, 7)` was judged to forbid `a`.
    want = max(K_MIN, 2 * span + 2 * depth + 4)
    k = min(want, K_MAX)
    depth = min(depth, k)
    window = k + span + 2 + min(unbounded, 4) * k
    return k, window, depth, want > K_MAX


def _disables(
    a: ir.AssertionIR, b: ir.AssertionIR | None, options: CheckOptions
) -> tuple[ir.Expr | None, ir.Expr | None]:
    """The ``disable iff`` conditions to honour: none when they are ignored (FVEval strips
    them before its PEC), else each side's own (IEEE 1800)."""
    if b is not None and a.clock != b.clock and "default" not in (a.clock, b.clock):
        raise SvaError("unsupported", f"different clocks: {a.clock} vs {b.clock}")
    if options.ignore_disable_iff:
        return None, None
    return a.disable, None if b is None else b.disable


def _widths(asserts: list[object]) -> dict[str, int]:
    from .api import Assertion

    out: dict[str, int] = {}
    for x in asserts:
        assert isinstance(x, Assertion)
        for s in x.signals:
            if out.get(s.name, s.width) != s.width:
                raise SvaError("elaboration", f"signal {s.name} has two widths")
            out[s.name] = s.width
    return out


def _encode(
    irs: list[ir.AssertionIR], widths: dict[str, int], options: CheckOptions, deadline: float
) -> _Encoding:
    k, window, depth, capped = _sizes(irs)
    lasso = Lasso(k, widths, depth, deadline)
    exprs = ExprEncoder(lasso)
    props = PropEncoder(lasso, exprs, window, options.unmarked_strong)
    return _Encoding(lasso, props, capped)


def _solver(enc: _Encoding, deadline: float) -> z3.Solver:
    s = z3.SolverFor("QF_BV")
    s.set("timeout", max(1, int((deadline - time.monotonic()) * 1000)))
    s.add(*enc.lasso.constraints)
    return s


def _check(s: z3.Solver, deadline: float, *assumptions: z3.BoolRef) -> z3.CheckSatResult:
    left = deadline - time.monotonic()
    if left <= 0:
        return z3.unknown
    s.set("timeout", max(1, int(left * 1000)))
    return s.check(*assumptions)


def _counterexample(
    s: z3.Solver, lasso: Lasso, holds: Literal["a", "b"], deadline: float, spent: float
) -> Counterexample:
    """Read a trace from the model after making it quiet: signals start at 0 and keep their
    value, except where the difference needs a toggle (greedy, by unsat cores)."""
    model = s.model()
    k = lasso.k
    keep: list[z3.BoolRef] = []
    for name, vs in lasso.vars.items():
        for t in range(k):
            lit = z3.Bool(f"__quiet_{name}_{t}")
            prev = z3.BitVecVal(0, lasso.widths[name]) if t == 0 else vs[t - 1]
            s.add(z3.Implies(lit, vs[t] == prev))
            keep.append(lit)
    active = list(keep)
    # The quieting is a nicety: it gets a share of the time the decision itself took.
    budget = min(deadline, time.monotonic() + max(0.01, spent))
    for _ in range(MINIMISE_ROUNDS):
        r = _check(s, budget, *active)
        if r == z3.sat:
            model = s.model()
            break
        if r != z3.unsat:
            break
        core = {c.get_id() for c in s.unsat_core()}
        if not core:
            break
        # Let every cycle in the core toggle (few rounds; each core holds a needed toggle).
        active = [x for x in active if x.get_id() not in core]
    loop = model.eval(lasso.loop, model_completion=True).as_long()
    signals = {
        name: [model.eval(v, model_completion=True).as_long() for v in vs]
        for name, vs in sorted(lasso.vars.items())
    }
    return Counterexample(length=k, loop_start=loop, signals=signals, holds=holds)


def check_pair(a: object, b: object, options: CheckOptions) -> CheckResult:
    """Compare ``G a`` with ``G b`` (see ``api.check_equivalence``)."""
    from .api import Assertion

    assert isinstance(a, Assertion) and isinstance(b, Assertion)
    if not isinstance(a.ir, ir.AssertionIR) or not isinstance(b.ir, ir.AssertionIR):
        raise SvaError("unsupported", "assertions must come from parse_assertion")
    key = (a.ir, b.ir, options)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    result = _check_pair(a.ir, b.ir, _widths([a, b]), options)
    if result.verdict != "unknown":
        _cache[key] = result
        if len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return result


def _check_pair(
    a: ir.AssertionIR, b: ir.AssertionIR, widths: dict[str, int], options: CheckOptions
) -> CheckResult:
    start = time.monotonic()
    deadline = start + options.timeout_s
    da, db = _disables(a, b, options)
    try:
        enc = _encode([a, b], widths, options, deadline)
        fa = enc.props.assertion(a.prop, da)
        fb = enc.props.assertion(b.prop, db)
    except Timeout:
        return CheckResult("unknown", (), time.monotonic() - start, "time limit (encoding)")
    except RecursionError:
        return CheckResult("unknown", (), time.monotonic() - start, "nesting too deep")
    s = _solver(enc, deadline)
    outcomes: list[z3.CheckSatResult] = []
    cexs: list[Counterexample] = []
    for hold, fail, holds in ((fa, fb, "a"), (fb, fa, "b")):
        s.push()
        s.add(to_z3(hold), to_z3(mk_not(fail)))
        t0 = time.monotonic()
        r = _check(s, deadline)
        outcomes.append(r)
        if r == z3.sat:
            spent = time.monotonic() - t0
            cexs.append(_counterexample(s, enc.lasso, holds, deadline, spent))  # type: ignore[arg-type]
        s.pop()
    a_not_b, b_not_a = outcomes
    verdict: Verdict
    if z3.unknown in outcomes:
        verdict = "unknown"
    elif a_not_b == z3.unsat and b_not_a == z3.unsat:
        verdict = "equivalent"
    elif a_not_b == z3.unsat:
        verdict = "a_implies_b"
    elif b_not_a == z3.unsat:
        verdict = "b_implies_a"
    else:
        verdict = "different"
    detail = f"lasso length {enc.lasso.k}"
    if enc.bounded:
        detail += " (capped: equivalence is bounded)"
    if verdict == "unknown":
        detail = "time limit (solver)"
    return CheckResult(verdict, tuple(cexs), time.monotonic() - start, detail)


def _single(a: object, options: CheckOptions) -> tuple[_Encoding, ir.AssertionIR, float]:
    from .api import Assertion

    assert isinstance(a, Assertion)
    if not isinstance(a.ir, ir.AssertionIR):
        raise SvaError("unsupported", "assertions must come from parse_assertion")
    deadline = time.monotonic() + options.timeout_s
    return _encode([a.ir], _widths([a]), options, deadline), a.ir, deadline


def tautology(a: object, options: CheckOptions) -> bool | None:
    """``G a`` holds on every lasso (None: time limit)."""
    try:
        enc, air, deadline = _single(a, options)
        fa = enc.props.assertion(air.prop, _disables(air, None, options)[0])
    except (Timeout, RecursionError):
        return None
    s = _solver(enc, deadline)
    s.add(to_z3(mk_not(fa)))
    r = _check(s, deadline)
    return None if r == z3.unknown else r == z3.unsat


def vacuous(a: object, options: CheckOptions) -> bool | None:
    """Tautology, or every implication's antecedent never matches (None: time limit)."""
    taut = tautology(a, options)
    if taut is not False:
        return taut
    try:
        enc, air, deadline = _single(a, options)
        matches = enc.props.antecedent_matches(air.prop)
    except (Timeout, RecursionError):
        return None
    if not matches:
        return False
    s = _solver(enc, deadline)
    for m in matches:
        s.push()
        s.add(to_z3(m))
        r = _check(s, deadline)
        s.pop()
        if r == z3.unknown:
            return None
        if r == z3.sat:
            return False
    return True


def holds_on(a: object, cex: Counterexample, options: CheckOptions | None = None) -> bool:
    """Whether ``G a`` holds on the lasso ``cex`` (re-asserting the trace in z3); raises
    ``Timeout`` when ``options.timeout_s`` passes first."""
    options = options or CheckOptions()
    enc, air, deadline = _single(a, options)
    if cex.length != enc.lasso.k:
        # Re-embed: pad by unrolling the loop until the lengths agree is not always possible,
        # so encode at the counterexample's own length.
        deadline = time.monotonic() + options.timeout_s
        ms = measure(air)
        window = cex.length + ms.span + 2 + min(ms.unbounded, 4) * cex.length
        lasso = Lasso(cex.length, _widths([a]), min(ms.depth, cex.length), deadline)
        enc = _Encoding(
            lasso, PropEncoder(lasso, ExprEncoder(lasso), window, options.unmarked_strong), False
        )
    fa: BoolLike = enc.props.assertion(air.prop, _disables(air, None, options)[0])
    s = _solver(enc, deadline)
    lasso = enc.lasso
    s.add(lasso.loop == cex.loop_start)
    for name, vs in lasso.vars.items():
        values = cex.signals.get(name, [0] * lasso.k)
        for t in range(lasso.k):
            s.add(vs[t] == values[t])
    r = s.check()
    if r == z3.unknown:  # the time limit, not the trace: a loaded machine, never a verdict
        raise Timeout(f"the trace was not checked within {options.timeout_s} s")
    if r != z3.sat:
        raise SvaError("unsupported", "the trace violates the lasso's history closure")
    return bool(z3.is_true(s.model().eval(to_z3(fa), model_completion=True)))
