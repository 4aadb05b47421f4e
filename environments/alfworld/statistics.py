"""Statistics of generated games, next to what is known of ALFWorld's released ones: scene
sizes per difficulty and room, and the expert's success and plan lengths per task type.

    envserver alfworld statistics [--games 100]   (per task type and split)
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from environments.alfworld.engine import step, won
from environments.alfworld.generator import MAX_STEPS, SPLITS, generate
from environments.alfworld.scenes import SIZES
from environments.alfworld.tables import TASK_TYPES


def _spread(values: list[int]) -> str:
    return (
        f"{min(values):>4} {statistics.median(values):>6.1f} {statistics.mean(values):>6.1f} "
        f"{max(values):>4}"
    )


def report(games: int) -> None:
    """Print the tables for ``games`` seeds per task type and split."""
    sizes: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    plans: dict[str, list[int]] = defaultdict(list)
    wins: dict[str, int] = defaultdict(int)
    played: dict[str, int] = defaultdict(int)
    for task_type in TASK_TYPES:
        for split in SPLITS:
            for seed in range(games):
                for difficulty in SIZES:
                    game = generate(seed, task_type, split, difficulty)  # type: ignore[arg-type]
                    scene = game.scene
                    sizes[(difficulty, scene.room)].append(
                        (len(scene.receptacles), len(scene.objects))
                    )
                    world, run = game.world, game.run
                    for command in game.walkthrough:
                        run = step(world, run, command, "0.4").run
                    wins[task_type] += won(world, run) and run.steps <= MAX_STEPS
                    played[task_type] += 1
                    if difficulty == "hard":
                        plans[task_type].append(len(game.walkthrough))
    print("scene sizes per difficulty and room: receptacles | objects (min median mean max)")
    for (difficulty, room), rows in sorted(sizes.items()):
        receptacles, objects = [r for r, _ in rows], [o for _, o in rows]
        print(f"{difficulty:<7} {room:<11} {len(rows):>5}  {_spread(receptacles)} | "
              f"{_spread(objects)}")  # fmt: skip
    print("\nexpert: wins within 50 steps (all sizes) | plan length on hard games "
          "(min median mean max)")  # fmt: skip
    for task_type in TASK_TYPES:
        print(f"{task_type:<32} {wins[task_type]:>5}/{played[task_type]:<5} | "
              f"{_spread(plans[task_type])}")  # fmt: skip
