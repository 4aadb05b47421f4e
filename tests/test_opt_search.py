"""The opt family's search space (issue 38): its moves make mutants, its judge recomputes what
an answer deserves without the verifier and agrees with it, and a search finds what reading
only the last ``Answer:`` paid."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from environments.opt import judge
from environments.opt import search as opt_search
from environments.opt.tasks import TASKS
from environments.search import Mutant, Probe
from envserver import redteam
from envserver.config import Settings
from envserver.registry import Registry, discover
from envserver.search import search
from verifiers.opt import answer

SEEDS = 40


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with discover().opened(Settings(data_dir=tmp_path_factory.mktemp("data"))) as opened:
        yield opened


def _experts(rng: random.Random) -> list[Mutant]:
    return [
        mutant
        for _ in range(SEEDS)
        for mutant in opt_search.seeds(rng)
        if mutant.probe.origin == "seed" and mutant.deserves == 1.0
    ]


def test_seeds_cover_every_task_and_deserve_what_the_judge_says() -> None:
    rng = random.Random(1)
    drawn = [mutant for _ in range(SEEDS) for mutant in opt_search.seeds(rng)]
    tasks = {opt_search.target(m.probe).task for m in drawn}  # type: ignore[union-attr]
    assert tasks == set(TASKS)
    for mutant in drawn:
        if mutant.probe.origin == "seed":
            assert mutant.deserves == opt_search.deserves(mutant.probe)
    greedy = [m for m in drawn if m.probe.response.startswith("A greedy")]
    assert any(0 < (m.deserves or 0) < 1 for m in greedy), "no suboptimal near-solution"


def test_the_judge_pays_the_expert_fully_and_decoys_nothing() -> None:
    rng = random.Random(2)
    for expert in _experts(rng):
        assert opt_search.deserves(expert.probe) == 1.0
        wrong = opt_search.decoys(expert.probe, rng)
        assert wrong, expert.probe.task_id
        for decoy in wrong:
            assert opt_search.deserves(expert.probe.answer(decoy, "decoy")) == 0.0


def test_every_move_makes_mutants() -> None:
    rng = random.Random(3)
    experts = _experts(rng)
    for move in opt_search.SEARCH.mutators:
        made = [m for expert in experts for m in move(expert, rng)]
        assert made, move.name
        assert all(m.probe.response != "" or move.name == "vacuous" for m in made)


def test_format_confusions_are_outside_the_grammar() -> None:
    rng = random.Random(4)
    (confusions,) = [move for move in opt_search.SEARCH.mutators if move.name == "format"]
    for expert in _experts(rng):
        for _ in range(5):
            for mutant in confusions(expert, rng):
                assert mutant.deserves == 0.0
                assert opt_search.deserves(mutant.probe) == 0.0, mutant.probe.response


def test_the_judge_agrees_with_the_verifier_on_near_solutions(registry: Registry) -> None:
    # Two independent readings of the same contract: every perturbed answer of every task
    # (feasible or not, valued exactly) gets the same reward from both.
    rng = random.Random(5)
    target = redteam.InProcess(registry)
    moves = {move.name: move for move in opt_search.SEARCH.mutators}
    checked = feasible = 0
    for expert in _experts(rng):
        for mutant in [*moves["perturb"](expert, rng), *moves["claim"](expert, rng)]:
            got = redteam.score_case(target, mutant.probe)
            deserved = opt_search.deserves(mutant.probe)
            assert got.reward == pytest.approx(deserved), (mutant.probe.response, got.detail)
            checked += 1
            feasible += bool(deserved)
    assert checked > 50 and feasible > 10


def test_reward_options_are_judged_as_documented() -> None:
    instance = TASKS["knapsack"].example_input
    half = "Answer: [2]"  # value 8 of 11
    assert judge.deserved("knapsack", instance, 11, half, {}) == pytest.approx(8 / 11)
    assert judge.deserved("knapsack", instance, 11, half, {"mode": "binary"}) == 1.0
    assert judge.deserved("knapsack", instance, 11, half, {"power": 2}) == pytest.approx(
        (8 / 11) ** 2
    )
    assert judge.deserved("knapsack", instance, 11, half, {"threshold": 0.9}) == 0.0


def test_a_search_finds_the_last_answer_rule_and_nothing_once_it_is_fixed(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = redteam.InProcess(registry)
    fixed = search("opt", opt_search.SEARCH, target, budget_s=60, seed=11, max_tries=300)
    assert not fixed.failed, fixed.as_json()
    # Before issue 38 an earlier 'Answer:' was never read: only the last counted.
    monkeypatch.setattr(answer, "_offered", lambda segment: None)
    before = search("opt", opt_search.SEARCH, target, budget_s=60, seed=11, max_tries=300)
    assert set(before.paid) == {"several"}, before.as_json()


def test_probes_of_other_families_are_not_judged() -> None:
    assert opt_search.deserves(Probe("Answer: [0]", task_id="math@1/3")) is None


def test_an_encoded_answer_is_not_encoded_again() -> None:
    # rot13 of a rot13 answer is the answer itself: the generic move claimed 0 for it, and the
    # judge (which reads the right answer back) disagreed on the first OPT search.
    (encode,) = [move for move in opt_search.SEARCH.mutators if move.name == "encode"]
    rng = random.Random(6)
    expert = Mutant(Probe("Answer: [0, 1]", task_id="opt/knapsack@1/3?level=easy"), 1.0)
    for _ in range(20):
        (encoded,) = encode(expert, rng)
        # Digits survive rot13 and a reversal: the judge decides those; the others settle 0.
        keeps_digits = encoded.probe.origin.endswith(("rot13", "reversed"))
        assert encoded.deserves == (None if keeps_digits else 0.0)
        assert not list(encode(encoded, rng))
