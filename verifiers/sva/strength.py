"""When an answer that implies the reference earns credit: ``G a => G b`` also holds when ``a``
holds on no trace (``1'b0``), only on traces where ``b`` is never exercised (``a |-> 1'b0``
against ``a |-> ##1 b``), or only on inputs ``b`` leaves free (``sig_A && sig_B && ...``: every
signal always high implies most references with a positive consequent), or through one part of
a conjunction of guesses (``hedges.py``). None of these is a strengthening of ``b``; each is
found here with the checker's lasso encoding."""

from __future__ import annotations

import random
import time
import zlib
from dataclasses import fields, is_dataclass

import z3

from . import ir
from .api import Assertion, CheckOptions, Strengthening
from .hedges import surplus
from .lasso import Timeout, mk_not, to_z3
from .solver import check, disables, encode, ir_of, solver, widths

INPUT_SAMPLES = 4
"""Random input traces tried per judgement (each costs about one solver call)."""


def _signals(node: object, out: set[str]) -> set[str]:
    """Every signal name under an IR node (the IR is frozen dataclasses all the way down)."""
    if isinstance(node, ir.Sig):
        out.add(node.name)
    elif isinstance(node, tuple):
        for item in node:
            _signals(item, out)
    elif is_dataclass(node):
        for f in fields(node):
            _signals(getattr(node, f.name), out)
    return out


def _split(p: ir.Prop, triggers: set[str], rest: set[str]) -> None:
    """Signals read in antecedents (``|->``/``|=>`` sequences, ``if`` conditions) go to
    ``triggers``, every other signal of ``p`` to ``rest``."""
    if isinstance(p, ir.PImpl) and not p.follows:
        _signals(p.seq, triggers)
        _split(p.prop, triggers, rest)
    elif isinstance(p, ir.PIf):
        _signals(p.cond, triggers)
        for branch in (p.then, p.other):
            if branch is not None:
                _split(branch, triggers, rest)
    elif isinstance(p, ir.PBin | ir.PUntil):
        _split(p.left, triggers, rest)
        _split(p.right, triggers, rest)
    elif isinstance(p, ir.PNot | ir.PNext | ir.PAlways | ir.PEventually):
        _split(p.prop, triggers, rest)
    else:
        _signals(p, rest)


def trigger_inputs(a: ir.AssertionIR) -> frozenset[str]:
    """The signals ``a`` reads only to decide when it is exercised: in antecedents, and in no
    consequent nor its ``disable iff`` condition. ``a`` places no demand on them."""
    triggers: set[str] = set()
    rest = _signals(a.disable, set())
    _split(a.prop, triggers, rest)
    return frozenset(triggers - rest)


def strengthening(a: Assertion, b: Assertion, options: CheckOptions) -> Strengthening:
    """See ``api.judge_strengthening``."""
    air, bir = ir_of(a), ir_of(b)
    deadline = time.monotonic() + options.timeout_s
    da, db = disables(air, bir, options)
    try:
        enc = encode([air, bir], widths([a, b]), options, deadline)
        fa = enc.props.assertion(air.prop, da)
        triggers = enc.props.antecedent_matches(bir.prop)
        # A reset that stays asserted disables every attempt of b: b is exercised only while
        # its condition is off (held off at every cycle of the lasso, so on the whole trace).
        quiet = (
            []
            if bir.disable is None
            else [mk_not(enc.props.exprs.truth(bir.disable, t)) for t in range(enc.lasso.k)]
        )
        # Signals b leaves free: those it only reacts to, and those it does not read at all.
        unread = {x.name for x in a.signals} - {x.name for x in b.signals}
        inputs = sorted(trigger_inputs(bir) | unread)
        fb = enc.props.assertion(bir.prop, db) if inputs else True
    except (Timeout, RecursionError):
        return "unknown"
    # G a and G b sit behind assumption literals: each query picks what it needs.
    s = solver(enc, deadline)
    use_a, use_b = z3.Bool("__strength_a"), z3.Bool("__strength_b")
    s.add(z3.Implies(use_a, to_z3(fa)), z3.Implies(use_b, to_z3(fb)))
    r = check(s, deadline, use_a)
    if r != z3.sat:
        return "unknown" if r == z3.unknown else "unsatisfiable"
    s.add(*(to_z3(q) for q in quiet))
    for trigger in triggers or ([True] if quiet else []):
        s.push()
        s.add(to_z3(trigger))
        r = check(s, deadline, use_a)
        s.pop()
        if r != z3.sat:
            return "unknown" if r == z3.unknown else "blocks_trigger"
    # Input traces of the signals b leaves free, drawn at random but fixed by the pair's
    # text: wherever b can be met, a must be met too. The last ``depth`` cycles stay free, so
    # that the solver can close the lasso's history whatever was drawn.
    rng = random.Random(zlib.crc32(f"{a.text}\0{b.text}".encode()))
    lasso = enc.lasso
    drawn = range(max(1, lasso.k - lasso.depth))
    for _ in range(INPUT_SAMPLES if inputs else 0):
        s.push()
        s.add(
            *(
                lasso.vars[name][t] == rng.randrange(1 << lasso.widths[name])
                for name in inputs
                for t in drawn
            )
        )
        r = check(s, deadline, use_a)
        if r == z3.unsat:
            r = check(s, deadline, use_b)
            if r == z3.sat:
                r = z3.unsat  # b is met on this input trace, a is not
            elif r == z3.unsat:
                r = z3.sat  # neither can be: the trace tells nothing
        s.pop()
        if r != z3.sat:
            return "unknown" if r == z3.unknown else "constrains_inputs"
    # Several guesses joined by "and": one right guess implies b on its own.
    hedge = surplus(a, b, options, conjunctive=True, deadline=deadline)  # one time limit
    if hedge is None:
        return "unknown"
    return "hedge" if hedge else "meaningful"
