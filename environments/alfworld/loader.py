"""ALFWorld's released games under ``ALFWORLD_DATA``, found as ``AlfredTWEnv.collect_game_files``
finds them.

The layout is ``$ALFWORLD_DATA/json_2.1.1/{train,valid_seen,valid_unseen}/<task>/<trial>/``
with ``traj_data.json`` and ``game.tw-pddl`` (``alfworld-download``'s). As the original does,
paths containing ``movable`` or ``Sliced`` are skipped, and so are games without a
``game.tw-pddl`` or without ``"solvable": true``; the task type comes from ``traj_data.json``.
Games are listed in sorted path order, so a game index means the same game on every machine; task
types other than the six are skipped (``env.task_types``' default). ``native_game`` reads one for
the native engine (``problem.py``), once per worker and file version.
Game files hold grammar code that TextWorld evaluates: point ``ALFWORLD_DATA`` only at data you
trust (ALFWorld's release).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from environments.alfworld.problem import GameFile, read_text
from environments.alfworld.tables import TASK_TYPES

DATA_ENV = "ALFWORLD_DATA"
RELEASE = "json_2.1.1"


class DataUnavailable(RuntimeError):
    """``ALFWORLD_DATA`` is unset or holds no games for the request."""


@dataclass(frozen=True)
class ReleasedGame:
    """One playable game: its path relative to the split folder, and its task type."""

    relative: str
    task_type: str


def data_root() -> Path:
    """``$ALFWORLD_DATA/json_2.1.1``; raises DataUnavailable when unset or missing."""
    value = os.environ.get(DATA_ENV)
    if not value:
        raise DataUnavailable(
            f"released games need {DATA_ENV} pointing at ALFWorld's data (alfworld-download)"
        )
    root = Path(value).expanduser() / RELEASE
    if not root.is_dir():
        raise DataUnavailable(f"{DATA_ENV}={value} has no {RELEASE}/ folder")
    return root


@cache
def _collect(folder: Path) -> tuple[ReleasedGame, ...]:
    games = []
    for traj in sorted(folder.rglob("traj_data.json")):
        trial = traj.parent
        relative = trial.relative_to(folder).as_posix()
        if "movable" in relative or "Sliced" in relative:
            continue
        game = trial / "game.tw-pddl"
        if not game.is_file():
            continue
        try:
            task_type = json.loads(traj.read_text())["task_type"]
            solvable = json.loads(game.read_text()).get("solvable")
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if solvable and task_type in TASK_TYPES:
            games.append(ReleasedGame(relative, str(task_type)))
    return tuple(games)


def released_games(split: str, task_type: str | None = None) -> list[ReleasedGame]:
    """The playable games of ``split`` (of ``task_type`` when given), in sorted path order."""
    folder = data_root() / split
    games = [g for g in _collect(folder) if task_type is None or g.task_type == task_type]
    if not games:
        which = f" of type {task_type}" if task_type else ""
        raise DataUnavailable(f"no playable games{which} in {folder}")
    return games


def game_path(split: str, relative: str) -> Path:
    """The ``game.tw-pddl`` of a listed game; refuses paths outside the split folder."""
    folder = (data_root() / split).resolve()
    path = (folder / relative / "game.tw-pddl").resolve()
    if folder not in path.parents or not path.is_file():
        raise DataUnavailable(f"no released game {relative!r} in split {split!r}")
    return path


def native_game(split: str, relative: str) -> tuple[GameFile, str]:
    """A listed game read for the native engine, and the digest of its ``game.tw-pddl``;
    raises DataUnavailable, or UnsupportedGame for a file the engine does not model."""
    path = game_path(split, relative)
    found = path.stat()
    return _native(str(path), found.st_mtime_ns, found.st_size)


@lru_cache(maxsize=256)
def _native(path: str, mtime_ns: int, size: int) -> tuple[GameFile, str]:
    # Keyed by the file's version too: a file replaced on disk is read again.
    game = Path(path)
    text = game.read_text()
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    return read_text(text, (game.parent / "traj_data.json").read_text()), digest
