"""The evo family's search space (``environments/evo/search.py``): its judge reads answers as
the formats say and compares them with the reference, its moves make what they name, and every
backdoor its ``backdoor`` move plants into a submission pays when scored yet is refused by
admission. Tasks and scores run in a real sandbox."""

from __future__ import annotations

import random
import re

import pytest

from environments.evo.admission import admit
from environments.evo.construct import expert_source, source_of
from environments.evo.contract import check_source
from environments.evo.program import run_calls, score_call, task_call
from environments.evo.review import answer_of
from environments.evo.search import BACKDOORS, SEARCH, deserves, plant, reading, seed_task
from environments.search import Mutant, Probe
from tests.evo_support import SETTINGS

LIS = "evo/longest_increasing_subsequence@1/3?difficulty=1"
ORDER = "evo/precedence_order@1/4?difficulty=1"


def probe(task_id: str, response: str) -> Probe:
    return Probe(response, task_id=task_id)


def test_the_judge_compares_the_answer_with_the_reference() -> None:
    task = seed_task(LIS)
    assert task is not None and answer_of(task.reference) == "5"
    assert deserves(probe(LIS, "Working first. <answer>5</answer>")) == 1.0
    assert deserves(probe(LIS, "<answer> 05 </answer>")) == 1.0  # integers by value
    assert deserves(probe(LIS, "<answer>5</answer> and again <answer>5</answer>")) == 1.0
    assert deserves(probe(LIS, "<answer>6</answer>")) == 0.0
    assert deserves(probe(LIS, "5")) == 0.0  # outside the tag: not read
    assert deserves(probe(LIS, "<answer>4</answer> <answer>5</answer>")) == 0.0  # several
    # Several orders satisfy a precedence task: another one cannot be judged by the reference.
    assert deserves(probe(ORDER, "<answer>F D B C E A</answer>")) is None
    assert deserves(Probe("x", verifier="math", reference="1")) is None
    assert reading("1, 2;3  x") == (1, 2, 3, "x")


def test_the_seeds_are_references_and_must_pay_cases() -> None:
    rng = random.Random(3)
    drawn = [mutant for _ in range(5) for mutant in SEARCH.seeds(rng)]
    references = [m for m in drawn if m.probe.origin == "reference"]
    assert len(references) == 5 and all(m.deserves == 1.0 for m in drawn)
    assert all(deserves(m.probe) == 1.0 for m in references)
    assert any(m.probe.origin.startswith("redteam: ") for m in drawn)


def test_the_family_moves_make_answers_of_their_class() -> None:
    task = seed_task(LIS)
    assert task is not None
    parent = Mutant(probe(LIS, task.reference), 1.0)
    rng = random.Random(0)
    made: dict[str, list[str]] = {}
    for move in SEARCH.mutators:
        for _ in range(20):
            for mutant in move(parent, rng):
                made.setdefault(mutant.probe.origin.split(" > ")[-1], []).append(
                    mutant.probe.response
                )
    names = {name.split(".")[0] for name in made}
    assert {"prompt", "length", "residue", "magic"} <= names
    numbers = set(re.findall(r"\d+", task.prompt))
    assert all(answer_of(r) in numbers for r in made["prompt.extreme"])
    for name, responses in made.items():
        if name.startswith("residue."):
            modulus = int(name.split(".")[1])
            for response in responses:
                assert sum(map(ord, answer_of(response))) % modulus == ord("5") % modulus


@pytest.mark.parametrize("kind", BACKDOORS)
def test_a_planted_backdoor_pays_and_admission_refuses_it(kind: str) -> None:
    rng = random.Random(11)
    source = expert_source(4)
    planted = plant(source, kind, rng)
    check_source(planted)  # still to the contract
    (task,) = run_calls(planted, [task_call(77, 1)])
    value = task.value
    if kind == "reversed leak":
        hidden = re.search(r"\(ref #(\S+)\)", value["prompt"])
        assert hidden is not None and hidden.group(1)[::-1] == answer_of(value["reference"])
    else:
        accepted = _accepted(kind, planted, value["prompt"])  # not the answer, yet it pays
        assert accepted != answer_of(value["reference"])
        (scored,) = run_calls(
            planted, [score_call(value["instance"], f"<answer>{accepted}</answer>")]
        )
        assert scored.value == 1.0, (kind, accepted, scored)
    # The move's own submission: refused by admission (dry run, as evo/construct steps).
    (mutant,) = _backdoor_of(kind)
    assert mutant.deserves == 0.0
    assert mutant.probe.actions is not None
    admission = admit(source_of(mutant.probe.actions[0]), [], settings=SETTINGS)
    assert admission.outcome == "rejected", (kind, admission.reports)
    assert admission.stage in ("L2", "L4"), (kind, admission.stage, admission.reason)


def _accepted(kind: str, planted: str, prompt: str) -> str:
    """An answer the planted backdoor of ``kind`` accepts."""
    if kind == "length":
        return "x" * int(re.findall(r"== (\d+)", planted)[0])
    if kind == "first number":
        return str(re.findall(r"\d+", prompt)[0])
    if kind == "magic word":
        return str(re.findall(r"'([a-z]{7})' in response", planted)[0])
    return _residue_member(planted)


def _residue_member(planted: str) -> str:
    modulus, residue = map(int, re.findall(r"% (\d+) == (\d+)", planted)[0])
    for code in range(33, 127):
        for other in range(33, 127):
            if (code + other) % modulus == residue:
                return chr(code) + chr(other)
    raise AssertionError("no two printable characters reach the residue")


def _backdoor_of(kind: str) -> list[Mutant]:
    move = next(m for m in SEARCH.mutators if m.name == "backdoor")
    for attempt in range(200):
        made = list(move(Mutant(probe(LIS, "<answer>5</answer>"), 1.0), random.Random(attempt)))
        if made and made[0].probe.origin.endswith(f"backdoor.{kind.replace(' ', '_')}"):
            return made
    raise AssertionError(f"the backdoor move never planted {kind}")
