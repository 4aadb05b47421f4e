"""ALFWorld: the native engine's step next to ALFWorld's own engine on the same games and
commands in the same run, and reset + step over HTTP.

Each game is played on both engines with the same commands (a seeded random walk over the
admissible commands that never wins, then the expert's plan from there). Native latency is
measured twice: the engine alone (world and run in memory) and ``AlfWorldEnv.step`` from the
JSON state a worker receives (state checks, admissible commands, components). ALFWorld's is
``PddlEnv.step`` behind its wrappers.
Target (issue 15): native at least 1,000 times faster per step.

    .venv/bin/python -m benchmarks.alfworld_step [--games 12] [--http-episodes 60]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

import httpx

from benchmarks.common import median, percentile, server
from environments.alfworld.engine import commands, step, won
from environments.alfworld.export import game_file
from environments.alfworld.family import AlfWorldEnv, AlfWorldOptions
from environments.alfworld.generator import generate
from environments.alfworld.planner import expert_plan
from environments.alfworld.tables import TASK_TYPES


def _commands(game: Any, seed: int, length: int) -> list[str]:
    """A seeded random walk that does not win, then the expert's plan from where it ends: every
    command is a real step (neither engine has finished before the last)."""
    rng = random.Random(seed)
    world, run = game.world, game.run
    chosen: list[str] = []
    for _ in range(length):
        options = [
            c for c in commands(world, run, "0.4") if not won(world, step(world, run, c, "0.4").run)
        ]
        command = rng.choice(options)
        chosen.append(command)
        run = step(world, run, command, "0.4").run
    return chosen + (expert_plan(world, run) or [])


def engines(games: int, walk: int) -> dict[str, Any]:
    """Per-step latency of both engines on the same games and commands."""
    from environments.alfworld.textworld_engine import engine

    real = engine()
    env = AlfWorldEnv()
    native_engine: list[float] = []
    native_env: list[float] = []
    real_steps: list[float] = []
    for index in range(games):
        difficulty = ("medium", "hard")[index % 2]
        task_type = TASK_TYPES[index % len(TASK_TYPES)]
        game = generate(index, task_type, "train", difficulty)
        chosen = _commands(game, index, walk)
        # ALFWorld's engine.
        real.reset(real.game_path(game_file(game)))
        for command in chosen:
            started = time.perf_counter()
            real.step(command)
            real_steps.append(time.perf_counter() - started)
        # The native engine alone.
        world, run = game.world, game.run
        for command in chosen:
            started = time.perf_counter()
            outcome = step(world, run, command, "0.4")
            commands(world, outcome.run, "0.4")  # what PddlEnv computes every step too
            native_engine.append(time.perf_counter() - started)
            run = outcome.run
        # The environment, from the JSON state a worker gets.
        options = AlfWorldOptions(task_type=task_type, difficulty=difficulty, step_limit=1000)
        state = env.reset(index, options).state
        for command in chosen:
            raw = json.loads(json.dumps(state))
            started = time.perf_counter()
            result = env.step(raw, command)
            native_env.append(time.perf_counter() - started)
            state = result.state
            if result.terminated:
                break
    return {"real": real_steps, "engine": native_engine, "env": native_env}


def http_latency(episodes: int) -> dict[str, list[float]]:
    """Reset and step round trips over HTTP (expert episodes, 2 pool workers)."""
    resets: list[float] = []
    steps: list[float] = []
    live = server(2).start(timeout_s=300)  # a loaded machine starts the pool slowly
    try:
        with httpx.Client(base_url=live.base_url, timeout=120) as http:
            for warm in range(4):  # warm the workers (imports, first games)
                http.post("/v1/envs/alfworld/reset", json={"seed": 10_000 + warm})
            for seed in range(episodes):
                options = {"task_type": TASK_TYPES[seed % len(TASK_TYPES)], "expert_plan": True}
                body = {"seed": seed, "options": options}
                started = time.perf_counter()
                reply = http.post("/v1/envs/alfworld/reset", json=body).json()
                resets.append(time.perf_counter() - started)
                token = reply["state"]
                for command in reply["info"]["expert_plan"]:
                    started = time.perf_counter()
                    answer = http.post(
                        "/v1/envs/alfworld/step", json={"state": token, "action": command}
                    )
                    steps.append(time.perf_counter() - started)
                    token = answer.json()["state"]
    finally:
        live.stop()
    return {"reset": resets, "step": steps}


def _row(name: str, values: list[float]) -> str:
    p50, p95 = median(values) * 1e3, percentile(values, 95) * 1e3
    return (
        f"{name:<34} {len(values):>6} {p50:>10.3f} {p95:>10.3f} {len(values) / sum(values):>10.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--walk", type=int, default=20)
    parser.add_argument("--http-episodes", type=int, default=60)
    args = parser.parse_args()
    found = engines(args.games, args.walk)
    print(f"per step, {args.games} games (medium and hard), {args.walk} random steps + the plan")
    print(f"{'':<34} {'steps':>6} {'p50 ms':>10} {'p95 ms':>10} {'steps/s':>10}")
    print(_row("ALFWorld (TextWorld PddlEnv)", found["real"]))
    print(_row("native engine", found["engine"]))
    print(_row("native AlfWorldEnv.step (JSON state)", found["env"]))
    real = median(found["real"])
    print(f"p50 ratio ALFWorld / native engine: {real / median(found['engine']):,.0f}x; "
          f"ALFWorld / AlfWorldEnv.step: {real / median(found['env']):,.0f}x")  # fmt: skip
    latency = http_latency(args.http_episodes)
    print(f"\nover HTTP ({args.http_episodes} expert episodes, 2 pool workers, one client)")
    print(f"{'':<34} {'calls':>6} {'p50 ms':>10} {'p95 ms':>10} {'calls/s':>10}")
    print(_row("reset", latency["reset"]))
    print(_row("step", latency["step"]))


if __name__ == "__main__":
    main()
