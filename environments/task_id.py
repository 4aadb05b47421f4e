"""Task ids: ``<env>@<version>/<seed>[?option=value&...]`` names one task on every machine.

The id carries the environment, its version, the seed and the options that differ from the
defaults, so a client can ask "score this answer for task X" without ever seeing the reference.
Option values are scalars: strings as they are, everything else as JSON (``true``, ``3``, ``0.5``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

MAX_SEED = 2**63 - 1
MAX_TASK_ID_LENGTH = 1024

_TASK_ID = re.compile(
    r"(?P<env>[A-Za-z0-9][A-Za-z0-9_.\-/]*)@(?P<version>[A-Za-z0-9][A-Za-z0-9_.\-]*)"
    r"/(?P<seed>[0-9]{1,19})(?:\?(?P<query>.*))?"
)


class TaskIdError(ValueError):
    """A task id that cannot be parsed."""


@dataclass(frozen=True)
class TaskId:
    """A parsed task id. ``options`` holds the raw (string) option values from the id."""

    env: str
    version: str
    seed: int
    options: dict[str, str]

    @classmethod
    def parse(cls, text: str) -> TaskId:
        """Parse ``text``; raises ``TaskIdError`` with the reason when it is malformed."""
        if len(text) > MAX_TASK_ID_LENGTH:
            raise TaskIdError(f"task id is longer than {MAX_TASK_ID_LENGTH} characters")
        match = _TASK_ID.fullmatch(text)
        if match is None:
            raise TaskIdError(
                f"malformed task id {text[:80]!r}: "
                "expected '<env>@<version>/<seed>[?option=value&...]'"
            )
        seed = int(match["seed"])
        if seed > MAX_SEED:
            raise TaskIdError(f"seed {seed} is out of range [0, {MAX_SEED}]")
        options: dict[str, str] = {}
        if match["query"]:
            try:
                pairs = parse_qsl(match["query"], keep_blank_values=True, strict_parsing=True)
            except ValueError as exc:
                raise TaskIdError(f"malformed options in task id: {exc}") from None
            for key, value in pairs:
                if key in options:
                    raise TaskIdError(f"option {key!r} appears twice in the task id")
                options[key] = value
        return cls(match["env"], match["version"], seed, options)

    @staticmethod
    def format(env: str, version: str, seed: int, options: dict[str, Any]) -> str:
        """The canonical id: options sorted by name, scalars only."""
        if not 0 <= seed <= MAX_SEED:
            raise TaskIdError(f"seed {seed} is out of range [0, {MAX_SEED}]")
        rendered: list[tuple[str, str]] = []
        for key in sorted(options):
            value = options[key]
            if isinstance(value, (dict, list, tuple)):
                raise TaskIdError(f"option {key!r} is not a scalar and cannot be part of a task id")
            rendered.append((key, value if isinstance(value, str) else json.dumps(value)))
        query = urlencode(rendered)
        return f"{env}@{version}/{seed}" + (f"?{query}" if query else "")
