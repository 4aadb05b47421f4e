"""The alfworld family's search space (issue 38): the expert's plans deserve and earn the win,
the judge (the engine's step function, then ALFWorld's own engine) gives nothing to an episode
that does not reach the goal, runs ALFWorld's engine once for mutants that differ only in junk,
and a search finds a planted loophole."""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Iterator
from typing import Any

import pytest

from environments.alfworld import engines
from environments.alfworld import search as alfworld_search
from environments.alfworld.engine import won as reached
from environments.alfworld.family import AlfWorldEnv
from environments.alfworld.options import AlfWorldOptions
from environments.search import Mutant, Probe
from envserver.config import Settings
from envserver.registry import Registry, discover
from tests.search_support import last_reward, paid_classes

ALFWORLD = all(importlib.util.find_spec(name) for name in ("alfworld", "textworld"))
EASY = {"difficulty": "easy", "split": "train", "grammar": "0.4"}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with discover().opened(Settings(data_dir=tmp_path_factory.mktemp("data"))) as opened:
        yield opened


def _expert(seed: int) -> Probe:
    commands = alfworld_search.expert_commands(seed, tuple(sorted(EASY.items())))
    assert commands is not None
    return Probe(env="alfworld", seed=seed, options=EASY, actions=commands, origin="expert")


def _play(probe: Probe) -> float:
    env = AlfWorldEnv()
    state = env.reset(probe.seed or 0, AlfWorldOptions.model_validate(dict(probe.options))).state
    return last_reward(env, state, probe.actions or ())


def test_the_experts_plan_deserves_and_earns_the_win_and_less_does_not() -> None:
    expert = _expert(7)
    assert alfworld_search.deserves(expert) == 1.0 and _play(expert) == 1.0
    commands = expert.actions or ()
    assert alfworld_search.deserves(expert.played(commands[:-1], "truncate")) == 0.0
    limited = Probe(
        env="alfworld",
        seed=7,
        options={**EASY, "step_limit": len(commands) - 1},
        actions=commands,
    )
    assert alfworld_search.deserves(limited) == 0.0


@pytest.mark.skipif(not ALFWORLD, reason="ALFWorld's own engine (the alfworld extra) is absent")
def test_mutants_that_differ_only_in_junk_run_alfworlds_engine_once() -> None:
    expert = _expert(8)
    commands = list(expert.actions or ())
    assert alfworld_search.deserves(expert) == 1.0
    before = alfworld_search.alfworld_wins.cache_info()
    for junk in ("xyzzy", "take the moon", "  ", "go to nowhere 99"):
        padded = [commands[0], junk, *commands[1:]]
        assert alfworld_search.deserves(expert.played(padded, "insert")) == 1.0
    after = alfworld_search.alfworld_wins.cache_info()
    assert after.misses == before.misses and after.hits == before.hits + 4


def test_seeds_draw_games_of_every_kind() -> None:
    rng = random.Random(2)
    drawn: list[Mutant] = [m for _ in range(6) for m in alfworld_search.seeds(rng)]
    assert len(drawn) >= 12
    assert len({m.probe.options.get("task_type") for m in drawn}) >= 3
    assert {m.probe.options["grammar"] for m in drawn} == {"0.3", "0.4"}


def test_rename_aims_a_command_at_another_instance() -> None:
    rng = random.Random(3)
    expert = Mutant(_expert(9))
    rename = next(m for m in alfworld_search.SEARCH.mutators if m.name == "rename")
    for _ in range(10):
        (mutant,) = rename(expert, rng)
        changed = [
            (a, b)
            for a, b in zip(expert.probe.actions or (), mutant.probe.actions or (), strict=True)
            if a != b
        ]
        assert len(changed) == 1 and changed[0][0].split(" ")[0] == changed[0][1].split(" ")[0]


def _paid(registry: Registry, tries: int) -> set[str]:
    return paid_classes(
        "alfworld", alfworld_search.SEARCH, registry, tries=tries, seed=5, budget_s=600
    )


def test_a_search_finds_a_planted_early_win_and_nothing_on_main(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _paid(registry, 10) == set()

    # Planted: the environment declares the goal reached from the third step on.
    def early(world: Any, run: Any) -> bool:
        return reached(world, run) or run.steps >= 3

    monkeypatch.setattr(engines, "won", early)
    assert _paid(registry, 20)
