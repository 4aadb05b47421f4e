"""ALFWorld's released layout on the native engine: the differential check and the speed of both
engines on game files (``game.tw-pddl`` + ``traj_data.json``), the native engine playing what
``problem.py`` reads from each file, ALFWorld's engine the file itself.

The files are ALFWorld's release under ``ALFWORLD_DATA`` with ``--released`` (every playable
game of every split, or ``--games`` of them), else generated games the script writes in the
released layout (the release cannot be downloaded here): all task types, both grammars, easy,
medium and hard scenes.

Differential: per file, the expert's plan, a random walk, a walk with 30 % invalid or misspelt
commands, moves between receptacles sharing a location, object changes with examines, and on
every sixth file a walk past the 50-step cap; every step compared byte for byte.
Speed: per step, on the same files and commands (a random walk that never wins, then the
expert's plan): ALFWorld's engine (``PddlEnv`` behind its wrappers), the native engine alone,
and ``AlfWorldEnv.step`` from the JSON state of a released game (the world read once per worker).

    .venv/bin/python -m benchmarks.alfworld_released [--games 24] [--workers 2] [--released]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks.common import median, percentile
from environments.alfworld.differential import SEQUENCES, Report, check_file, released_files
from environments.alfworld.engine import commands, step, won
from environments.alfworld.export import write
from environments.alfworld.family import AlfWorldEnv, AlfWorldOptions
from environments.alfworld.generator import SPLITS, generate
from environments.alfworld.loader import DATA_ENV, native_game, released_games
from environments.alfworld.planner import expert_plan
from environments.alfworld.scenes import SIZES
from environments.alfworld.tables import TASK_TYPES


def exported(root: Path, count: int) -> list[Path]:
    """``count`` generated games written under ``root`` in the released layout."""
    sizes = list(SIZES)
    return [
        write(
            generate(5000 + i, TASK_TYPES[i % 6], SPLITS[(i // 6) % 3], sizes[i % 3]),
            root,
            "0.3" if i % 4 == 3 else "0.4",
        )
        for i in range(count)
    ]


def _check(path: Path, seed: int) -> Report:
    names = SEQUENCES if seed % 6 == 0 else SEQUENCES[:5]
    return check_file(path, seed, names)


def _split_and_relative(path: Path) -> tuple[str, str]:
    return path.parent.parent.parent.name, f"{path.parent.parent.name}/{path.parent.name}"


def speeds(paths: list[Path], walk: int) -> dict[str, list[float]]:
    """Per-step seconds of both engines and of the environment's step on the same commands."""
    from environments.alfworld.textworld_engine import engine

    real, env = engine(), AlfWorldEnv()
    found: dict[str, list[float]] = {"real": [], "native": [], "env": []}
    for index, path in enumerate(paths):
        split, relative = _split_and_relative(path)
        game, _ = native_game(split, relative)
        world, run, grammar = game.world, game.run, game.grammar
        rng, chosen = random.Random(index), []
        for _ in range(walk):
            options = [c for c in commands(world, run, grammar)
                       if not won(world, step(world, run, c, grammar).run)]  # fmt: skip
            chosen.append(rng.choice(options))
            run = step(world, run, chosen[-1], grammar).run
        chosen += expert_plan(world, run, grammar) or []
        real.reset(str(path))
        for command in chosen:
            started = time.perf_counter()
            real.step(command)
            found["real"].append(time.perf_counter() - started)
        run = game.run
        for command in chosen:
            started = time.perf_counter()
            outcome = step(world, run, command, grammar)
            commands(world, outcome.run, grammar)  # what PddlEnv computes every step too
            found["native"].append(time.perf_counter() - started)
            run = outcome.run
        listed = [game.relative for game in released_games(split)]
        options = AlfWorldOptions(games="released", split=split, step_limit=1000,
                                  game_index=listed.index(relative))  # fmt: skip
        state = env.reset(0, options).state
        for command in chosen:
            raw = json.loads(json.dumps(state))
            started = time.perf_counter()
            result = env.step(raw, command)
            found["env"].append(time.perf_counter() - started)
            state = result.state
            if result.terminated:
                break
    return found


def _row(name: str, values: list[float]) -> str:
    p50, p95 = median(values) * 1e3, percentile(values, 95) * 1e3
    return f"{name:<40} {len(values):>6} {p50:>10.3f} {p95:>10.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=24)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--walk", type=int, default=20)
    parser.add_argument("--speed-games", type=int, default=6)
    parser.add_argument("--released", action="store_true", help=f"the games under {DATA_ENV}")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if args.released:
            paths = released_files()[: args.games]
            what = f"ALFWorld's released games under {DATA_ENV}"
        else:
            os.environ[DATA_ENV] = folder  # the environment's step reads the games from here
            paths = sorted(exported(Path(folder), args.games))
            what = "generated games exported in the released layout"
        started = time.perf_counter()
        report = Report()
        with ProcessPoolExecutor(args.workers) as pool:
            for part in pool.map(_check, paths, range(len(paths))):
                report.merge(part)
        for mismatch in report.mismatches:
            print(mismatch)
        agreeing = report.sequences - len(report.mismatches)
        took = time.perf_counter() - started
        print(f"differential on {report.games} files ({what}): {report.sequences} sequences, "
              f"{report.steps} steps, agreement {agreeing}/{report.sequences}, "
              f"{len(report.mismatches)} mismatches, {took:.0f} s")  # fmt: skip
        found = speeds(paths[: args.speed_games], args.walk)
    print(f"\nper step, {min(args.speed_games, len(paths))} files, {args.walk} random steps + plan")
    print(f"{'':<40} {'steps':>6} {'p50 ms':>10} {'p95 ms':>10}")
    print(_row("ALFWorld (TextWorld PddlEnv) on the file", found["real"]))
    print(_row("native engine on the file's world", found["native"]))
    print(_row("native AlfWorldEnv.step (released game)", found["env"]))
    real = median(found["real"])
    print(f"p50 ratio ALFWorld / native engine: {real / median(found['native']):,.0f}x; "
          f"ALFWorld / AlfWorldEnv.step: {real / median(found['env']):,.0f}x")  # fmt: skip


if __name__ == "__main__":
    main()
