"""A proof that ``G a`` implies ``G b`` on *every* infinite trace, not only on the lassos the
check enumerates: the certificate an ``equivalent`` (or one-way) verdict needs before it is
claimed.

No lasso of length k violating the implication does not mean no trace does: ``G a`` may force a
long prefix before the difference can show (``c == $past(c) + 1`` counts up from 0, so
``c != 45`` fails only at cycle 44), or hold only where a pending obligation is met later than
k. So the implication is checked on a *finite segment* of any trace instead, which
over-approximates every counterexample:

- a counterexample is an infinite trace on which ``G a`` holds and an attempt of ``b`` fails
  at some cycle v. Cut out the segment of N cycles that starts P cycles before v (or at cycle
  0 when v < P): on it, every attempt of ``a`` that starts in the segment holds, and ``b``
  fails at v;
- the trace after the segment is unknown: an attempt of ``a`` is read on the segment followed
  by the letter *top* (every Boolean true: IEEE 1800 Annex F's weak view, which every
  attempt that holds on the full trace passes), ``b``'s on the segment followed by *bottom*
  (no Boolean true: the strong view, which every attempt that fails on the full trace fails);
- the D cycles before the segment (``$past`` history) are free, or all zero when it starts at
  cycle 0 (the values before cycle 0), and a violation in the middle of a trace is placed at
  the P-th cycle, so that the P cycles of ``a`` before it are constrained too.

If no segment satisfies that, no trace violates the implication: it holds in general. If one
does, it may be spurious (its end may be a dead end of ``a``, or its free history a state no
trace reaches), and the lasso check decides nothing beyond its bound. Where the implication
rests on ``a``'s liveness (``s_eventually``, unbounded ranges) the weak view cannot see it, so
no segment certifies it: ``check.py`` says what it does then.
"""

from __future__ import annotations

import z3

from . import ir
from .api import CheckOptions
from .expressions import ExprEncoder
from .horizon import Measure
from .lasso import Lasso, Timeout, mk_and, mk_not, mk_or, to_z3
from .properties import PropEncoder
from .solver import check


def segment(m: Measure) -> tuple[int, int]:
    """(P, N): where a violation in the middle of a trace is placed, and the segment's
    length. Attempts of ``a`` that read the violating attempt's window start within H + D
    cycles of it, either side, and each reads H + D cycles: P = H + D + 1 before it and as
    many after, each with its whole window inside the segment."""
    p = m.span + m.depth + 1
    return p, p + 2 * m.span + m.depth + 2


def implies(
    a: tuple[ir.Prop, ir.Expr | None],
    b: tuple[ir.Prop, ir.Expr | None],
    widths: dict[str, int],
    m: Measure,
    *,
    options: CheckOptions,
    deadline: float,
) -> bool | None:
    """Whether ``G a`` implies ``G b`` on every infinite trace, each given as its property and
    the ``disable iff`` condition to honour: True proved, False not proved (a segment violates
    it), None undecided by ``deadline``. ``m`` measures both."""
    place, length = segment(m)
    history = m.depth
    cycles = history + length
    try:
        lasso = Lasso(cycles, widths, 0, deadline, prefix="segment_")
        # The encoder of the segment followed by top; its dual reads it followed by bottom.
        weak = PropEncoder(
            lasso, ExprEncoder(lasso), cycles + m.span + 4, options.unmarked_strong, cut=cycles
        )
        strong = weak.dual
        holds = mk_and([weak.attempt(a[0], a[1], t) for t in range(history, cycles)])
        fails = [mk_not(strong.attempt(b[0], b[1], t)) for t in range(history, history + place + 1)]
    except (Timeout, RecursionError):
        return None
    anchored = z3.Bool("segment_anchored")
    zeros = [v == 0 for vs in lasso.vars.values() for v in vs[:history]]  # before cycle 0
    s = z3.SolverFor("QF_BV")
    s.add(
        to_z3(holds),
        z3.Implies(anchored, to_z3(mk_and([*zeros, mk_or(fails)]))),
        z3.Implies(z3.Not(anchored), to_z3(fails[-1])),
    )
    r = check(s, deadline)
    return None if r == z3.unknown else r == z3.unsat
