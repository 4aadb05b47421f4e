"""The sbol family's search space (issue 38): its moves make mutants settled by construction,
the placed defects deserve exactly the levels below them, and a search finds the last-block
reading of a response with two programs, and nothing once it is fixed."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

import verifiers.sbol
from environments.sbol import program
from environments.sbol import search as sbol_search
from environments.search import Mutant, Probe, SearchSpace
from envserver import redteam
from envserver.config import Settings
from envserver.registry import Registry, discover
from envserver.search import search

TASK = "sbol/design@1/3?circuit=not_gate&difficulty=easy"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with discover().opened(Settings(data_dir=tmp_path_factory.mktemp("data"))) as opened:
        yield opened


def _expert(task_id: str = TASK) -> Mutant:
    task = sbol_search._task(task_id)
    assert task.answer is not None
    text = sbol_search._fenced(program.render(task.answer))
    return Mutant(Probe(text, task_id=task_id), 1.0)


def test_seeds_are_experts_placed_defects_and_must_pay_cases() -> None:
    rng = random.Random(1)
    drawn = [m for _ in range(12) for m in sbol_search.seeds(rng)]
    kinds = {m.probe.origin.split(":")[0] for m in drawn}
    assert kinds == {"seed", "redteam"}
    assert len({str(m.probe.task_id).split("@")[0] for m in drawn if m.probe.origin == "seed"}) > 3
    partial = {m.deserves for m in drawn if m.probe.origin.startswith("seed: ")}
    assert partial and partial <= {0.0, 0.2, 0.4, 0.6, 0.8}


def test_every_move_makes_mutants() -> None:
    rng = random.Random(2)
    expert = _expert()
    for move in sbol_search.SEARCH.mutators:
        assert list(move(expert, rng)), move.name


def test_placed_defects_and_settled_moves_score_as_they_deserve(registry: Registry) -> None:
    # One task, every defect level and every own move: the verifier pays each no more than
    # the levels the change leaves, and the moves that bound a level are tight here.
    target = redteam.InProcess(registry)
    rng = random.Random(3)
    expert = _expert()
    task = sbol_search._task(TASK)
    assert task.answer is not None
    for defect, level in program.DEFECTS.items():
        if defect in ("rewired",):  # a rewired NOT gate has no second promoter to trade
            continue
        broken = program.inject(task.answer, defect, random.Random(4))
        got = redteam.score_case(target, expert.probe.answer(sbol_search._fenced(broken), defect))
        assert got.reward == pytest.approx(0.2 * (level - 1)), (defect, got.detail)
    moves = {move.name: move for move in sbol_search.SEARCH.mutators}
    for name in ("unwired", "contradict", "duplicate", "fake", "slow"):
        for mutant in moves[name](expert, rng):
            got = redteam.score_case(target, mutant.probe)
            assert mutant.deserves is not None and got.reward is not None
            assert got.status == "ok" and got.reward <= mutant.deserves + 1e-9, got.detail
            if name in ("unwired", "contradict"):
                assert got.reward == pytest.approx(0.8), got.detail


def test_junk_beside_a_right_circuit_is_not_claimed_legitimate() -> None:
    rng = random.Random(5)
    (crash,) = [move for move in sbol_search.SEARCH.mutators if move.name == "crash"]
    assert all(m.deserves is None for m in crash(_expert(), rng))
    partial = Mutant(_expert().probe, 0.6)
    assert all(m.deserves == 0.6 for m in crash(partial, rng))


def test_a_search_finds_the_last_block_reading_and_nothing_once_it_is_fixed(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = redteam.InProcess(registry)
    expert = _expert()
    (several,) = [move for move in sbol_search.SEARCH.mutators if move.name == "several"]
    space = SearchSpace(lambda rng: iter([expert]), [several])
    fixed = search("sbol", space, target, budget_s=120, seed=6, max_tries=6)
    assert not fixed.failed, fixed.as_json()

    def last_block(response: str, language: str) -> str:
        return response.rsplit("```python\n", maxsplit=1)[-1].split("```", maxsplit=1)[0]

    monkeypatch.setattr(verifiers.sbol, "extract_code", last_block)
    before = search("sbol", space, target, budget_s=120, seed=6, max_tries=6)
    assert set(before.paid) == {"several"}, before.as_json()
