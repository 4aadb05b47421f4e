"""The differential test: the native engine equals ALFWorld's own engine, byte for byte.

A bounded sample for CI: one generated game of each task type (small scenes, so ALFWorld's
engine stays quick), both grammars, with the expert's plan, a random walk mixed with invalid and
misspelt commands, moves between receptacles sharing a location, object changes with examines
and slicing, and (on one game) a walk past the 50-step limit. Then the same on game files in
ALFWorld's released layout, the native engine playing what it reads from each file: games the
test writes (the release cannot be downloaded here), and a sample of the release itself where
``ALFWORLD_DATA`` holds it. The benchmark-sized runs are ``envserver alfworld differential
--games 1000`` and ``python -m benchmarks.alfworld_released`` (README: the counts they printed).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from environments.alfworld.differential import (
    NativePlayer,
    Subject,
    check_file,
    check_game,
    released_files,
)
from environments.alfworld.export import write
from environments.alfworld.generator import MAX_STEPS, generate
from environments.alfworld.names import mangle
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
    player = NativePlayer(Subject.generated(game), "0.4")
    player.reset()
    frames = [player.step(command) for command in walk]
    assert len(walk) > MAX_STEPS
    assert frames[MAX_STEPS - 1].done and not frames[MAX_STEPS - 1].won
    assert not any(f.done for f in frames[: MAX_STEPS - 1])
    assert player.run.steps == MAX_STEPS


@pytest.mark.parametrize("index", range(len(TASK_TYPES)))
def test_native_plays_released_layout_files_as_alfworlds_engine_does(
    tmp_path: Path, index: int
) -> None:
    # A game written as ALFWorld's files, read back by the native engine's reader: both engines
    # play the same file, one through TextWorld, one through what problem.py made of it.
    game = generate(2000 + index, TASK_TYPES[index], ("valid_seen", "valid_unseen")[index % 2],
                    "easy")  # fmt: skip
    path = write(game, tmp_path, "0.3" if index % 2 else "0.4")
    names = ("expert", "noisy", "shared") + (("limit",) if index == 1 else ())
    report = check_file(path, index, names)
    assert report.mismatches == [], "\n".join(report.mismatches)
    assert report.sequences >= len(names) - 1  # "shared" needs two receptacles at one place
    assert report.steps >= len(game.walkthrough) + 8 + (MAX_STEPS if index == 1 else 0)


def test_alfworlds_released_games_where_alfworld_data_holds_them() -> None:
    # (Importing ALFWorld sets ALFWORLD_DATA to its default, ~/.cache/alfworld, when unset.)
    paths = released_files()
    if not paths:
        pytest.skip(
            f"no released games under ALFWORLD_DATA={os.environ.get('ALFWORLD_DATA')!r}: "
            "ALFWorld's release cannot be downloaded here; the released-layout files written "
            "by the test above stand in for them"
        )
    sample = paths[:: max(1, len(paths) // 12)][:12]
    for seed, path in enumerate(sample):
        report = check_file(path, seed, ("expert", "noisy"))
        assert report.mismatches == [], "\n".join(report.mismatches)


def test_a_file_departing_from_the_tables_plays_as_written_on_both(tmp_path: Path) -> None:
    # Facts a released file may state differently from the wheel's tables (an object that cannot
    # be picked up, a receptacle open at the start, an object already hot): the native engine
    # reads them from the file, and agrees with ALFWorld's engine playing the file.
    game = generate(2100, "pick_heat_then_place_in_recep", "train", "easy")
    path = write(game, tmp_path)
    other = next(o for o in game.scene.objects if o.type != game.goal.object_type)
    host = next(f for f in game.scene.receptacles if f.type in ("Fridge", "Microwave", "Cabinet"))
    document = json.loads(path.read_text())
    problem = document["pddl_problem"].replace(f"(pickupable {mangle(other.id)})", "")
    problem = problem.replace(
        "(atLocation agent1",
        f"(opened {mangle(host.id)})\n(isHot {mangle(other.id)})\n(atLocation agent1",
    )
    document["pddl_problem"] = problem
    path.write_text(json.dumps(document))
    report = check_file(path, 7, ("expert", "noisy", "walk"))
    assert report.mismatches == [], "\n".join(report.mismatches)
    assert report.sequences == 3
