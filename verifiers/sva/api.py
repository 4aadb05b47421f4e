"""The SVA property-equivalence checker's public interface (the contract between the checker
and its users: the ``sva`` verifiers and environments). Implementation modules live beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .ir import AssertionIR

Verdict = Literal["equivalent", "a_implies_b", "b_implies_a", "different", "unknown"]
ErrorKind = Literal[
    "syntax", "elaboration", "signal", "unsupported", "too_large", "horizon", "several"
]
Strengthening = Literal[
    "meaningful", "unsatisfiable", "blocks_trigger", "constrains_inputs", "hedge", "unknown"
]
Weakening = Literal["meaningful", "hedge", "unknown"]


class SvaError(ValueError):
    """An assertion that cannot be checked: a syntax or elaboration error (the compiler's
    message), a signal outside the allowed list, a construct the checker does not support
    (reported as such, never guessed), or a pair whose verdict would need a longer horizon
    than the service checks (``horizon``: never judged on a shorter one)."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class Signal:
    """A free signal of the design-free check: its name, width and signedness."""

    name: str
    width: int = 1
    signed: bool = False


@dataclass(frozen=True)
class CheckOptions:
    """Semantic choices and limits.

    ``unmarked_strong``: read a sequence used as a property without ``strong``/``weak`` as strong
    (FVEval/JasperGold's reading, the default) or weak (IEEE 1800). ``timeout_s``: hard limit
    of one check; past it the verdict is ``unknown``. ``ignore_disable_iff``: drop ``disable
    iff`` from both sides (the default, as FVEval strips the text before its PEC: the
    properties are compared as if no attempt were ever disabled); false: honour each side's
    condition as IEEE 1800 does, where an attempt during which it holds neither fails nor
    counts.
    """

    unmarked_strong: bool = True
    timeout_s: float = 5.0
    ignore_disable_iff: bool = True


@dataclass(frozen=True)
class Counterexample:
    """A lasso trace on which exactly one of the two assertions holds: ``signals[name][t]`` is
    the value at cycle t (0 ≤ t < length); cycles from ``length`` on repeat from ``loop_start``."""

    length: int
    loop_start: int
    signals: dict[str, list[int]]
    holds: Literal["a", "b"]

    def to_vcd(self, widths: dict[str, int] | None = None) -> str:
        """The trace as a VCD file (one loop unrolled after the prefix)."""
        from .vcd import render_vcd

        return render_vcd(self, widths)


@dataclass(frozen=True)
class Assertion:
    """A parsed, elaborated assertion, ready to check (``ir`` is the checker's own)."""

    text: str
    signals: tuple[Signal, ...]
    disable_iff: str | None
    ir: AssertionIR | None = field(repr=False, compare=False, default=None)


@dataclass(frozen=True)
class CheckResult:
    """The verdict, a counterexample for each direction that fails, and the time taken."""

    verdict: Verdict
    counterexamples: tuple[Counterexample, ...] = ()
    seconds: float = 0.0
    detail: str = ""


def parse_assertion(
    text: str,
    testbench: str | None = None,
    allowed: set[str] | None = None,
    widths: dict[str, int] | None = None,
) -> Assertion:
    """Parse and elaborate ``text`` (``assert property (...);``, or a bare property) inside
    ``testbench`` (a SystemVerilog module whose signals, widths and parameters it may use), or
    over free signals of the given ``widths`` when there is no testbench.

    Raises SvaError."""
    from .frontend import parse_cached

    return parse_cached(
        text,
        testbench,
        None if allowed is None else frozenset(allowed),
        None if widths is None else tuple(sorted(widths.items())),
    )


def check_equivalence(
    a: Assertion, b: Assertion, options: CheckOptions | None = None
) -> CheckResult:
    """Compare ``G a`` with ``G b`` over free signals on lasso-shaped traces.

    Raises SvaError when the pair cannot be compared (different clocks; ``horizon``: the
    verdict would need a longer lasso than the service checks, or a claim the check cannot
    certify, see ``verifiers/sva/README.md``)."""
    from .check import check_pair

    return check_pair(a, b, options or CheckOptions())


def is_tautology(a: Assertion, options: CheckOptions | None = None) -> bool | None:
    """True when ``a`` holds on every trace (None: undecided within the time limit)."""
    from .check import tautology

    return tautology(a, options or CheckOptions())


def is_vacuous(a: Assertion, options: CheckOptions | None = None) -> bool | None:
    """True when ``a`` is a tautology or every implication in it has an antecedent that never
    matches (None: undecided within the time limit)."""
    from .check import vacuous

    return vacuous(a, options or CheckOptions())


def judge_strengthening(
    a: Assertion, b: Assertion, options: CheckOptions | None = None
) -> Strengthening:
    """For ``a`` that implies ``b`` (verdict ``a_implies_b``): whether it is a meaningful
    strengthening. ``G a => G b`` also holds when ``a`` holds on no trace at all (``1'b0``,
    ``s_eventually 1'b0``), only on traces where ``b`` is never exercised (``a |-> 1'b0``
    against ``a |-> ##1 b`` forbids ``a``), or only on inputs ``b`` leaves free (every signal
    always high implies most references with a positive consequent), so:

    - ``unsatisfiable``: no lasso satisfies ``G a``;
    - ``blocks_trigger``: for some implication of ``b`` no lasso satisfies ``G a`` with that
      implication's antecedent matching and ``b``'s ``disable iff`` condition never holding
      (without implications: no lasso satisfies ``G a`` with the condition off);
    - ``constrains_inputs``: on one of a few random input traces of the signals ``b`` reads
      only in antecedents (fixed by the pair's text, so the judgement is deterministic) ``G b``
      can be met and ``G a`` cannot;
    - ``hedge``: ``a`` with one of its conjuncts removed still implies ``b`` (``hedges.py``
      says what a conjunct is: property ``and``, ``&&`` in a consequent, ``or`` in an
      antecedent, ...): the removed part is surplus guessing, or ``a`` has more than
      ``hedges.MAX_PARTS`` conjuncts;
    - ``meaningful``: none of these; ``unknown``: undecided within the time limit.

    ``a``'s own ``disable iff`` is read as ``options`` says (``b``'s is held off)."""
    from .strength import strengthening

    return strengthening(a, b, options or CheckOptions())


def judge_weakening(a: Assertion, b: Assertion, options: CheckOptions | None = None) -> Weakening:
    """For ``a`` that ``b`` implies (verdict ``b_implies_a``): ``hedge`` when ``a`` with one of
    its disjuncts removed (property ``or``, ``||`` in a consequent, sequence ``or``, ...; see
    ``hedges.py``) is still implied by ``b`` (the removed part is a surplus guess: ``b or c``
    with ``b`` the reference), or ``a`` has more than ``hedges.MAX_PARTS`` disjuncts;
    ``meaningful`` otherwise; ``unknown``: undecided within the time limit."""
    from .hedges import surplus

    hedge = surplus(a, b, options or CheckOptions(), conjunctive=False)
    return "unknown" if hedge is None else "hedge" if hedge else "meaningful"
