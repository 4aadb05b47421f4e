"""What the SVA checker may claim (issue 38): never "equivalent" beyond what it checked.

Defect 2: the lasso was capped at 40 cycles, so answers that differ from the reference only
later earned 1.0; now a pair that needs a longer lasso is refused (``invalid``, with the horizon
it needs), and a claim the lasso check makes is proved for every trace (``certify.py``) before
it pays. Defect 3: ``$past`` inside ``disable iff`` was not counted when the lasso's history was
sized, so a tautology earned 0.4 through a false counterexample. Each case is also in
``environments/sva/redteam.toml``."""

from __future__ import annotations

import pytest

pytest.importorskip("pyslang")
pytest.importorskip("z3")

from environments.search import Probe
from environments.sva.search import SEARCH, deserves
from verifiers.sva import SvaOptions, extract_assertion, score_pair
from verifiers.sva import ir as sva_ir
from verifiers.sva.api import CheckOptions, SvaError, check_equivalence, is_tautology
from verifiers.sva.api import parse_assertion as parse
from verifiers.sva.horizon import measure
from verifiers.sva.solver import K_LIMIT, ir_of

WIDTHS = {"a": 1, "b": 1, "x": 1, "y": 1, "c": 8, "rst": 1}
IEEE = CheckOptions(ignore_disable_iff=False, timeout_s=60.0)
PATIENT = CheckOptions(timeout_s=60.0)


def _assert(prop: str) -> str:
    return f"assert property (@(posedge clk) {prop});"


def _score(answer: str, reference: str) -> tuple[str, float | None, str]:
    ref = {"assertion": _assert(reference), "widths": WIDTHS}
    score = score_pair(_assert(answer), ref, SvaOptions(timeout_s=60.0))
    return score.status, score.reward, score.detail


# --- defect 2: a difference past the checked horizon -------------------------------------------

LATE = [
    # (answer, reference): each differs from the reference only after more than 40 cycles.
    ("(a |-> ##1 b) or $past(x, 50)", "a |-> ##1 b"),
    ("(a |-> ##1 b) or (x ##1 y[*45] ##1 x)", "a |-> ##1 b"),
    ("a |-> ##[0:100] b", "a |-> s_eventually b"),
]


@pytest.mark.parametrize(("answer", "reference"), LATE)
def test_a_difference_past_the_horizon_is_refused_with_the_horizon(
    answer: str, reference: str
) -> None:
    status, reward, detail = _score(answer, reference)
    assert (status, reward) == ("invalid", 0.0)
    assert "horizon" in detail and f"checks up to {K_LIMIT}" in detail


def test_a_difference_within_the_horizon_is_found() -> None:
    # Needs 58 cycles (> the old cap of 40, within the limit): the bounded answer is stronger.
    got = check_equivalence(
        parse(_assert("a |-> ##[0:27] b"), widths=WIDTHS),
        parse(_assert("a |-> s_eventually b"), widths=WIDTHS),
        PATIENT,
    )
    assert got.verdict == "a_implies_b"
    assert got.counterexamples and got.counterexamples[0].length == 58


def test_a_claim_no_lasso_refutes_but_no_proof_covers_is_refused() -> None:
    # c counts up from 0, so "c never reaches 45" fails at cycle 44 only: no short lasso tells
    # the two apart (none satisfies the counter at all), and the finite-segment proof cannot
    # show the implication; the old check called them equivalent.
    counter = "c == $past(c) + 8'd1"
    status, reward, detail = _score(f"({counter}) && c != 8'd45", counter)
    assert (status, reward) == ("invalid", 0.0)
    assert "could not be proved" in detail


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("a |=> b", "$past(a) |-> b"),  # the same property, shifted by one cycle
        ("a |-> ##1 b ##1 b", "(a |-> ##1 b) and (a |-> ##2 b)"),
        ("(a ##1 b)[*2]", "a ##1 b[*2]"),  # FVEval pec.md: equivalent at the assertion level
        ("$past(x, 3) |-> a", "x |-> ##3 a"),
    ],
)
def test_equivalences_are_proved_not_only_bounded(a: str, b: str) -> None:
    got = check_equivalence(parse(_assert(a), widths=WIDTHS), parse(_assert(b), widths=WIDTHS))
    assert got.verdict == "equivalent"
    assert "only" not in got.detail  # proved for every trace, not on the lassos alone


def test_a_liveness_claim_says_it_rests_on_the_lasso() -> None:
    got = check_equivalence(
        parse(_assert("a |-> s_eventually b"), widths=WIDTHS),
        parse(_assert("a |-> strong(##[0:$] b)"), widths=WIDTHS),
    )
    assert got.verdict == "equivalent"
    assert "on lassos of that length only (liveness)" in got.detail


# --- defect 3: $past in disable iff ------------------------------------------------------------


def test_past_in_disable_iff_sizes_the_history() -> None:
    tautology = parse(_assert("disable iff ($past(a)) a |=> !b"), widths=WIDTHS)
    assert measure(ir_of(tautology)).depth == 1
    assert is_tautology(tautology, IEEE) is True


def test_a_tautology_through_past_in_disable_iff_earns_nothing() -> None:
    status, reward, _ = _score("disable iff ($past(a)) a |=> !b", "a |=> !b")
    assert (status, reward) == ("ok", 0.0)


def test_every_expression_counts_towards_the_depth() -> None:
    for prop, depth in [
        ("disable iff ($past(rst, 3)) a |-> b", 3),
        ("if ($past(a, 4)) b else x", 4),
        ("$past($past(a, 2), 3) |-> b", 5),
        ("a ##1 $past(b, 2) |-> x", 2),
    ]:
        assert measure(ir_of(parse(_assert(prop), widths=WIDTHS))).depth == depth, prop


def test_the_depth_walk_sees_every_node_kind() -> None:
    # A $past anywhere is found without a case per node kind.
    past = sva_ir.Past(sva_ir.Sig("a", 1), 6, 1)
    prop = sva_ir.PUntil(
        sva_ir.PSeq(sva_ir.SFirst(sva_ir.SBool(sva_ir.Const(1, 1))), "weak"),
        sva_ir.PIf(sva_ir.Concat((sva_ir.Sig("b", 1), past), 2), sva_ir.PConst(True), None),
        strong=False,
        inclusive=False,
    )
    assert measure(sva_ir.AssertionIR(prop, None, "clk")).depth == 6


# --- several answers ---------------------------------------------------------------------------


def test_two_different_assertions_are_several_answers() -> None:
    one = "```systemverilog\nassert property (@(posedge clk) a |=> b);\n```"
    other = "```systemverilog\nassert property (@(posedge clk) a |-> b);\n```"
    with pytest.raises(SvaError) as caught:
        extract_assertion(f"{one}\nor\n{other}")
    assert caught.value.kind == "several"
    with pytest.raises(SvaError):
        extract_assertion(f"assert property (@(posedge clk) a |-> b); {one}")
    # The same statement in the text and in a block is one answer.
    assert "a |=> b" in extract_assertion(f"I use assert property (@(posedge clk) a |=> b);\n{one}")


# --- the search space --------------------------------------------------------------------------


def test_the_judge_decides_by_a_longer_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # The judge's time limit is for a search's budget; here the verdicts are what is tested.
    monkeypatch.setattr("environments.sva.search.JUDGE_TIMEOUT_S", 300.0)

    def probe(answer: str, reference: str) -> Probe:
        ref = {"assertion": _assert(reference), "widths": WIDTHS}
        return Probe(_assert(answer), verifier="sva.nl2sva", reference=ref)

    assert deserves(probe("a |=> b", "a |-> ##1 b")) == 1.0
    assert deserves(probe("a |-> ##[0:30] b", "a |-> s_eventually b")) == 0.4
    assert deserves(probe("1'b1", "a |-> ##1 b")) == 0.0
    assert deserves(probe("a |-> b", "a |-> ##1 b")) == 0.0
    assert deserves(probe("(a |-> ##1 b) or $past(x, 100)", "a |-> ##1 b")) is None


def test_the_search_space_has_seeds_and_the_family_moves() -> None:
    import random

    rng = random.Random(7)
    seeds = list(SEARCH.seeds(rng))
    assert seeds and all(s.deserves == 1.0 for s in seeds)
    names = {move.name for move in SEARCH.mutators}
    assert {"horizon", "vacuity", "rewrite", "several"} <= names
    made = {move.name: list(move(seed, rng)) for move in SEARCH.mutators for seed in seeds[:1]}
    assert made["horizon"] and made["vacuity"] and made["rewrite"]
