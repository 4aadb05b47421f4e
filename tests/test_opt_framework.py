"""OPT-BENCH shared parts: answer reading, rewards, the evaluator's aggregation, knapsack."""

from __future__ import annotations

import ast
import json
import math
import random
import subprocess
import sys
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from environments.opt.catalog import reference_for
from environments.opt.evaluate import Attempt, aggregate
from environments.opt.task import Level
from environments.opt.tasks import TASKS
from environments.opt.tasks.knapsack import TASK as KNAPSACK
from tests import opt_support as opt
from verifiers.opt import VERIFIER, OptOptions, quality_ratio
from verifiers.opt.answer import final_answer, int_list, literal
from verifiers.opt.base import InvalidAnswer

# --- reading answers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("Answer: [0, 1]", "[0, 1]"),
        ("answer: [0, 1]", "[0, 1]"),
        ("Answer: [0, 1]\nChecked: it fits.\nAnswer: [0,1]", "[0,1]"),
        ("To find the answer: sort by ratio.\n1. Take 0.\nAnswer: [0, 1]", "[0, 1]"),
        ("The answer:\n1. Sort the items.\n2. Fill.\n**Answer:** [0, 1]", "[0, 1]"),
        ("**Answer:** `[0, 1]`.", "[0, 1]"),
        ("Answer: $\\boxed{[0, 1]}$", "[0, 1]"),
        ("Answer: \\text{[0, 1]} done", "\\text{[0, 1]} done"),
        ("Answer: \\text{[0, 1]}", "[0, 1]"),
        ("__Answer:__ **[0, 1]**.", "[0, 1]"),
        ("Answer: $$\\boxed{\\text{0 -> 1}}$$.", "0 -> 1"),
        ("Answer: *[0, 1].*", "[0, 1]"),
        ("Answer:\n```\n[0, 1]\n```", "[0, 1]"),
    ],
)
def test_the_last_answer_is_read_and_decoration_around_it_dropped(
    response: str, expected: str
) -> None:
    assert final_answer(response) == expected


@pytest.mark.parametrize(
    "response",
    [
        "Answer: [9]\nOn second thought.\nAnswer: [0, 1]",
        "Answer: [9], or better:\nAnswer: [0, 1]",
        "**Answer:**\n`[9]`\n\nAnswer: [0, 1]",
        "Answer: 9, 1\nAnswer: [0, 1]",
        "Answer: 9 -> 1\nAnswer: [0, 1]",
        "Answer: (9, 1) is worse\nAnswer: [0, 1]",
    ],
)
def test_an_earlier_answer_that_differs_makes_several_answers(response: str) -> None:
    # Issue 38: only the last 'Answer:' was read, so a response naming two answers earned the
    # last one's reward (the searching adversary's 'several' move found it).
    with pytest.raises(InvalidAnswer, match="several answers"):
        final_answer(response)
    assert VERIFIER(response, KNAPSACK_REFERENCE).status == "invalid"


@pytest.mark.parametrize(
    "response", ["no answer here", "Answer:", "Answer:  **  ", "Answer: " + "1," * 20_000]
)
def test_missing_empty_or_huge_answers_are_invalid(response: str) -> None:
    with pytest.raises(InvalidAnswer):
        int_list(final_answer(response))


@pytest.mark.parametrize(
    "answer",
    [
        "[1*2]",
        "[1`2]",
        "[1$2]",
        "[1**0]",
        "[1, \\text{2}]",
        "[1, \\boxed{2}]",
        "[`1`, 2]",
        "[$1$, 2]",
        "[**1**, 2]",
        "1*2",
        "1 -> *2",
        "$[1]$ or $[2]$",
        "**[1]** and **[2]**",
        "`[1]`, `[2]`",
        "[1]." + "." * 3,
        "\\boxed{" * 9 + "[1]" + "}" * 9,
    ],
)
def test_nothing_inside_the_answer_is_stripped(answer: str) -> None:
    # Issue 25: decoration was deleted everywhere before reading, so "[1*2]" read as [12], a
    # feasible answer here (twenty items that all fit).
    items = {str(i): {"weight": 1, "value": 1} for i in range(20)}
    reference = {"task": "knapsack", "instance": {"capacity": 20, "items": items}}
    score = VERIFIER(f"Answer: {answer}", {**reference, "value": 20, "optimal": True})
    assert (score.status, score.reward) == ("invalid", 0.0), score


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[0, 2, 3]", [0, 2, 3]),
        ("(0, 2, 3)", [0, 2, 3]),
        ("0, 2, 3", [0, 2, 3]),
        ("0 -> 2 -> 3", [0, 2, 3]),
        ("[0 -> 2 -> 3]", [0, 2, 3]),
        ("7", [7]),
        (" [ 0 ,2, 3, ] ", [0, 2, 3]),
        ("[]", []),
    ],
)
def test_integer_lists_in_every_spelling(text: str, expected: list[int]) -> None:
    assert int_list(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "[True, 1]",
        "[1.5]",
        "['a']",
        "[[1], [2]]",
        "{'x': 1}",
        "[a, b]",
        "0 -> x",
        "[" * 5000 + "]" * 5000,
    ],
)
def test_anything_but_integers_is_invalid(text: str) -> None:
    with pytest.raises(InvalidAnswer):
        int_list(text)


# --- rewards ---------------------------------------------------------------------------------


def test_quality_ratio_directions_and_zeros() -> None:
    assert quality_ratio(8, 10, "max") == 0.8
    assert quality_ratio(12, 10, "min") == pytest.approx(10 / 12)
    assert quality_ratio(0, 0, "max") == 1.0
    assert math.isinf(quality_ratio(3, 0, "max"))


# The knapsack example: capacity 10, items (weight, value) 0: (4, 5), 1: (6, 6), 2: (7, 8); the
# optimum 11 takes items 0 and 1 (tests/test_opt_tasks.py proves it).
KNAPSACK_REFERENCE = {
    "task": "knapsack",
    "instance": KNAPSACK.example_input,
    "value": 11,
    "optimal": True,
}


def test_reward_modes_and_shaping() -> None:
    half = "Answer: [2]"  # value 8 of 11
    assert VERIFIER(half, KNAPSACK_REFERENCE).reward == pytest.approx(8 / 11)
    assert VERIFIER(half, KNAPSACK_REFERENCE, OptOptions(mode="binary")).reward == 1.0
    assert VERIFIER(half, KNAPSACK_REFERENCE, OptOptions(power=2)).reward == pytest.approx(
        (8 / 11) ** 2
    )
    assert VERIFIER(half, KNAPSACK_REFERENCE, OptOptions(threshold=0.9)).reward == 0.0
    score = VERIFIER(half, KNAPSACK_REFERENCE)
    assert score.components == {"feasible": 1.0, "quality_ratio": pytest.approx(8 / 11)}
    assert score.metrics == {"objective": 8.0, "reference": 11.0, "optimal": 1.0}


def test_beating_the_reference_is_flagged_and_clipped() -> None:
    weak = {**KNAPSACK_REFERENCE, "value": 8, "optimal": False}
    score = VERIFIER("Answer: [0, 1]", weak)
    assert score.reward == 1.0
    assert score.components["quality_ratio"] == pytest.approx(11 / 8)
    assert score.extra == {"above_reference": True}
    assert "was not optimal" in score.detail


def test_infeasible_answers_score_zero_with_the_reason() -> None:
    score = VERIFIER("Answer: [1, 2]", KNAPSACK_REFERENCE)
    assert (score.status, score.reward, score.components["feasible"]) == ("ok", 0.0, 0.0)
    assert "exceeds the capacity" in score.detail
    duplicate = VERIFIER("Answer: [0, 0]", KNAPSACK_REFERENCE)
    assert duplicate.reward == 0.0 and "more than once" in duplicate.detail


@pytest.mark.parametrize(
    "reference",
    [None, "knapsack", {"task": "chess"}, {**KNAPSACK_REFERENCE, "value": "many"}],
)
def test_unusable_references_are_errors(reference: object) -> None:
    assert VERIFIER("Answer: [0]", reference).status == "error"


# --- the evaluator ---------------------------------------------------------------------------


def test_aggregation_reproduces_the_original_by_hand() -> None:
    attempts = [
        # knapsack (selection): instance a solved at 0.5 then 0.9 -> best 0.9; b never feasible.
        Attempt("a", "knapsack", True, 0.5),
        Attempt("a", "knapsack", True, 0.9),
        Attempt("b", "knapsack", False, 0.0),
        # subset_sum (selection): c at 1.0.
        Attempt("c", "subset_sum", True, 1.0),
        # tsp (planning): d infeasible then 0.6.
        Attempt("d", "tsp", False, 0.0),
        Attempt("d", "tsp", True, 0.6),
    ]
    report = aggregate(attempts)
    assert report.tasks["knapsack"].sr == pytest.approx(50.0)
    assert report.tasks["knapsack"].qr == pytest.approx(45.0)  # (0.9 + 0) / 2
    assert report.tasks["subset_sum"].qr == pytest.approx(100.0)
    # selection = mean(knapsack, subset_sum): SR (50 + 100) / 2, QR (45 + 100) / 2
    assert report.categories["selection"].sr == pytest.approx(75.0)
    assert report.categories["selection"].qr == pytest.approx(72.5)
    assert report.categories["planning"].qr == pytest.approx(60.0)
    # overall = mean over the two categories present
    assert report.overall.sr == pytest.approx((75.0 + 100.0) / 2)
    assert report.overall.qr == pytest.approx((72.5 + 60.0) / 2)
    assert report.overall.instances == 4


def test_the_evaluate_command_scores_a_jsonl(tmp_path: Path) -> None:
    ids = [f"opt/knapsack@1/{seed}?level=easy" for seed in range(3)]
    optimum = "Answer: " + reference_for(ids[0])["answer"]
    greedy = "Answer: " + KNAPSACK.greedy(reference_for(ids[2])["instance"])
    rows = [
        {"task_id": ids[0], "responses": ["no answer", optimum]},  # best of two tries: 1.0
        {"task_id": ids[1], "response": "Answer: [0, 0]"},  # infeasible: 0
        {"task_id": ids[2], "response": greedy},
    ]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    run = envserver("opt", "evaluate", str(answers), "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    knapsack = report["tasks"]["knapsack"]
    assert knapsack["instances"] == 3
    assert knapsack["sr"] == pytest.approx(200 / 3)  # the duplicate answer is infeasible
    assert 100 / 3 < knapsack["qr"] <= 200 / 3
    answers.write_text('{"task_id": 5}\n')
    bad = envserver("opt", "evaluate", str(answers))
    assert bad.returncode == 2 and bad.stderr.startswith("error:")


def envserver(*args: str) -> subprocess.CompletedProcess[str]:
    """The ``envserver`` command line, as a user runs it."""
    command = [sys.executable, "-c", "from envserver.cli import main; main()", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)


# --- knapsack --------------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["easy", "medium", "hard", "bench"])
def test_knapsack_sizes_follow_the_level(level: Level) -> None:
    # Determinism and variety across seeds: tests/test_opt_tasks.py.
    sizes = {"easy": (14, 25), "medium": (23, 37), "hard": (35, 60), "bench": (55, 80)}[level]
    for seed in range(20):
        assert sizes[0] <= len(opt.instance("knapsack", seed, level)["items"]) <= sizes[1]


def test_knapsack_dp_is_exact_against_brute_force() -> None:
    for seed in range(15):
        rng = random.Random(seed)
        items = {
            str(i): {"weight": rng.randint(1, 20), "value": rng.randint(1, 30)} for i in range(10)
        }
        instance = {"capacity": rng.randint(10, 60), "items": items}
        best = max(
            sum(items[str(i)]["value"] for i in chosen)
            for size in range(11)
            for chosen in combinations(range(10), size)
            if sum(items[str(i)]["weight"] for i in chosen) <= instance["capacity"]
        )
        solution = KNAPSACK.solve(instance, 10)
        assert solution.value == best and solution.optimal
        assert KNAPSACK.check.evaluate(instance, solution.answer) == best


# --- the benchmark set -----------------------------------------------------------------------


def test_the_cached_bench_references_are_current_and_proven() -> None:
    from environments.opt import bench
    from environments.opt.catalog import bench_task_ids
    from environments.opt.references import BENCH_REFERENCES

    assert bench.verify(BENCH_REFERENCES) == 0
    cached = json.loads(BENCH_REFERENCES.read_text())
    assert len(cached) == 1000 and all(entry["optimal"] for entry in cached.values())
    for task_id in bench_task_ids()[::20]:  # every task, five instances each
        name, instance = bench.bench_instance(task_id)
        entry = cached[task_id]
        assert TASKS[name].check.evaluate(instance, entry["answer"]) == entry["value"]


def test_opt_bench_seeds_map_onto_the_task_sets() -> None:
    mixed = reference_for("opt/bench@1/23")  # task 23 % 10 = 3 (tsp), seed 2, level bench
    assert mixed == reference_for("opt/tsp@1/2?level=bench")
    assert mixed["task"] == "tsp"


# --- the answer grammar, exactly -------------------------------------------------------------

_space = st.sampled_from(["", " ", "  ", "\n", "\t"])


def _spelled(value: Any, draw: st.DrawFn) -> str:
    """``value`` (ints, lists, tuples) in the grammar, with random spacing and trailing commas."""
    if isinstance(value, int):
        return str(value)
    items = [draw(_space) + _spelled(item, draw) + draw(_space) for item in value]
    trailing = (
        ","
        if items and (draw(st.booleans()) or (isinstance(value, tuple) and len(items) == 1))
        else ""
    )
    opener, closer = ("[", "]") if isinstance(value, list) else ("(", ")")
    return opener + ",".join(items) + trailing + closer


_values = st.recursive(
    st.integers(0, 10**12),
    lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple),
    max_leaves=12,
).filter(lambda v: not isinstance(v, int))


@st.composite
def _grammar_texts(draw: st.DrawFn) -> tuple[Any, str]:
    value = draw(_values.filter(lambda v: _depth(v) <= 3))
    return value, draw(_space) + _spelled(value, draw) + draw(_space)


def _depth(value: Any) -> int:
    return 0 if isinstance(value, int) else 1 + max((_depth(v) for v in value), default=0)


@settings(max_examples=300, deadline=None)
@given(_grammar_texts())
def test_every_text_of_the_grammar_reads_as_python_would(case: tuple[Any, str]) -> None:
    value, text = case
    assert literal(text) == value == ast.literal_eval(text)


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("0123456789[](),_-+ .xe*<>'a\u0663\uff10"), max_size=30)
    | st.from_regex(r"\A[ \[\(]*[0-9]{1,3}(\s*,\s*[\[\(]*[0-9]{1,3}[\]\)]*)*[\]\) ,]*\Z")
)
def test_any_other_text_is_invalid_never_a_crash(text: str) -> None:
    try:
        value = literal(text)
    except InvalidAnswer:
        return
    # Accepted: every integer in it is written in plain ASCII digits without sign or separator,
    # and Python reads it alike with every bracket square ("(x)" is a 1-tuple in the grammar).
    assert not set(text) & set("_-+.xe*<>'a\u0663\uff10")
    squared = text.replace("(", "[").replace(")", "]")
    assert _plain(ast.literal_eval(squared)) == _plain(value)


def _plain(value: Any) -> Any:
    return value if isinstance(value, int) else [_plain(item) for item in value]


@pytest.mark.parametrize(
    "text",
    ["1_2", "[1_2]", "-0", "[-0]", "[0]*50", "[0] 50", "<[0, 1]>", "[0, 1] more", "[0, 1)", "01"],
)
def test_the_audits_answers_are_not_in_the_grammar(text: str) -> None:
    with pytest.raises(InvalidAnswer):
        literal(text)
