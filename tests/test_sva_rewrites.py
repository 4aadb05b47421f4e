"""Every derived SVA operator against its IEEE 1800 definition, over generated operands.

Each case spells one property two ways, the operator and its rewrite (the LRM's own definition
where it gives one: 16.9 for sequences, 16.12 for properties, Annex F's derived forms), and the
checker must find them ``equivalent``. Operands are drawn by hypothesis from Booleans, nullable
and unbounded repetitions, delays and ranges, so the empty-match rules (16.9.2.1) are exercised
everywhere. Where the front end lowers an operator to its definition (goto, non-consecutive
repetition, ``throughout``, ``within``), a second rewrite that takes a different path through the
checker (explicit unions and concatenations) is checked too.

The examples are derandomised so a run is reproducible; ``SVA_REWRITE_EXAMPLES`` raises their
number for a longer search.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

pytest.importorskip("pyslang")
pytest.importorskip("z3")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifiers.sva.api import CheckOptions, check_equivalence, parse_assertion

WIDTHS = {"a": 1, "b": 1, "c": 1, "d": 1}
JASPER = CheckOptions(timeout_s=120)
IEEE = CheckOptions(unmarked_strong=False, timeout_s=120)
EXAMPLES = int(os.environ.get("SVA_REWRITE_EXAMPLES", "12"))

BOOLS = ["a", "b", "c", "!a", "a && b", "a || c", "b ^ c", "$rose(a)", "1'b1", "1'b0"]

boolean = st.sampled_from(BOOLS)
small = st.integers(0, 2)


def _seq(depth: int, unbounded: bool = True) -> st.SearchStrategy[str]:
    """Sequences over a, b, c: may match empty and (``unbounded``) have unbounded matches."""
    if depth == 0:
        return boolean
    sub = _seq(depth - 1, unbounded)
    forms = [
        boolean,
        st.builds(lambda s, lo, n: f"({s})[*{lo}:{lo + n + (lo == 0)}]", sub, small, small),
        st.builds(lambda x, n, y: f"({x}) ##{n} ({y})", sub, small, sub),
        st.builds(lambda x, lo, n, y: f"({x}) ##[{lo}:{lo + n}] ({y})", sub, small, small, sub),
        st.builds(lambda x, y: f"({x}) or ({y})", sub, sub),
        st.builds(lambda x, y: f"({x}) and ({y})", sub, sub),
        st.builds(lambda x, y: f"({x}) intersect ({y})", sub, sub),
        st.builds(lambda x: f"first_match({x})", sub),
    ]
    if unbounded:
        forms += [
            st.builds(lambda s, lo: f"({s})[*{lo}:$]", boolean, st.integers(0, 1)),
            st.builds(
                lambda b, lo, n: f"({b})[->{lo}:{lo + n}]", boolean, st.integers(1, 2), small
            ),
            st.builds(
                lambda b, lo, n: f"({b})[={lo}:{lo + n + (lo == 0)}]",
                boolean,
                st.integers(0, 2),
                st.integers(0, 1),
            ),
        ]
    return st.one_of(*forms)


seq = _seq(2)
flat_seq = _seq(1)
# The solver is slow to refute "some match is followed by p" over unbounded matches, and to
# match up two unbounded operands of one intersect or and: such operands are kept bounded.
bounded_seq = _seq(2, unbounded=False)
flat_bounded = _seq(1, unbounded=False)
# Sequences that admit an empty match (drawn first where the empty-match rules matter).
nullable = st.one_of(
    st.builds(lambda s, n: f"({s})[*0:{n}]", flat_bounded, st.integers(1, 2)),
    st.builds(lambda b: f"({b})[*]", boolean),
    st.builds(lambda x, y: f"({x})[*0:1] ##1 ({y})[*0:1]", boolean, boolean),
    st.builds(lambda x, s: f"({x})[*0:1] or ({s})", boolean, flat_bounded),
)
# A sequence used as a property must not admit an empty match (IEEE 1800 16.12.2).
prop_seq = st.one_of(
    boolean,
    st.builds(lambda x, n, y: f"{x} ##{n} {y}", boolean, st.integers(1, 2), boolean),
    st.builds(lambda x, lo, y: f"{x} ##[{lo}:{lo + 1}] {y}", boolean, small, boolean),
    st.builds(lambda x, y: f"{x} ##[1:$] {y}", boolean, boolean),
)
prop = st.one_of(
    prop_seq,
    st.builds(lambda s, b: f"({s}) |-> {b}", flat_bounded, boolean),
    st.builds(lambda s, b: f"({s}) |=> {b}", flat_bounded, boolean),
    st.builds(lambda x, b: f"({x})[*] |=> {b}", boolean, boolean),
    st.builds(lambda b: f"s_eventually {b}", boolean),
    st.builds(lambda p: f"not ({p})", prop_seq),
    st.builds(lambda b, q: f"({b}) until ({q})", boolean, boolean),
    st.builds(lambda b: f"nexttime {b}", boolean),
)
# How two sequences are compared: as an antecedent (every match end, and with |=> every empty
# match too) or by "some match from each start" (an existential over unbounded matches is slow
# to refute, so sequences with unbounded operands are compared as antecedents only).
UNIVERSAL = ["({S}) |-> d", "({S}) |=> d"]
EXISTENTIAL = ["({S}) #-# d"]
mode = st.sampled_from([JASPER, IEEE])

Pair = tuple[str, str]
Rewrite = Callable[[st.DataObject], Pair]


def _in_context(data: st.DataObject, left: str, right: str) -> Pair:
    bounded = "$" not in left + right and "->" not in left + right and "=" not in left + right
    ctx = data.draw(st.sampled_from(UNIVERSAL + EXISTENTIAL * bounded), label="context")
    return ctx.replace("{S}", left), ctx.replace("{S}", right)


def _union(parts: list[str]) -> str:
    return " or ".join(f"({p})" for p in parts)


# ---------------------------------------------------------------------------------------------
# Sequence operators (16.9).


def delay_range(data: st.DataObject) -> Pair:
    """``x ##[m:n] y`` is the union of ``x ##k y`` for k in m..n (16.9.2)."""
    x, y = data.draw(flat_seq), data.draw(flat_bounded)
    lo, hi = data.draw(small), data.draw(small)
    lo, hi = min(lo, hi), max(lo, hi)
    ranged = f"({x}) ##[{lo}:{hi}] ({y})"
    return _in_context(data, ranged, _union([f"({x}) ##{k} ({y})" for k in range(lo, hi + 1)]))


def delay_as_repetition(data: st.DataObject) -> Pair:
    """``x ##[m:n] y`` = ``x ##1 1'b1[*m-1:n-1] ##1 y`` for m >= 1, and ``##[m:$]`` likewise
    (Annex F.4.2); ``##[0:n]`` is ``##0`` or ``##[1:n]``."""
    x, y = data.draw(flat_bounded), data.draw(flat_bounded)
    lo = data.draw(small)
    hi = data.draw(st.one_of(st.none(), st.integers(max(lo, 1), 3)))
    top = "$" if hi is None else str(hi)
    ranged = f"({x}) ##[{lo}:{top}] ({y})"
    rest = "$" if hi is None else str(hi - 1)
    spelled = f"({x}) ##1 1'b1[*{max(lo, 1) - 1}:{rest}] ##1 ({y})"
    if lo == 0:
        spelled = f"(({x}) ##0 ({y})) or ({spelled})"
    return _in_context(data, ranged, spelled)


def leading_delay(data: st.DataObject) -> Pair:
    """A leading ``##[m:n] s`` (m >= 1) is ``1'b1 ##[m:n] s``; a leading ``##0 s`` is s
    (16.9.2.1: ``empty ##1 s`` = ``##0 s``, and Annex F's ``##1`` concatenates), so
    ``##[0:n] s`` is ``s or ##[1:n] s``."""
    s = data.draw(flat_seq)
    lo, n = data.draw(small), data.draw(st.integers(1, 2))
    if lo:
        return _in_context(
            data, f"b ##1 (##[{lo}:{lo + n}] ({s}))", f"b ##1 (1'b1 ##[{lo}:{lo + n}] ({s}))"
        )
    return _in_context(data, f"b ##1 (##[0:{n}] ({s}))", f"b ##1 (({s}) or (##[1:{n}] ({s})))")


def repetition_range(data: st.DataObject) -> Pair:
    """``s[*m:n]`` is the union of ``s[*k]``, and ``s[*k]`` is k copies joined by ``##1``."""
    s = data.draw(st.one_of(nullable, flat_seq))
    lo, hi = sorted((data.draw(small), data.draw(st.integers(1, 3))))

    def copies(k: int) -> str:
        return "1'b1[*0]" if k == 0 else " ##1 ".join(f"({s})" for _ in range(k))

    return _in_context(data, f"({s})[*{lo}:{hi}]", _union([copies(k) for k in range(lo, hi + 1)]))


def repetition_unbounded(data: st.DataObject) -> Pair:
    """``s[*m:$]`` = ``s[*m] ##1 s[*0:$]`` (m >= 1); ``s[*]`` = ``s[*0:$]``, ``s[+]`` =
    ``s[*1:$]`` (16.9.2)."""
    s = data.draw(st.one_of(nullable, flat_bounded))
    form = data.draw(st.sampled_from(["star", "plus", "split"]))
    if form == "star":
        return _in_context(data, f"({s})[*]", f"({s})[*0] or (({s})[*1:$])")
    if form == "plus":
        return _in_context(data, f"({s})[+]", f"({s}) ##1 (({s})[*0:$])")
    m = data.draw(st.integers(1, 2))
    return _in_context(data, f"({s})[*{m}:$]", f"({s})[*{m}] ##1 (({s})[*0:$])")


def goto(data: st.DataObject) -> Pair:
    """``b[->m:n]`` = ``(!b[*0:$] ##1 b)[*m:n]`` (16.9.2), and an explicit union of chains
    of single gotos."""
    b = data.draw(boolean)
    lo = data.draw(st.integers(1, 2))
    hi = lo + data.draw(st.integers(0, 1))
    one = f"(!({b}))[*0:$] ##1 ({b})"
    if data.draw(st.booleans(), label="explicit"):
        chains = [" ##1 ".join(f"({one})" for _ in range(k)) for k in range(lo, hi + 1)]
        return _in_context(data, f"({b})[->{lo}:{hi}]", _union(chains))
    return _in_context(data, f"({b})[->{lo}:{hi}]", f"({one})[*{lo}:{hi}]")


def nonconsecutive(data: st.DataObject) -> Pair:
    """``b[=m:n]`` = ``b[->m:n] ##1 !b[*0:$]`` (16.9.2), and spelled without goto."""
    b = data.draw(boolean)
    lo = data.draw(st.integers(0, 2))
    hi = lo + data.draw(st.integers(0 if lo else 1, 1))
    tail = f"(!({b}))[*0:$]"
    if lo >= 1 and data.draw(st.booleans(), label="explicit"):
        one = f"({tail} ##1 ({b}))"
        spelled = f"({one}[*{lo}:{hi}]) ##1 {tail}"
        return _in_context(data, f"({b})[={lo}:{hi}]", spelled)
    if lo == 0:
        spelled = f"{tail} or ((({b})[->1:{hi}]) ##1 {tail})"
        return _in_context(data, f"({b})[={lo}:{hi}]", spelled)
    return _in_context(data, f"({b})[={lo}:{hi}]", f"(({b})[->{lo}:{hi}]) ##1 {tail}")


def throughout(data: st.DataObject) -> Pair:
    """``b throughout s`` = ``b[*0:$] intersect s`` (16.9.9); for ``x ##n y`` also spelled
    cycle by cycle."""
    b = data.draw(boolean)
    if data.draw(st.booleans(), label="explicit"):
        x, y, n = data.draw(boolean), data.draw(boolean), data.draw(st.integers(1, 3))
        middle = f" ##1 ({b})[*{n - 1}]" if n > 1 else ""
        spelled = f"(({b}) && ({x})){middle} ##1 (({b}) && ({y}))"
        return _in_context(data, f"({b}) throughout (({x}) ##{n} ({y}))", spelled)
    s = data.draw(flat_seq)
    return _in_context(data, f"({b}) throughout ({s})", f"(({b})[*0:$]) intersect ({s})")


def within(data: st.DataObject) -> Pair:
    """``s1 within s2`` = ``(1[*0:$] ##1 s1 ##1 1[*0:$]) intersect s2`` (16.9.10); a Boolean
    within ``y ##1 z`` also as the union of its two placements."""
    if data.draw(st.booleans(), label="explicit"):
        x, y, z = data.draw(boolean), data.draw(boolean), data.draw(boolean)
        spelled = f"((({x}) && ({y})) ##1 ({z})) or (({y}) ##1 (({x}) && ({z})))"
        return _in_context(data, f"({x}) within (({y}) ##1 ({z}))", spelled)
    s1, s2 = data.draw(flat_seq), data.draw(flat_bounded)
    anyc = "1'b1[*0:$]"
    spelled = f"({anyc} ##1 ({s1}) ##1 {anyc}) intersect ({s2})"
    return _in_context(data, f"({s1}) within ({s2})", spelled)


def seq_and(data: st.DataObject) -> Pair:
    """``s1 and s2`` = ``((s1 ##1 1[*0:$]) intersect s2) or (s1 intersect (s2 ##1 1[*0:$]))``
    (Annex F.4.2) for operands without empty matches."""
    nonempty = st.one_of(
        boolean,
        st.builds(lambda x, n, y: f"({x}) ##{n} ({y})", boolean, small, flat_bounded),
        st.builds(lambda x, lo: f"({x})[*{lo}:$]", boolean, st.integers(1, 2)),
        st.builds(lambda x, lo, n: f"({x})[*{lo}:{lo + n}]", boolean, st.integers(1, 2), small),
    )
    s1, s2 = data.draw(nonempty), data.draw(nonempty)
    tail = "##1 1'b1[*0:$]"
    spelled = f"((({s1}) {tail}) intersect ({s2})) or (({s1}) intersect (({s2}) {tail}))"
    return _in_context(data, f"({s1}) and ({s2})", spelled)


def or_distributes(data: st.DataObject) -> Pair:
    """``(s1 or s2) intersect s3`` = ``(s1 intersect s3) or (s2 intersect s3)``."""
    s1, s2, s3 = data.draw(flat_seq), data.draw(flat_seq), data.draw(flat_bounded)
    return _in_context(
        data,
        f"(({s1}) or ({s2})) intersect ({s3})",
        f"(({s1}) intersect ({s3})) or (({s2}) intersect ({s3}))",
    )


def first_match_goto(data: st.DataObject) -> Pair:
    """``first_match(b[->1])`` = ``b[->1]``: a single goto has one match per start."""
    b = data.draw(boolean)
    return _in_context(data, f"first_match(({b})[->1])", f"({b})[->1]")


def sampled_values(data: st.DataObject) -> Pair:
    """``$rose``, ``$fell``, ``$stable``, ``$changed`` of a bit by ``$past`` (16.9.3)."""
    x = data.draw(st.sampled_from(["a", "b", "c"]))
    fn, spelled = data.draw(
        st.sampled_from(
            [
                ("$rose", f"{x} && !$past({x})"),
                ("$fell", f"!{x} && $past({x})"),
                ("$stable", f"{x} == $past({x})"),
                ("$changed", f"{x} != $past({x})"),
            ]
        )
    )
    return _in_context(data, f"{fn}({x})", spelled)


# ---------------------------------------------------------------------------------------------
# Property operators (16.12).


def non_overlapped_implication(data: st.DataObject) -> Pair:
    """``s |=> p`` = ``(s ##1 1'b1) |-> p`` (16.12.7), empty matches of s included."""
    s, p = data.draw(st.one_of(nullable, seq)), data.draw(prop)
    return f"({s}) |=> ({p})", f"(({s}) ##1 1'b1) |-> ({p})"


def non_overlapped_followed_by(data: st.DataObject) -> Pair:
    """``s #=# p`` = ``(s ##1 1'b1) #-# p`` (16.12.9)."""
    s, p = data.draw(st.one_of(nullable, bounded_seq)), data.draw(prop)
    return f"({s}) #=# ({p})", f"(({s}) ##1 1'b1) #-# ({p})"


def followed_by(data: st.DataObject) -> Pair:
    """``s #-# p`` = ``not (s |-> not p)`` and ``s #=# p`` = ``not (s |=> not p)`` (16.12.9)."""
    s, p = data.draw(st.one_of(nullable, bounded_seq)), data.draw(prop)
    if data.draw(st.booleans(), label="overlapped"):
        return f"({s}) #-# ({p})", f"not (({s}) |-> not ({p}))"
    return f"({s}) #=# ({p})", f"not (({s}) |=> not ({p}))"


def antecedent_or(data: st.DataObject) -> Pair:
    """``(s1 or s2) |-> p`` = ``(s1 |-> p) and (s2 |-> p)`` (and likewise for ``|=>``)."""
    s1, s2, p = data.draw(st.one_of(nullable, flat_seq)), data.draw(flat_seq), data.draw(prop)
    op = data.draw(st.sampled_from(["|->", "|=>"]))
    return f"(({s1}) or ({s2})) {op} ({p})", f"(({s1}) {op} ({p})) and (({s2}) {op} ({p}))"


def implies(data: st.DataObject) -> Pair:
    """``p implies q`` = ``(not p) or q`` (16.12.8)."""
    p, q = data.draw(prop), data.draw(prop)
    return f"({p}) implies ({q})", f"(not ({p})) or ({q})"


def iff(data: st.DataObject) -> Pair:
    """``p iff q`` = ``(p implies q) and (q implies p)`` (16.12.8)."""
    p, q = data.draw(prop), data.draw(prop)
    return f"({p}) iff ({q})", f"(({p}) implies ({q})) and (({q}) implies ({p}))"


def if_else(data: st.DataObject) -> Pair:
    """``if (b) p else q`` = ``(b |-> p) and (!b |-> q)``; without else, ``b |-> p``
    (16.12.10)."""
    b, p, q = data.draw(boolean), data.draw(prop), data.draw(prop)
    if data.draw(st.booleans(), label="else"):
        return f"if ({b}) ({p}) else ({q})", f"(({b}) |-> ({p})) and (!({b}) |-> ({q}))"
    return f"if ({b}) ({p})", f"({b}) |-> ({p})"


def nexttime(data: st.DataObject) -> Pair:
    """``nexttime[n] p`` and ``s_nexttime[n] p`` = ``1'b1 ##n 1'b1 |-> p`` on infinite traces
    (16.12.10)."""
    p, n = data.draw(prop), data.draw(st.integers(0, 3))
    op = data.draw(st.sampled_from(["nexttime", "s_nexttime"]))
    return f"{op}[{n}] ({p})", f"(1'b1 ##{n} 1'b1) |-> ({p})"


def always_ranges(data: st.DataObject) -> Pair:
    """``always [m:n] p`` / ``s_always [m:n] p`` = the conjunction of ``nexttime[k] p``;
    ``always [m:$] p`` = ``nexttime[m] always p`` (16.12.11)."""
    p, lo = data.draw(prop), data.draw(small)
    hi = data.draw(st.one_of(st.none(), st.integers(lo, lo + 2)))
    if hi is None:
        return f"always [{lo}:$] ({p})", f"nexttime[{lo}] (always ({p}))"
    op = data.draw(st.sampled_from(["always", "s_always"]))
    spelled = " and ".join(f"(nexttime[{k}] ({p}))" for k in range(lo, hi + 1))
    return f"{op} [{lo}:{hi}] ({p})", spelled


def eventually_ranges(data: st.DataObject) -> Pair:
    """``eventually [m:n] p`` = ``not s_always [m:n] not p``; ``s_eventually [m:n] p`` = the
    disjunction of ``nexttime[k] p``; ``s_eventually [m:$] p`` = ``s_nexttime[m] s_eventually
    p``; ``s_eventually p`` = ``not always not p`` (16.12.13)."""
    p, lo = data.draw(prop), data.draw(small)
    hi = lo + data.draw(small)
    form = data.draw(st.sampled_from(["weak", "strong", "unbounded", "plain"]))
    if form == "weak":
        return f"eventually [{lo}:{hi}] ({p})", f"not (s_always [{lo}:{hi}] (not ({p})))"
    if form == "strong":
        spelled = " or ".join(f"(nexttime[{k}] ({p}))" for k in range(lo, hi + 1))
        return f"s_eventually [{lo}:{hi}] ({p})", spelled
    if form == "unbounded":
        return f"s_eventually [{lo}:$] ({p})", f"s_nexttime[{lo}] (s_eventually ({p}))"
    return f"s_eventually ({p})", f"not (always (not ({p})))"


def until_family(data: st.DataObject) -> Pair:
    """The until family by its definitions and dualities (16.12.12): ``p until q`` =
    ``(p s_until q) or always p``; ``p s_until q`` = ``(p until q) and s_eventually q``;
    ``p until_with q`` = ``p until (p and q)`` = ``not ((not q) s_until (not p))``;
    ``p s_until_with q`` = ``p s_until (p and q)``; ``p until q`` = ``not ((not q)
    s_until_with (not p))``; ``always p`` = ``p until 1'b0``; ``s_eventually q`` = ``1'b1
    s_until q``."""
    p, q = data.draw(prop), data.draw(prop)
    p_, q_ = f"({p})", f"({q})"
    return data.draw(
        st.sampled_from(
            [
                (f"{p_} until {q_}", f"({p_} s_until {q_}) or (always {p_})"),
                (f"{p_} s_until {q_}", f"({p_} until {q_}) and (s_eventually {q_})"),
                (f"{p_} until_with {q_}", f"{p_} until ({p_} and {q_})"),
                (f"{p_} until_with {q_}", f"not ((not {q_}) s_until (not {p_}))"),
                (f"{p_} s_until_with {q_}", f"{p_} s_until ({p_} and {q_})"),
                (f"{p_} until {q_}", f"not ((not {q_}) s_until_with (not {p_}))"),
                (f"always {p_}", f"{p_} until 1'b0"),
                (f"s_eventually {q_}", f"1'b1 s_until {q_}"),
            ]
        ),
        label="law",
    )


def strong_eventually(data: st.DataObject) -> Pair:
    """``strong(##[0:$] b)`` = ``s_eventually b`` for a Boolean b; ``strong(s)`` =
    ``s #-# 1'b1`` (a match exists)."""
    if data.draw(st.booleans(), label="eventually"):
        b = data.draw(boolean)
        return f"strong(##[0:$] ({b}))", f"s_eventually ({b})"
    s = data.draw(prop_seq)
    return f"strong({s})", f"({s}) #-# 1'b1"


def negation(data: st.DataObject) -> Pair:
    """``not not p`` = p; ``p or q`` = ``not (not p and not q)``."""
    p, q = data.draw(prop), data.draw(prop)
    if data.draw(st.booleans(), label="double"):
        return f"not (not ({p}))", p
    return f"({p}) or ({q})", f"not ((not ({p})) and (not ({q})))"


REWRITES: list[Rewrite] = [
    delay_range,
    delay_as_repetition,
    leading_delay,
    repetition_range,
    repetition_unbounded,
    goto,
    nonconsecutive,
    throughout,
    within,
    seq_and,
    or_distributes,
    first_match_goto,
    sampled_values,
    non_overlapped_implication,
    non_overlapped_followed_by,
    followed_by,
    antecedent_or,
    implies,
    iff,
    if_else,
    nexttime,
    always_ranges,
    eventually_ranges,
    until_family,
    strong_eventually,
    negation,
]


def _free(text: str) -> object:
    return parse_assertion(text, None, None, WIDTHS)


@pytest.mark.parametrize("rewrite", REWRITES, ids=lambda r: r.__name__)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_rewrite_is_equivalent(rewrite: Rewrite, data: st.DataObject) -> None:
    left, right = rewrite(data)
    options = data.draw(mode, label="mode")
    a, b = _free(left), _free(right)
    result = check_equivalence(a, b, options)  # type: ignore[arg-type]
    assert result.verdict == "equivalent", (left, right, options, result)


# ---------------------------------------------------------------------------------------------
# disable iff, honoured as IEEE 1800 does (ignore_disable_iff=False).

STRICT = CheckOptions(ignore_disable_iff=False, timeout_s=120)
PROPERTY_REWRITES = REWRITES[REWRITES.index(non_overlapped_implication) :]


@pytest.mark.parametrize("rewrite", PROPERTY_REWRITES, ids=lambda r: r.__name__)
@settings(
    max_examples=EXAMPLES // 2,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_rewrite_holds_under_disable_iff(rewrite: Rewrite, data: st.DataObject) -> None:
    """An IEEE identity holds on every word, truncated ones included, so it survives the same
    disable iff on both sides (this checks the top/bottom letters of truncation)."""
    left, right = rewrite(data)
    a, b = _free(f"disable iff (d) {left}"), _free(f"disable iff (d) {right}")
    result = check_equivalence(a, b, STRICT)  # type: ignore[arg-type]
    assert result.verdict == "equivalent", (left, right, result)


# Negation complements a truncated word (its top letters read as bottom): drawn first.
negated = st.one_of(
    st.builds(lambda p: f"not ({p})", prop_seq),
    st.builds(lambda b, p: f"if ({b}) (not ({p})) else ({p})", boolean, prop_seq),
    st.builds(lambda p, q: f"({p}) implies ({q})", prop_seq, prop),
    prop,
)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
@given(p=negated)
def test_disable_iff_bounds(p: str) -> None:
    """A condition that never holds changes nothing; one that always holds disables every
    attempt (the all-top word satisfies each of these properties); a free one only weakens."""
    assert _check(f"disable iff (1'b0) {p}", p) == "equivalent"
    assert _check(f"disable iff (1'b1) {p}", "1'b1") == "equivalent"
    assert _check(p, f"disable iff (d) {p}") in ("equivalent", "a_implies_b")


def _check(left: str, right: str) -> str:
    result = check_equivalence(_free(left), _free(right), STRICT)  # type: ignore[arg-type]
    return result.verdict
