"""The checker's shared back end: how long a lasso a set of assertions needs (and the refusal
when that is more than the service checks), their encoding over one lasso, and a z3 solver over
it with the check's deadline. ``check.py`` (verdicts), ``strength.py`` and ``hedges.py``
(credit judgements) all build their queries from here."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import z3

from . import ir
from .api import Assertion, CheckOptions, SvaError
from .expressions import ExprEncoder
from .horizon import Measure, measure
from .lasso import Lasso
from .properties import PropEncoder

K_MIN = 6
K_LIMIT = 64
"""The longest lasso the service checks. A pair that needs a longer one is refused (``SvaError``
kind ``horizon``), never judged on a shorter one: see ``verifiers/sva/README.md``."""


@dataclass(frozen=True)
class Bound:
    """What a set of assertions needs: lasso length ``k``, sequence ``window`` and history
    ``depth`` (from their ``measure``)."""

    k: int
    window: int
    depth: int
    measure: Measure


def needed(m: Measure) -> int:
    """The lasso length a pair of this measure needs (README, "What is sound and what is
    bounded"): 2H cycles hold an attempt and a violation that shows within H cycles of it, plus
    room for a loop; 2D more because the first D cycles read the all-zero values before cycle
    0 (they cannot repeat on the loop) and the D cycles before the loop copy its last D."""
    return max(K_MIN, 2 * m.span + 2 * m.depth + 4)


def bound(irs: Sequence[ir.AssertionIR], k: int | None = None) -> Bound:
    """The bound of ``irs`` checked together (at lasso length ``k`` when given, else at the
    length they need). Raises ``SvaError("horizon")`` when they need more than ``K_LIMIT``."""
    m = measure(*irs)
    if k is None:
        k = needed(m)
        if k > K_LIMIT:
            raise SvaError(
                "horizon",
                f"the properties need a horizon of {k} cycles (temporal span {m.span}, $past "
                f"depth {m.depth}); this service checks up to {K_LIMIT}",
            )
    window = k + m.span + 2 + min(m.unbounded, 4) * k
    return Bound(k, window, min(m.depth, k), m)


@dataclass
class Encoding:
    """One lasso, the property encoder over it, and the bound that sized it."""

    lasso: Lasso
    props: PropEncoder
    bound: Bound


def encode(
    irs: Sequence[ir.AssertionIR],
    widths: dict[str, int],
    options: CheckOptions,
    deadline: float,
    k: int | None = None,
) -> Encoding:
    """The lasso ``irs`` need (or of length ``k``) and an encoder for their properties."""
    b = bound(irs, k)
    lasso = Lasso(b.k, widths, b.depth, deadline)
    props = PropEncoder(lasso, ExprEncoder(lasso), b.window, options.unmarked_strong)
    return Encoding(lasso, props, b)


def solver(enc: Encoding, deadline: float) -> z3.Solver:
    """A bit-vector solver holding the lasso's constraints."""
    s = z3.SolverFor("QF_BV")
    s.set("timeout", max(1, int((deadline - time.monotonic()) * 1000)))
    s.add(*enc.lasso.constraints)
    return s


def check(s: z3.Solver, deadline: float, *assumptions: z3.BoolRef) -> z3.CheckSatResult:
    """``s.check`` within what is left of the deadline (``unknown`` once it has passed)."""
    left = deadline - time.monotonic()
    if left <= 0:
        return z3.unknown
    s.set("timeout", max(1, int(left * 1000)))
    return s.check(*assumptions)


def ir_of(a: Assertion) -> ir.AssertionIR:
    """The IR of a parsed assertion (an ``Assertion`` built by hand has none)."""
    if a.ir is None:
        raise SvaError("unsupported", "assertions must come from parse_assertion")
    return a.ir


def widths(asserts: Sequence[Assertion]) -> dict[str, int]:
    """Every signal's width across ``asserts`` (one width per name)."""
    out: dict[str, int] = {}
    for x in asserts:
        for s in x.signals:
            if out.get(s.name, s.width) != s.width:
                raise SvaError("elaboration", f"signal {s.name} has two widths")
            out[s.name] = s.width
    return out


def disables(
    a: ir.AssertionIR, b: ir.AssertionIR | None, options: CheckOptions
) -> tuple[ir.Expr | None, ir.Expr | None]:
    """The ``disable iff`` conditions to honour: none when they are ignored (FVEval strips
    them before its PEC), else each side's own (IEEE 1800)."""
    if b is not None and a.clock != b.clock and "default" not in (a.clock, b.clock):
        raise SvaError("unsupported", f"different clocks: {a.clock} vs {b.clock}")
    if options.ignore_disable_iff:
        return None, None
    return a.disable, None if b is None else b.disable
