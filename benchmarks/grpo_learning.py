"""The GRPO trainer against a live server on CPU: does the reward rise, and how much of the wall
time is spent waiting for rewards with and without overlapping scoring with generation.

1. Learning check: a tiny randomly initialised GPT-2 (built locally) trains on a trivially
   learnable service environment (``bench/letters``: the share of the letter "a" in the first 16
   characters). Prints the mean reward of the first and last 10 steps; writes the curves.
2. Reward latency: the same short run on the ``math`` environment twice, ``overlap`` off and on;
   prints the fraction of wall time the trainer waited for rewards.

    .venv/bin/python -m benchmarks.grpo_learning [--steps 300] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from benchmarks.common import server
from clients.train.tiny import tiny_model
from clients.train.trainer import GRPOTrainer, TrainConfig

PLUGIN = {"ENVSERVER_PLUGINS": "benchmarks.plugins.letters"}


def _run(base_url: str, model_dir: Path, out: Path, **overrides: object) -> list[dict[str, float]]:
    config = TrainConfig(
        model=str(model_dir),
        base_url=base_url,
        output_dir=str(out),
        prompts_per_step=4,
        group_size=8,
        max_new_tokens=16,
        learning_rate=3e-3,
        micro_batch_size=32,
        checkpoint_every=10**9,
    )
    for key, value in overrides.items():
        setattr(config, key, value)
    return GRPOTrainer(config).train()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300, help="steps of the learning check")
    parser.add_argument("--latency-steps", type=int, default=20, help="steps per latency run")
    parser.add_argument("--quick", action="store_true", help="60 + 8 steps")
    parser.add_argument("--out", default="", help="where to keep runs and plots (temp dir)")
    args = parser.parse_args()
    steps, latency_steps = (60, 8) if args.quick else (args.steps, args.latency_steps)
    root = Path(args.out or tempfile.mkdtemp(prefix="grpo-bench-"))
    model_dir = root / "tiny"
    tiny_model(model_dir)
    with server(2, **PLUGIN) as live:
        print(f"1. learning check: bench/letters, {steps} steps, tiny GPT-2 on CPU")
        history = _run(live.base_url, model_dir, root / "letters", env="bench/letters", steps=steps)
        rewards = [m["reward_mean"] for m in history]
        window = min(10, len(rewards) // 2) or 1
        start, end = statistics.mean(rewards[:window]), statistics.mean(rewards[-window:])
        print(f"   mean reward, first {window} steps: {start:.3f}; last {window} steps: {end:.3f}")
        print(f"   curves: {root / 'letters' / 'curves.png'}")
        print(f"\n2. time waiting for rewards: math, {latency_steps} steps")
        print(f"   {'overlap':<8} {'wall s':>7} {'waiting s':>10} {'share':>6}")
        for overlap in (False, True):
            runs = _run(
                live.base_url,
                model_dir,
                root / f"math-{overlap}",
                env="math",
                steps=latency_steps,
                overlap=overlap,
            )
            wall = runs[-1]["elapsed_s"]
            waiting = sum(m["reward_wait_s"] for m in runs)
            label = "on" if overlap else "off"
            print(f"   {label:<8} {wall:>7.2f} {waiting:>10.2f} {waiting / wall:>6.1%}")


if __name__ == "__main__":
    main()
