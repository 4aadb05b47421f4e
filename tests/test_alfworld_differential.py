"""The differential test: the native engine equals ALFWorld's own engine, byte for byte.

A bounded sample for CI: one generated game of each task type (small scenes, so ALFWorld's
engine stays quick), both grammars, with the expert's plan, a random walk mixed with invalid and
misspelt commands, moves between receptacles sharing a location, object changes with examines
and slicing, and (on one game) a walk past the 50-step limit. The benchmark-sized run is
``envserver alfworld differential --games 1000`` (README: the count it printed).
"""

from __future__ import annotations

import pytest

from environments.alfworld.differential import NativePlayer, check_game
from environments.alfworld.generator import MAX_STEPS, generate
from environments.alfworld.tables import TASK_TYPES

pytest.importorskip("textworld", reason="ALFWorld's engine is the alfworld extra")


@pytest.fixture(scope="module")
def real() -> object:
    from environments.alfworld.textworld_engine import engine

    return engine()


@pytest.mark.parametrize("index", range(len(TASK_TYPES)))
def test_native_equals_alfworlds_engine(real: object, index: int) -> None:
    task_type = TASK_TYPES[index]
    game = generate(1000 + index, task_type, ("train", "valid_seen", "valid_unseen")[index % 3],
                    "easy" if index % 2 else "medium")  # fmt: skip
    grammar = "0.3" if index % 2 else "0.4"
    names = ("expert", "noisy", "shared", "states") + (("limit",) if index == 0 else ())
    report = check_game(game, grammar, real, index, names=names, longest=15)
    assert report.mismatches == [], "\n".join(report.mismatches)
    # "shared" needs two receptacles at one place, "states" an object that can change.
    assert report.sequences >= len(names) - 2
    assert report.steps >= len(game.walkthrough) + 8 + (MAX_STEPS if index == 0 else 0)


def test_the_limit_walk_reaches_the_cap() -> None:
    # The long walk really runs into the step limit: it never takes a winning command.
    game = generate(1000, TASK_TYPES[0], "train", "medium")
    from environments.alfworld.differential import sequences

    walk = dict(sequences(game, "0.4", 0, names=("limit",)))["limit"]
    player = NativePlayer(game, "0.4")
    player.reset()
    frames = [player.step(command) for command in walk]
    assert len(walk) > MAX_STEPS
    assert frames[MAX_STEPS - 1].done and not frames[MAX_STEPS - 1].won
    assert not any(f.done for f in frames[: MAX_STEPS - 1])
    assert player.run.steps == MAX_STEPS
