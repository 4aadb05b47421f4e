"""Several answers at once (``verifiers/sva/hedges.py``): guesses joined by ``and`` imply the
reference as soon as one guess does, and guesses joined by ``or`` are implied by it as soon as
one is right, so either would earn the one-way credit without committing to an answer. Each form
is scored by task id on real tasks of the three environments and must earn 0 (it earned 0.4
before); honest one-way answers keep their credit."""

from __future__ import annotations

import pytest

pytest.importorskip("pyslang")

from tests.test_sva_loopholes import (
    CASES,
    W,
    _antecedent,
    _assertion,
    _env,
    _parts,
    _signal,
    _tasks,
)
from verifiers.sva import NL2SVA, SvaOptions
from verifiers.sva.api import (
    CheckOptions,
    judge_strengthening,
    judge_weakening,
    parse_assertion,
)
from verifiers.sva.hedges import MAX_PARTS, drops

STRICT = SvaOptions(ignore_disable_iff=False)


def _hedges(body: str, ant: str | None, x: str) -> dict[str, tuple[str, str]]:
    """name -> (answer body, its verdict against the reference ``body``). The second guess
    makes each join a real (satisfiable, exercised, input-free) one-way answer: for ``and``
    the consequent one cycle later (``$stable(x)`` for an invariant), for ``or`` ``$stable(x)``
    (the shifted consequent of a liveness reference is implied by it: no weaker join)."""
    r, s = f"({body})", f"($stable({x}))"
    if ant is None:
        g, g2 = s, f"($stable($past({x})))"
    else:
        arrow, c = body[len(ant) :].lstrip()[:3], body[len(ant) :].lstrip()[3:].strip()
        g, g2 = f"(({ant}) {arrow} nexttime ({c}))", f"(({ant}) {arrow} nexttime[2] ({c}))"
    out = {
        "R and G": (f"{r} and {g}", "a_implies_b"),
        "G and R": (f"{g} and {r}", "a_implies_b"),
        "(G and R) and G2": (f"({g} and {r}) and {g2}", "a_implies_b"),
        "not (not G or not R)": (f"not (not {g} or not {r})", "a_implies_b"),
        "R or S": (f"{r} or {s}", "b_implies_a"),
        "S or (R or S2)": (f"{s} or ({r} or ($stable($past({x}))))", "b_implies_a"),
        "not (not R and not S)": (f"not (not {r} and not {s})", "b_implies_a"),
    }
    if ant is not None:
        out |= {
            "consequent and": (f"({ant}) {arrow} (({c}) and nexttime ({c}))", "a_implies_b"),
            "consequent or": (f"({ant}) {arrow} (({c}) or {s})", "b_implies_a"),
            # Conjoined implications written as one: a second guess at the trigger.
            "antecedent or": (f"(({ant}) or $past({ant})) {arrow} ({c})", "a_implies_b"),
        }
    return out


FORMS = (
    "R and G",
    "G and R",
    "(G and R) and G2",
    "not (not G or not R)",
    "R or S",
    "S or (R or S2)",
    "not (not R and not S)",
    "consequent and",
    "consequent or",
    "antecedent or",
)


@pytest.mark.parametrize("form", FORMS)
def test_hedges_earn_nothing_by_task_id(form: str) -> None:
    scored = 0
    for env_id, index in CASES:
        env = _env(env_id)
        seed, task = _tasks(env_id)[index]
        body, ant = _parts(task)[1], _antecedent(task)
        hedges = _hedges(body, ant, _signal(task))
        if form not in hedges:
            continue  # an implication form, and this reference is an invariant
        hedge, verdict = hedges[form]
        answer = _assertion(task, hedge)
        score = env.score_response(seed, env.spec.options_model(), answer)
        assert score.extra.get("verdict") == verdict, (env_id, seed, answer, score)
        assert (score.status, score.reward) == ("ok", 0.0), (env_id, seed, answer, score)
        assert score.components["hedge"] == 1.0, (env_id, seed, answer, score)
        strict = NL2SVA(answer, task.reference, STRICT)
        assert (strict.status, strict.reward) == ("ok", 0.0), (env_id, seed, answer, strict)
        scored += 1
    assert scored >= 6  # two implications and one invariant per environment


# NL2SVA-Machine row 2: (sig_G && (sig_C && sig_A)) |-> ##5 (sig_I !== 1'b1).
TRIGGER = "(sig_G && sig_C && sig_A)"


@pytest.mark.parametrize(
    "body",
    [
        f"{TRIGGER} |-> ##5 (!sig_I && $past(!sig_I))",  # ##5 and ##4 guessed at once
        f"{TRIGGER} |-> ##5 ((sig_I !== 1'b1) & $past(!sig_I))",  # a 1-bit &
        f"{TRIGGER} |-> ##5 !(sig_I || $past(sig_I))",  # De Morgan
        f"({TRIGGER} || $past(sig_G)) |-> ##5 !sig_I",  # || of two triggers
        f"{TRIGGER} |-> ##5 (!sig_I || $past(sig_I))",  # || of two consequents: weaker
        f"{TRIGGER} |-> ##5 ((sig_I || $past(sig_I)) !== 1'b1)",  # && spelled as !== 1
    ],
)
def test_boolean_hedges_by_task_id(body: str) -> None:
    env = _env("sva/nl2sva-machine")
    answer = f"assert property (@(posedge clk) {body});"
    score = env.score_response(2, env.spec.options_model(), answer)
    assert (score.status, score.reward) == ("ok", 0.0), score
    assert score.components["hedge"] == 1.0, score


def test_honest_one_way_answers_keep_their_credit() -> None:
    env = _env("sva/nl2sva-machine")
    # Row 7 is sig_G |-> ##[5:9] X: a narrower window is a real stronger answer, a wider one a
    # real weaker one; neither lists several answers.
    reference = " ".join(_tasks_row(7).split())
    for new in ("##5", "##[6:9]", "##[5:10]", "##[4:9]"):
        answer = reference.replace("##[5:9]", new)
        score = env.score_response(7, env.spec.options_model(), answer)
        assert score.reward == pytest.approx(0.4), (new, score)
        assert score.components["hedge"] == 0.0
    # A conjunctive reference: each part of the answer is needed, so nothing is surplus.
    a = "(a |-> ##1 b) and (c |-> ##1 d)"
    b = "(a |-> ##[1:2] b) and (c |-> ##[0:1] d)"
    assert NL2SVA(a, _ref(b)).reward == pytest.approx(0.4)
    assert NL2SVA(b, _ref(a)).reward == pytest.approx(0.4)
    # The equivalent rewrites of a conjunction are not hedges: reward 1.
    assert NL2SVA("(a |-> b) and (a |-> c)", _ref("a |-> b && c")).reward == 1.0
    assert NL2SVA("(a || c) |-> b", _ref("(a |-> b) and (c |-> b)")).reward == 1.0


def _tasks_row(seed: int) -> str:
    from environments.sva.family import DatasetOptions, Nl2SvaDataset

    return str(Nl2SvaDataset("machine").generate(seed, DatasetOptions()).reference["assertion"])


def _ref(text: str) -> dict[str, object]:
    return {"assertion": f"assert property(@(posedge clk) {text});", "widths": W}


WIDE = {f"c{i}": 1 for i in range(10)} | {"a": 1, "d": 1}


def test_more_parts_than_the_bound_count_as_several_answers() -> None:
    # Every one of the n conjuncts is needed (the reference allows d instead of all of them):
    # within the bound the answer is a meaningful strengthening, past it several answers.
    options = CheckOptions()
    for n, outcome in ((MAX_PARTS, "meaningful"), (MAX_PARTS + 1, "hedge")):
        cs = " && ".join(f"c{i}" for i in range(n))
        a = parse_assertion(f"a |-> ##1 ({cs})", widths=WIDE)
        b = parse_assertion(f"a |-> ##1 (({cs}) || d)", widths=WIDE)
        assert judge_strengthening(a, b, options) == outcome, n
        a = parse_assertion(f"a |-> ##1 ({cs.replace('&&', '||')})", widths=WIDE)
        b = parse_assertion(f"a |-> ##1 (({cs.replace('&&', '||')}) && d)", widths=WIDE)
        assert judge_weakening(a, b, options) == outcome, n


@pytest.mark.parametrize(
    ("text", "conjuncts", "disjuncts"),
    [
        ("a |-> b", 0, 0),
        ("(a |-> b) and (c |-> d)", 2, 0),
        ("((a |-> b) and c) and d", 3, 0),
        ("not ((a |-> b) or not c)", 2, 0),
        ("not (a implies b)", 2, 0),
        ("a implies b", 0, 2),
        ("(a or c) |-> (b and d)", 4, 0),  # two triggers, two consequents
        ("a |-> ##2 (b && c && d)", 3, 0),
        ("a |-> ##[1:2] (b && c)", 0, 0),  # a range does not distribute over &&
        ("a |-> ##[1:2] (b || c)", 0, 2),
        ("a |-> b[*2]", 0, 0),  # one temporal claim
        ("a |-> (b ##1 c) or (d ##1 c)", 0, 2),
        ("a |-> (b ##1 (c || d))", 0, 2),
        ("(b ##1 c) intersect (d ##1 c)", 2, 0),
        ("!(b || c)", 2, 0),
        ("(b === 1'b1) & (c !== 1'b0)", 2, 0),
        ("(b && c) !== 1'b1", 0, 2),
        ("s_eventually (b || c)", 0, 2),
        ("always (b && c)", 2, 0),
        ("if (a) (b && c) else (d || c)", 2, 2),
    ],
)
def test_parts(text: str, conjuncts: int, disjuncts: int) -> None:
    prop = parse_assertion(text, widths=W).ir.prop  # type: ignore[attr-defined]
    assert (len(drops(prop, True)), len(drops(prop, False))) == (conjuncts, disjuncts)
