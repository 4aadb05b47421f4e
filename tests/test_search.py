"""The searching adversary (``envserver audit --search``): it finds every loophole planted in
the control family (one per move class), over the registry and over a live server, finds
nothing in the control's sound twin, and finds nothing paid in any shipped family within the CI
budget (``make audit-search`` runs the same search longer)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from clients.audit import OverHttp
from clients.http import EnvServerClient
from environments.mutators import text_moves
from environments.search import Mutant, Probe
from envserver import redteam
from envserver.config import Settings
from envserver.registry import Registry, discover
from envserver.search import Report, search
from tests.conftest import make_server
from tests.plugins import loopholes
from tests.server import ROOT

PLUGIN = "tests.plugins.loopholes"
CONTROL = "test.loopholes"
"""The control family's name (its declaration's)."""
CLASSES = {*loopholes.PLANTED, "vacuous", *loopholes.EPISODE_LOOPHOLES}
PLANTED_IN = {"test.loopholes", "test.loopholes/buttons"}
"""Where the loopholes are; their sound twins (``test.loopholes.sound``, ``…/buttons-sound``)
must pay nothing."""
CI_BUDGET_S = float(os.environ.get("ENVSERVER_SEARCH_BUDGET_S", "20"))
"""Seconds per shipped family in CI; ``make audit-search`` sets more."""
CI_MIN_TRIES = 8
"""Mutants every shipped family's search tries however long they take (ALFWorld's first games
take seconds each on a loaded machine, and a search that tried nothing showed nothing)."""
CONTROL_TRIES = 3000
"""Enough for every planted class several times over (seed 7 finds each within about 300);
a count, not seconds, so a loaded machine finds the same."""


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("data"))
    with discover([PLUGIN]).opened(settings) as opened:
        yield opened


def control(target: redteam.Target) -> Report:
    return search(CONTROL, loopholes.SEARCH, target, budget_s=120, seed=7, max_tries=CONTROL_TRIES)


def paid_targets(report: Report) -> set[str]:
    return {finding.probe.target for finding in report.examples if finding.kind == "paid"}


def found_by_their_own_moves(report: Report) -> set[str]:
    """The classes with a finding that its own planted loophole paid (each loophole names
    itself in the score's detail), not only some other class's."""
    return {
        finding.move
        for finding in report.examples
        if finding.kind == "paid" and finding.got.detail.startswith(f"{finding.move}:")
    }


def test_the_search_finds_every_planted_loophole_in_process(registry: Registry) -> None:
    report = control(redteam.InProcess(registry))
    assert found_by_their_own_moves(report) == CLASSES, report.as_json()
    assert paid_targets(report) == PLANTED_IN, "the sound twins pay nothing"
    assert report.tried.total() == CONTROL_TRIES
    assert not report.dodged and not report.unscored, report.errors


def test_the_search_finds_every_planted_loophole_over_http(tmp_path: Path) -> None:
    plugins = f"tests.plugins.faulty,{PLUGIN}"
    server = make_server(tmp_path, ENVSERVER_PLUGINS=plugins)
    with server, EnvServerClient(server.base_url) as client:
        report = control(OverHttp(client))
    assert found_by_their_own_moves(report) == CLASSES, report.as_json()
    assert paid_targets(report) == PLANTED_IN


def test_a_search_is_replayed_by_its_seed(registry: Registry) -> None:
    first, second = (
        search(CONTROL, loopholes.SEARCH, redteam.InProcess(registry), budget_s=60, seed=3,
               max_tries=400)
        for _ in range(2)
    )  # fmt: skip
    assert first.as_json() | {"seconds": 0} == second.as_json() | {"seconds": 0}


def test_generic_moves_settle_what_they_can() -> None:
    rng = random.Random(0)
    right = Mutant(Probe("42", verifier="v", reference="42"), 1.0)
    wrong = Mutant(Probe("41", verifier="v", reference="42"), 0.0)
    moves = {move.name: move for move in text_moves(lambda probe, rng: ["41"])}
    for _ in range(20):
        for mutant in moves["several"](right, rng):
            assert mutant.deserves == 0.0 and "41" in mutant.probe.response
        for mutant in moves["encode"](right, rng):  # digits survive rot13 and a reversal
            keeps_digits = mutant.probe.origin.endswith(("rot13", "reversed"))
            assert mutant.deserves == (None if keeps_digits else 0.0)
        # A wrong parent's digits survive too, and the words that made it wrong may not ("Final
        # answer: $3$ Final answer: $4$" in rot13 is two numbers in prose): the judge decides.
        for mutant in moves["encode"](wrong, rng):
            keeps_digits = mutant.probe.origin.endswith(("rot13", "reversed"))
            assert mutant.deserves == (None if keeps_digits else 0.0)
        assert all(m.deserves == 0.0 for m in moves["vacuous"](right, rng))
        assert all(m.deserves is None for m in moves["wrap"](right, rng))
        assert all(m.deserves == 0.0 for m in moves["wrap"](wrong, rng))
    episode = Mutant(Probe(env="e", seed=1, actions=("a",)), 1.0)
    assert not [m for move in moves.values() for m in move(episode, rng)]


def test_the_cli_fails_on_a_finding_and_reports_it_as_json() -> None:
    env = {**os.environ, "ENVSERVER_PLUGINS": PLUGIN, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "envserver.cli", "audit", "--search", "--env", CONTROL,
         "--budget-s", "2", "--seed", "5", "--json"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 4, done.stderr
    (family,) = json.loads(done.stdout)["families"]
    assert family["family"] == CONTROL and family["paid"]["total"] > 0
    assert {example["move"] for example in family["examples"]} <= CLASSES


SHIPPED = discover().searches


@pytest.mark.parametrize("family", sorted(SHIPPED))
def test_a_search_of_a_shipped_family_finds_nothing_paid(family: str, registry: Registry) -> None:
    report = search(
        family,
        SHIPPED[family],
        redteam.InProcess(registry),
        budget_s=CI_BUDGET_S,
        min_tries=CI_MIN_TRIES,
        seed=random.SystemRandom().randrange(2**32),
    )
    assert report.tried.total() > 0
    assert not report.failed, json.dumps(report.as_json(), indent=1)[:4000]
    assert not report.misjudged, report.errors
