"""GRPO on a GPU: generated tokens per second and the reward curve, sized for about five
minutes on one H200 (run it where the machine has a GPU; ``--device cpu --quick`` checks the
script anywhere).

The policy is a randomly initialised GPT-2 built locally (no hub downloads: 12 layers, 768
wide, about 85 M parameters), trained in bf16 on the trivially learnable ``bench/letters``
environment of a live server on loopback, with large groups so that generation dominates.

    .venv/bin/python -m benchmarks.gpu_grpo [--device cuda] [--steps 150] [--quick]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from benchmarks.common import server
from clients.train.tiny import tiny_model
from clients.train.trainer import GRPOTrainer, TrainConfig

PLUGIN = {"ENVSERVER_PLUGINS": "benchmarks.plugins.letters"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--quick", action="store_true", help="a small model and 3 steps")
    args = parser.parse_args()
    layers, width, heads, steps, group, prompts = (
        (2, 64, 2, 3, 4, 2) if args.quick else (12, 768, 12, args.steps, 32, 16)
    )
    root = Path(tempfile.mkdtemp(prefix="gpu-grpo-"))
    model, _ = tiny_model(root / "model", layers=layers, width=width, heads=heads)
    parameters = sum(p.numel() for p in model.parameters()) / 1e6
    print(f"device {args.device}; model {layers} layers x {width} ({parameters:.0f} M parameters)")
    with server(4, **PLUGIN) as live:
        config = TrainConfig(
            model=str(root / "model"),
            env="bench/letters",
            base_url=live.base_url,
            output_dir=str(root / "run"),
            device=args.device,
            steps=steps,
            prompts_per_step=prompts,
            group_size=group,
            max_new_tokens=32,
            learning_rate=1e-4,
            micro_batch_size=128,
            checkpoint_every=10**9,
        )
        started = time.perf_counter()
        history = GRPOTrainer(config).train()
        wall = time.perf_counter() - started
    tokens = sum(m["completion_tokens"] * prompts * group for m in history)
    generating = sum(m["generate_s"] for m in history)
    print(f"{len(history)} steps in {wall:.1f} s; {tokens / generating:,.0f} generated tokens/s")
    print("step  reward   kl")
    every = max(1, len(history) // 10)
    shown = history[::every]
    if shown[-1] is not history[-1]:
        shown.append(history[-1])
    for metrics in shown:
        print(f"{int(metrics['step']):>4}  {metrics['reward_mean']:.3f}  {metrics['kl']:.4f}")
    print(f"curves: {root / 'run' / 'curves.png'}")


if __name__ == "__main__":
    main()
