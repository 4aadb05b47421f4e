"""The tamarin family's search space (issue 38): its seeds are Tamarin's proofs and deserve the
win, its judge replays actions over the recorded graph and reads them at least as generously
as the environment, and a search finds the defect of a source under a recorded name."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

import pytest

from environments.search import Mutant
from environments.tamarin import search as tamarin_search
from environments.tamarin.model import one_line
from environments.tamarin.provers import provers
from environments.tamarin.render import resolve_action
from envserver import redteam
from envserver.config import Settings
from envserver.registry import Registry, discover
from envserver.search import search
from verifiers.tamarin.prover import find_prover

pytestmark = pytest.mark.skipif(
    find_prover() is not None, reason="the judge decides only what the recording decides"
)


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with discover().opened(Settings(data_dir=tmp_path_factory.mktemp("data"))) as opened:
        yield opened


@pytest.mark.parametrize(("theory", "lemma"), provers().servable())
def test_tamarins_proofs_deserve_the_win_and_one_step_less_does_not(
    theory: str, lemma: str
) -> None:
    proof = tamarin_search.expert_proof(theory, lemma)
    assert proof is not None
    for actions in proof:
        probe = tamarin_search.episode(theory, lemma, actions, "seed")
        assert tamarin_search.deserves(probe) == 1.0
        assert tamarin_search.deserves(probe.played(actions[:-1], "truncate")) == 0.0
        # Junk between the steps costs steps, not the proof: it still deserves the win.
        padded = [a for step in actions for a in (step, "sorry")]
        assert tamarin_search.deserves(probe.played(padded, "insert")) == 1.0
        # ... but not within as many steps as the proof has.
        limit = {**probe.options, "max_steps": len(actions)}
        tight = replace(probe, actions=tuple(padded), options=limit)
        assert tamarin_search.deserves(tight) == 0.0


def test_the_judges_readings_hold_every_action_the_environment_accepts() -> None:
    recorded = provers().replay.recorded
    checked = 0
    for theory in recorded.values():
        for node in list(theory.nodes.values())[:200]:
            view = node.view
            for rank, method in enumerate(view.methods, start=1):
                text = one_line(method.text)
                forms = [str(rank), f"{rank}.", f"method {rank}", f" #{rank} ", text,
                         text.replace(" ", ""), f"by {text}"]  # fmt: skip
                for form in forms:
                    accepted = resolve_action(form, view)
                    if accepted is not None:
                        assert accepted in tamarin_search.readings(form, view), (form, text)
                        checked += 1
            for hostile in ("1\nSOLVED", "sorry", "SOLVED", "1 // SOLVED", "x" * 500, ""):
                if resolve_action(hostile, view) is None:
                    assert not tamarin_search.readings(hostile, view), hostile
    assert checked > 1000


def test_a_changed_source_under_a_recorded_name_deserves_nothing_without_a_prover() -> None:
    rng = random.Random(3)
    seed = next(tamarin_search.seeds(rng))
    changed = next(m for m in tamarin_search.SEARCH.mutators if m.name == "source")
    for _ in range(10):
        for mutant in changed(seed, rng):
            assert tamarin_search.deserves(mutant.probe) == 0.0
    recorded = provers().theories[str(seed.probe.options["theory"])].text
    same = replace(seed.probe, options={"source": recorded, "lemma": seed.probe.options["lemma"]})
    assert tamarin_search.deserves(same) == 1.0


def _search(registry: Registry, tries: int) -> tuple[int, set[str]]:
    report = search(
        "tamarin",
        tamarin_search.SEARCH,
        redteam.InProcess(registry),
        budget_s=120,
        seed=11,
        max_tries=tries,
    )
    return report.tried.total(), set(report.paid)


def test_a_search_finds_a_source_served_by_its_name_and_nothing_on_main(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    tried, paid = _search(registry, 300)
    assert tried >= 300 and paid == set()
    # The defect of issue 38, planted back: the replay serves any text under a recorded name.
    replay = provers().replay
    monkeypatch.setattr(replay, "serves", lambda theory: theory.name in replay.recorded)
    monkeypatch.setattr(replay, "_theory", lambda theory: replay.recorded[theory.name])
    _, planted = _search(registry, 300)
    assert "source" in planted


def test_seeds_are_every_kind_of_lemma_by_rank_and_by_text() -> None:
    rng = random.Random(0)
    drawn: list[Mutant] = [m for _ in range(30) for m in tamarin_search.seeds(rng)]
    assert {m.probe.origin for m in drawn} == {"expert", "expert.text"}
    assert {m.probe.options["lemma"] for m in drawn} >= {"Client_auth", "Start_before_Stop"}
    assert all(m.deserves == 1.0 for m in drawn)
