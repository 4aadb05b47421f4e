"""Equivalence, tautology and vacuity checks: both implication directions as z3 queries over one
lasso, verdicts, counterexamples minimised to few toggles, a per-check time limit, and the
decided verdicts of recent pairs kept per process (``functools.lru_cache``, as the parses are:
references repeat across a batch and an epoch)."""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Literal

import z3

from . import certify, ir
from .api import Assertion, CheckOptions, CheckResult, Counterexample, SvaError, Verdict
from .lasso import BoolLike, Lasso, Timeout, mk_not, to_z3
from .solver import Encoding, check, disables, encode, ir_of, solver, widths

MINIMISE_ROUNDS = 24
CACHE_SIZE = 4096


def _counterexamples(
    s: z3.Solver, lasso: Lasso, holds: Literal["a", "b"], deadline: float, spent: float
) -> tuple[Counterexample, Counterexample]:
    """The trace of the solver's model as found, and the same made quiet: signals start at 0
    and keep their value, except where the difference needs a toggle (greedy, by unsat cores).
    The first is read before the quieting's checks replace the solver's model."""
    model = s.model()
    found = _read(model, lasso, holds)
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
        r = check(s, budget, *active)
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
    return found, _read(model, lasso, holds)


def _read(model: z3.ModelRef, lasso: Lasso, holds: Literal["a", "b"]) -> Counterexample:
    loop = model.eval(lasso.loop, model_completion=True).as_long()
    signals = {
        name: [model.eval(v, model_completion=True).as_long() for v in vs]
        for name, vs in sorted(lasso.vars.items())
    }
    return Counterexample(length=lasso.k, loop_start=loop, signals=signals, holds=holds)


def _separates(
    a: ir.AssertionIR,
    b: ir.AssertionIR,
    sizes: dict[str, int],
    cex: Counterexample,
    options: CheckOptions,
) -> bool:
    """Whether ``cex``, checked again on each property alone, holds for the one it names and
    fails the other. A trace the pair's encoding accepted once failed this (the single
    property's encoding refused its history at the loop: seen under load, not reproduced), so
    no counterexample is shown before it passes."""
    try:
        ha = _holds_on(a, sizes, cex, options)
        hb = _holds_on(b, sizes, cex, options)
    except (SvaError, Timeout):
        return False
    return ha != hb and ha == (cex.holds == "a")


class _Undecided(Exception):
    """The check ran out of time: raised through the cache, which keeps no exception, so a
    pair that timed out is checked again next time."""

    def __init__(self, result: CheckResult) -> None:
        super().__init__(result.verdict)
        self.result = result


def check_pair(a: Assertion, b: Assertion, options: CheckOptions) -> CheckResult:
    """Compare ``G a`` with ``G b`` (see ``api.check_equivalence``)."""
    sizes = tuple(sorted(widths([a, b]).items()))
    try:
        return _decided(ir_of(a), ir_of(b), sizes, options)
    except _Undecided as undecided:
        return undecided.result


@lru_cache(maxsize=CACHE_SIZE)
def _decided(
    a: ir.AssertionIR, b: ir.AssertionIR, sizes: tuple[tuple[str, int], ...], options: CheckOptions
) -> CheckResult:
    result = _check_pair(a, b, dict(sizes), options)
    if result.verdict == "unknown":
        raise _Undecided(result)
    return result


def _check_pair(
    a: ir.AssertionIR, b: ir.AssertionIR, sizes: dict[str, int], options: CheckOptions
) -> CheckResult:
    start = time.monotonic()
    deadline = start + options.timeout_s
    da, db = disables(a, b, options)
    try:
        enc = encode([a, b], sizes, options, deadline)
        fa = enc.props.assertion(a.prop, da)
        fb = enc.props.assertion(b.prop, db)
    except Timeout:
        return CheckResult("unknown", (), time.monotonic() - start, "time limit (encoding)")
    except RecursionError:
        return CheckResult("unknown", (), time.monotonic() - start, "nesting too deep")
    s = solver(enc, deadline)
    outcomes: list[z3.CheckSatResult] = []
    cexs: list[Counterexample] = []
    for hold, fail, holds in ((fa, fb, "a"), (fb, fa, "b")):
        s.push()
        s.add(to_z3(hold), to_z3(mk_not(fail)))
        t0 = time.monotonic()
        r = check(s, deadline)
        outcomes.append(r)
        if r == z3.sat:
            spent = time.monotonic() - t0
            found, cex = _counterexamples(s, enc.lasso, holds, deadline, spent)  # type: ignore[arg-type]
            if not _separates(a, b, sizes, cex, options):
                cex = found
            if not _separates(a, b, sizes, cex, options):
                s.pop()
                detail = "a counterexample failed its check on each property alone"
                return CheckResult("unknown", (), time.monotonic() - start, detail)
            cexs.append(cex)
        s.pop()
    if z3.unknown in outcomes:
        return CheckResult("unknown", (), time.monotonic() - start, "time limit (solver)")
    a_not_b, b_not_a = outcomes
    # A direction with no counterexample on the lassos is claimed only once it is proved for
    # every trace (certify.py), or, where the proof cannot see the pair's liveness, on the
    # bound the pair needs (README: "What is sound and what is bounded").
    m = enc.bound.measure
    bounded: list[str] = []
    for failed, premise, conclusion, name in (
        (a_not_b, (a.prop, da), (b.prop, db), "the answer implies the reference"),
        (b_not_a, (b.prop, db), (a.prop, da), "the reference implies the answer"),
    ):
        if failed != z3.unsat or a == b:
            continue
        proved = certify.implies(premise, conclusion, sizes, m, options=options, deadline=deadline)
        if proved is None:
            return CheckResult("unknown", (), time.monotonic() - start, "time limit (proof)")
        if proved:
            continue
        if not m.unbounded:
            raise SvaError(
                "horizon",
                f"no trace of up to {enc.lasso.k} cycles tells the two properties apart, but "
                f"that {name} could not be proved for longer traces; this service does not "
                "claim what it has not checked",
            )
        bounded.append(name)
    verdict: Verdict
    if a_not_b == z3.unsat and b_not_a == z3.unsat:
        verdict = "equivalent"
    elif a_not_b == z3.unsat:
        verdict = "a_implies_b"
    elif b_not_a == z3.unsat:
        verdict = "b_implies_a"
    else:
        verdict = "different"
    detail = f"lasso length {enc.lasso.k}"
    if bounded:
        detail += f"; on lassos of that length only (liveness): {', '.join(bounded)}"
    return CheckResult(verdict, tuple(cexs), time.monotonic() - start, detail)


def _single(a: Assertion, options: CheckOptions) -> tuple[Encoding, ir.AssertionIR, float]:
    deadline = time.monotonic() + options.timeout_s
    return encode([ir_of(a)], widths([a]), options, deadline), ir_of(a), deadline


def tautology(a: Assertion, options: CheckOptions) -> bool | None:
    """``G a`` holds on every lasso (None: time limit)."""
    try:
        enc, air, deadline = _single(a, options)
        fa = enc.props.assertion(air.prop, disables(air, None, options)[0])
    except (Timeout, RecursionError):
        return None
    s = solver(enc, deadline)
    s.add(to_z3(mk_not(fa)))
    r = check(s, deadline)
    return None if r == z3.unknown else r == z3.unsat


def vacuous(a: Assertion, options: CheckOptions) -> bool | None:
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
    s = solver(enc, deadline)
    for m in matches:
        s.push()
        s.add(to_z3(m))
        r = check(s, deadline)
        s.pop()
        if r == z3.unknown:
            return None
        if r == z3.sat:
            return False
    return True


def holds_on(a: Assertion, cex: Counterexample, options: CheckOptions | None = None) -> bool:
    """Whether ``G a`` holds on the lasso ``cex`` (re-asserting the trace in z3); raises
    ``Timeout`` when ``options.timeout_s`` passes first."""
    return _holds_on(ir_of(a), widths([a]), cex, options or CheckOptions())


def _holds_on(
    air: ir.AssertionIR, sizes: dict[str, int], cex: Counterexample, options: CheckOptions
) -> bool:
    deadline = time.monotonic() + options.timeout_s
    enc = encode([air], sizes, options, deadline, k=cex.length)
    fa: BoolLike = enc.props.assertion(air.prop, disables(air, None, options)[0])
    s = solver(enc, deadline)
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
