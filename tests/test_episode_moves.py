"""The generic moves on an episode's actions (``environments.mutators.episode_moves``): each
changes the actions its own way, keeps the episode's target, and settles only what it can."""

from __future__ import annotations

import random

from environments.mutators import episode_moves
from environments.search import Mutant, Probe

ACTIONS = ("search[red shoes]", "click[b0abc]", "click[size 9]", "click[buy now]")
OTHER = ("go to desk 1", "take mug 1 from desk 1")
MOVES = {move.name: move for move in episode_moves(lambda probe, rng: OTHER)}
WON = Mutant(Probe(env="e", seed=3, options={"o": 1}, actions=ACTIONS, origin="expert"), 1.0)
LOST = Mutant(Probe(env="e", seed=3, actions=ACTIONS[:2]), 0.0)


def _made(move: str, parent: Mutant = WON, draws: int = 50) -> list[Mutant]:
    rng = random.Random(0)
    return [m for _ in range(draws) for m in MOVES[move](parent, rng)]


def test_every_class_is_there_and_keeps_the_episode() -> None:
    assert set(MOVES) == {"truncate", "repeat", "insert", "swap", "hostile", "foreign"}
    for name in MOVES:
        made = _made(name)
        assert made, name
        for mutant in made:
            probe = mutant.probe
            assert (probe.env, probe.seed, dict(probe.options)) == ("e", 3, {"o": 1})
            assert probe.actions != ACTIONS and probe.origin == f"expert > {name}"


def test_what_each_move_does() -> None:
    assert all(m.probe.actions == ACTIONS[: len(m.probe.actions or ())] for m in _made("truncate"))
    assert all(len(m.probe.actions or ()) > len(ACTIONS) for m in _made("repeat"))
    assert all(len(m.probe.actions or ()) == len(ACTIONS) + 1 for m in _made("insert"))
    assert all(sorted(m.probe.actions or ()) == sorted(ACTIONS) for m in _made("swap"))
    hostile = [a for m in _made("hostile") for a in m.probe.actions or () if a not in ACTIONS]
    assert any(a.startswith("click[") and len(a) > 1000 for a in hostile)  # an oversized argument
    assert any("\u200b" in a or "\x00" in a for a in hostile)  # invisible or NUL
    assert any(set(OTHER) & set(m.probe.actions or ()) for m in _made("foreign"))


def test_only_a_prefix_of_a_lost_episode_is_settled() -> None:
    assert all(m.deserves == 0.0 for m in _made("truncate", LOST))
    assert all(m.deserves is None for m in _made("truncate"))
    for name in set(MOVES) - {"truncate"}:
        assert all(m.deserves is None for m in _made(name, LOST)), name


def test_episode_moves_leave_single_answers_alone() -> None:
    answer = Mutant(Probe("42", verifier="v", reference="42"), 1.0)
    assert not [m for move in MOVES.values() for m in move(answer, random.Random(0))]
