"""Issue 25, items 1 and 2: answers that imply the reference only vacuously (unsatisfiable, or
failing wherever the reference is exercised, or forbidding inputs the reference leaves free),
and ``disable iff`` conditions only the answer has, scored by task id on real tasks of the three
environments, in the default and the strict (``ignore_disable_iff=false``) mode."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import httpx
import pytest

pytest.importorskip("pyslang")

from environments.single_turn import SingleTurnEnvironment, Task
from environments.sva.family import DatasetOptions, GeneratedFamily, Nl2SvaDataset
from environments.sva.generator import GeneratedOptions
from verifiers.sva import NL2SVA, SvaOptions
from verifiers.sva.api import CheckOptions, judge_strengthening, parse_assertion

ENVS = ("sva/nl2sva-human", "sva/nl2sva-machine", "sva/generated")
STRICT = SvaOptions(ignore_disable_iff=False)
_BODY = re.compile(
    r"assert\s+property\s*\(\s*@\(posedge clk\)\s*(?:disable iff\s*\((?P<reset>\w+)\))?"
    r"(?P<body>.*)\)\s*;\s*$",
    re.DOTALL,
)


def _family(env_id: str) -> tuple[Any, Any]:
    if env_id == "sva/generated":
        return GeneratedFamily(), GeneratedOptions()
    return Nl2SvaDataset(env_id.removeprefix("sva/nl2sva-")), DatasetOptions()  # type: ignore[arg-type]


@cache
def _tasks(env_id: str) -> list[tuple[int, Task]]:
    """Two tasks with an implication and one without, the first such seeds."""
    family, options = _family(env_id)
    implications: list[tuple[int, Task]] = []
    invariants: list[tuple[int, Task]] = []
    for seed in range(200):
        task = family.generate(seed, options)
        body = _parts(task)[1]
        target = implications if re.search(r"\|[-=]>", body) else invariants
        if len(target) < (2 if target is implications else 1):
            target.append((seed, task))
        if len(implications) == 2 and len(invariants) == 1:
            break
    return implications + invariants


def _env(env_id: str) -> SingleTurnEnvironment:
    from envserver.registry import discover

    env = discover().env(env_id)
    assert isinstance(env, SingleTurnEnvironment)
    return env


def _parts(task: Task) -> tuple[str | None, str]:
    match = _BODY.search(task.reference["assertion"])
    assert match is not None, task.reference["assertion"]
    return match["reset"], " ".join(match["body"].split())


def _signal(task: Task) -> str:
    names = re.findall(r"(?<![$\w'])([A-Za-z_]\w*)\b", _parts(task)[1])
    return str(next(n for n in names if n not in ("strong", "s_eventually", "until", "and")))


def _antecedent(task: Task) -> str | None:
    body = _parts(task)[1]
    match = re.search(r"\|[-=]>", body)
    return None if match is None else body[: match.start()].strip()


def _assertion(task: Task, body: str, reset: str | None = "same") -> str:
    own = _parts(task)[0] if reset == "same" else reset
    head = f"disable iff ({own}) " if own else ""
    return f"assert property (@(posedge clk) {head}{body});"


def _hacks(task: Task) -> dict[str, str]:
    """Every cheap 'stronger' answer of issue 25 item 1 that fits this task."""
    x = _signal(task)
    out = {
        "1'b0": _assertion(task, "1'b0"),
        "a && !a": _assertion(task, f"{x} && !{x}"),
        "1'b1 |-> 1'b0": _assertion(task, "1'b1 |-> 1'b0"),
        "s_eventually 0": _assertion(task, "s_eventually 1'b0"),
        "strong(##[0:$] 0)": _assertion(task, "strong(##[0:$] 1'b0)"),
    }
    if _parts(task)[0] is not None:
        # Unsatisfiable once the reference's reset is off (strict mode: holds iff the reset
        # stays asserted).
        out["reset-only 1'b0"] = _assertion(task, "1'b0")
    ant = _antecedent(task)
    if ant is not None:
        out |= {
            "a |-> 0": _assertion(task, f"({ant}) |-> 1'b0"),
            "a |-> ##1 (b && !b)": _assertion(task, f"({ant}) |-> ##1 ({x} && !{x})"),
            "not a": _assertion(task, f"not ({ant})"),
            "$past contradiction": _assertion(task, f"({ant}) |-> ($past({x}) && !$past({x}))"),
        }
    return out


CASES = [(env_id, i) for env_id in ENVS for i in range(3)]


@pytest.mark.parametrize(("env_id", "index"), CASES)
def test_vacuous_stronger_answers_earn_nothing_by_task_id(env_id: str, index: int) -> None:
    env = _env(env_id)
    seed, task = _tasks(env_id)[index]
    for name, answer in _hacks(task).items():
        by_id = env.score_response(seed, env.spec.options_model(), answer)
        assert (by_id.status, by_id.reward) == ("ok", 0.0), (env_id, seed, name, by_id)
        # Where the answer implies the reference, the verdict says why it earns nothing.
        if by_id.extra["verdict"] == "a_implies_b":
            assert by_id.components["vacuous"] == 1.0, (name, by_id)
        strict = NL2SVA(answer, task.reference, STRICT)
        assert (strict.status, strict.reward) == ("ok", 0.0), (env_id, seed, name, strict)


@pytest.mark.parametrize(("env_id", "index"), CASES)
def test_answer_only_disable_iff_is_honoured(env_id: str, index: int) -> None:
    # Item 2: a condition only the answer has is honoured (never dropped): always true, or
    # true whenever the property's own trigger fires, it switches every attempt off.
    env = _env(env_id)
    seed, task = _tasks(env_id)[index]
    body = _parts(task)[1]
    ant = _antecedent(task)
    resets = ["1'b1"] + ([f"({ant})"] if ant is not None and "##" not in ant else [])
    for reset in resets:
        answer = _assertion(task, body, reset=reset)
        for options in (None, STRICT):
            score = (
                env.score_response(seed, env.spec.options_model(), answer)
                if options is None
                else NL2SVA(answer, task.reference, options)
            )
            assert (score.status, score.reward) == ("ok", 0.0), (env_id, seed, reset, score)
    # The reference itself, and a reset identical to the reference's, keep full credit.
    assert (
        env.score_response(seed, env.spec.options_model(), task.reference["assertion"]).reward
        == 1.0
    )


def test_a_meaningful_strengthening_keeps_partial_credit() -> None:
    # Machine row 7 is sig_G |-> ##[5:9] X: answering ##5 alone narrows the window, a real
    # (if wrong) check that can be met whatever sig_G does, so it keeps its partial credit.
    env = _env("sva/nl2sva-machine")
    reference = " ".join(
        Nl2SvaDataset("machine").generate(7, DatasetOptions()).reference["assertion"].split()
    )
    assert "|-> ##[5:9]" in reference, reference
    answer = reference.replace("##[5:9]", "##5")
    score = env.score_response(7, DatasetOptions(), answer)
    assert score.status == "ok" and score.reward == pytest.approx(0.4), score
    assert score.extra["verdict"] == "a_implies_b"
    assert score.components["vacuous"] == 0.0
    for options in (SvaOptions(), STRICT):
        strict = NL2SVA(
            answer, Nl2SvaDataset("machine").generate(7, DatasetOptions()).reference, options
        )
        assert strict.reward == pytest.approx(0.4), strict


W = {"a": 1, "b": 1, "c": 1, "d": 1, "rst": 1}


def _ref(text: str) -> dict[str, Any]:
    return {"assertion": f"assert property(@(posedge clk) {text});", "widths": W}


@pytest.mark.parametrize(
    ("answer", "reference", "outcome"),
    [
        ("1'b0", "a |-> ##1 b", "unsatisfiable"),
        ("s_eventually 1'b0", "a |-> ##1 b", "unsatisfiable"),
        ("a |-> 1'b0", "a |-> ##1 b", "blocks_trigger"),
        ("not a", "a |-> ##1 b", "blocks_trigger"),
        ("(a |-> ##1 b) and !c", "(a |-> ##1 b) and (c |-> d)", "blocks_trigger"),
        ("disable iff (rst) 1'b0", "disable iff (rst) a |-> ##1 b", "blocks_trigger"),
        ("a && b", "a |-> b", "constrains_inputs"),
        ("b", "a |-> b", "meaningful"),
        ("(a |-> ##1 b) and c", "a |-> ##1 b", "constrains_inputs"),
        # A demand on a signal the reference does not read is not a strengthening of it.
        ("a |-> ##1 (b && c)", "a |-> ##1 b", "constrains_inputs"),
        ("a |-> ##1 (b && !a)", "a |-> ##1 b", "constrains_inputs"),
        # Either part of b && d alone implies b || d: two guesses at once (hedges.py).
        ("a |-> ##1 (b && d)", "a |-> ##1 (b || d)", "hedge"),
        ("a |-> ##1 (b && d)", "a |-> ##1 ((b && d) || (c && d))", "meaningful"),
        ("a |-> ##2 b", "a |-> ##[1:3] b", "meaningful"),
        ("a |=> !a", "a |=> !a ##1 1'b1", "meaningful"),
    ],
)
def test_strengthening_outcomes(answer: str, reference: str, outcome: str) -> None:
    a = parse_assertion(answer, widths=W)
    b = parse_assertion(reference, widths=W)
    strict = CheckOptions(ignore_disable_iff=False)
    assert judge_strengthening(a, b, strict) == outcome


def test_same_disable_iff_is_still_dropped_and_assume_is_not_an_assertion() -> None:
    reference = _ref("disable iff (rst) a |-> ##1 b")
    # FVEval's choice is kept where it is harmless: the same condition on both sides.
    same = NL2SVA("assert property(@(posedge clk) disable iff (rst) a |=> b);", reference)
    assert same.reward == 1.0
    none = NL2SVA("a |=> b", reference)  # no condition at all: only stronger, still equal
    assert none.reward == 1.0
    assume = NL2SVA("assume property(@(posedge clk) a |-> ##1 b);", _ref("a |-> ##1 b"))
    assert (assume.status, assume.reward) == ("invalid", 0.0)
    commented = NL2SVA(
        "```systemverilog\n// assert property(@(posedge clk) a |=> b);\n```", reference
    )
    assert (commented.status, commented.reward) == ("invalid", 0.0)


def test_loophole_by_task_id_over_http(base_url: str) -> None:
    seed, task = _tasks("sva/nl2sva-machine")[0]
    items = [
        {"task_id": f"sva/nl2sva-machine@1/{seed}", "response": answer}
        for answer in ("assert property (@(posedge clk) 1'b0);", task.reference["assertion"])
    ]
    with httpx.Client(base_url=base_url, timeout=60) as http:
        response = http.post("/v1/verify", json={"items": items})
    assert response.status_code == 200, response.text
    rewards = [(r["status"], r["reward"]) for r in response.json()["results"]]
    assert rewards == [("ok", 0.0), ("ok", 1.0)]
