"""envserver-train: GRPO on a service environment from the command line.

envserver-train --env math --model PATH [--device cuda] [--steps 200] [--url URL]
envserver-train --env math --model tiny --steps 20   # CPU smoke run, nothing downloaded

Exit codes: 0 done; 1 the service refused or failed (its problem's detail is the ``error:``
line), or could not be reached; 2 bad usage (an option, a model or dataset that cannot be read).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import Any, NoReturn

from clients.errors import EnvServerError
from clients.train.generation import TINY
from clients.train.trainer import GRPOTrainer, TrainConfig

EXIT_SERVER = 1
EXIT_USAGE = 2
# Options spelled differently from their config field.
FLAGS = {"base_url": "--url"}


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, or says it is required."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.required:
            return f"{text} (required)"
        if action.default is None:
            return text if "default" in text else f"{text} (default: none)"
        return super()._get_help_string(action)


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def _add(parser: argparse.ArgumentParser, spec: Field[Any]) -> None:
    flag = FLAGS.get(spec.name, "--" + spec.name.replace("_", "-"))
    help_text = str(spec.metadata["help"])
    if spec.default is MISSING and spec.default_factory is MISSING:
        parser.add_argument(flag, dest=spec.name, required=True, help=help_text)
    elif spec.default_factory is dict:
        parser.add_argument(flag, dest=spec.name, type=_json_object, default={}, help=help_text)
    elif isinstance(spec.default, bool):
        parser.add_argument(
            flag, dest=spec.name, action=argparse.BooleanOptionalAction, default=spec.default,
            help=help_text,
        )  # fmt: skip
    else:
        kind = type(spec.default) if spec.default is not None else str
        parser.add_argument(flag, dest=spec.name, type=kind, default=spec.default, help=help_text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="envserver-train",
        description=(__doc__ or "").split("\n", maxsplit=1)[0],
        formatter_class=_HelpFormatter,
    )
    for spec in fields(TrainConfig):
        _add(parser, spec)
    return parser


def _fail(message: str, code: int) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(code)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def main(argv: list[str] | None = None) -> None:
    """Train, printing where the run's files go and the first and last step's mean reward."""
    config = TrainConfig(**vars(_parser().parse_args(argv)))
    # Stated as an absolute path: a relative one depends on where the command was started.
    config.output_dir = str(Path(config.output_dir).resolve())
    print(f"writing metrics, checkpoints and curves to {config.output_dir}", file=sys.stderr)
    if config.model == TINY:
        from clients.train.tiny import tiny_model  # noqa: PLC0415 - only this mode needs it

        config.model = str(Path(config.output_dir) / "tiny-model")
        tiny_model(Path(config.model))
        print(f"built a tiny random model in {config.model}", file=sys.stderr)
    try:
        trainer = GRPOTrainer(config)
    except EnvServerError as exc:
        _fail(str(exc), EXIT_SERVER)
    except (ValueError, OSError) as exc:  # the options, the model or the dataset
        _fail(_first_line(exc), EXIT_USAGE)
    try:
        history = trainer.train()
    except EnvServerError as exc:
        _fail(str(exc), EXIT_SERVER)
    if history:
        first, last = history[0], history[-1]
        print(
            f"reward {first['reward_mean']:.3f} -> {last['reward_mean']:.3f} over "
            f"{len(history)} steps; metrics, checkpoint and curves in {config.output_dir}"
        )


if __name__ == "__main__":
    main()
