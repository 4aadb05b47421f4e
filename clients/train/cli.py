"""``envserver-train``: GRPO on a service environment from the command line.

envserver-train --env math --model PATH [--device cuda] [--steps 200] [--url URL]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import fields

from clients.train.trainer import GRPOTrainer, TrainConfig


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="envserver-train", description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a local model directory (or hub id)")
    parser.add_argument("--url", dest="base_url", help="the service (default ENVSERVER_URL)")
    parser.add_argument("--env-options", type=json.loads, default={}, help="JSON options of reset")
    parser.add_argument("--verifier", help="score with this verifier instead of an environment")
    parser.add_argument("--dataset", help="with --verifier: JSONL of {prompt, reference}")
    for spec in fields(TrainConfig):
        if spec.name in ("model", "base_url", "env_options", "verifier", "dataset"):
            continue
        flag = "--" + spec.name.replace("_", "-")
        default = spec.default
        if isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default)
        else:
            kind = type(default) if default is not None else str
            parser.add_argument(flag, type=kind, default=default)
    return parser


def main(argv: list[str] | None = None) -> None:
    """Train, printing the first and last step's mean reward."""
    args = vars(_parser().parse_args(argv))
    config = TrainConfig(**args)
    history = GRPOTrainer(config).train()
    if history:
        first, last = history[0], history[-1]
        print(
            f"reward {first['reward_mean']:.3f} -> {last['reward_mean']:.3f} over "
            f"{len(history)} steps; metrics, checkpoint and curves in {config.output_dir}"
        )


if __name__ == "__main__":
    main()
