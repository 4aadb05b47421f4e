"""Stored rollouts: what a scored response was scored against, its reward and what scored it, as
one JSON object per line, so ``envserver reverify`` can score it again and say what changed.

    {"task_id": "math@1/7", "response": "... \\boxed{4}", "reward": 1.0, "status": "ok",
     "scorer": "math@2", "digest": "d13dca1a5b8d3e01", "run": "grpo-7"}
    {"verifier": "math", "reference": "4", "options": {}, "response": "...", "reward": 0.0, ...}

A row names its task by ``task_id`` (the reference stays on the server) or by ``verifier`` and
``reference`` (with ``options``). The adapters write this format when given a path
(``RemoteReward(record=...)``, verl's ``record`` reward keyword, ``envserver-train
--record-rollouts``); ``RolloutLog`` appends rows safely from several threads.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from envserver.wire import VerifyResult


class StoredRollout(BaseModel):
    """One stored, scored response."""

    model_config = ConfigDict(extra="ignore")

    response: str
    task_id: str | None = None
    verifier: str | None = None
    reference: Any = None
    options: dict[str, Any] | None = None
    reward: float | None
    status: str = "ok"
    scorer: str = ""
    digest: str = ""
    run: str | None = None
    id: str | None = None

    @model_validator(mode="after")
    def _one_target(self) -> Self:
        if (self.task_id is None) == (self.verifier is None):
            raise ValueError("a row names a task_id, or a verifier and its reference")
        if self.verifier is not None and self.reference is None:
            raise ValueError("a row with a verifier needs its reference")
        return self

    def item(self) -> dict[str, Any]:
        """The ``/v1/verify`` item that scores this row again."""
        if self.task_id is not None:
            return {"response": self.response, "task_id": self.task_id}
        item: dict[str, Any] = {"response": self.response, "reference": self.reference}
        if self.options:
            item["options"] = self.options
        return item


class RolloutFormatError(ValueError):
    """A line of a rollouts file is not a stored rollout; the message names the line."""


def read_rollouts(path: Path) -> Iterator[tuple[int, StoredRollout]]:
    """``(line number, row)`` of every non-blank line; raises ``RolloutFormatError`` at the
    first line that is not a stored rollout."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield number, StoredRollout.model_validate_json(line)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(map(str, first["loc"]))
                raise RolloutFormatError(
                    f"{path}:{number}: {where + ': ' if where else ''}{first['msg']}"
                ) from None


class RolloutLog:
    """Appends stored rollouts to a JSONL file (made with its folder when missing); one lock
    per log, so the threads of a trainer write whole lines."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def write(
        self,
        items: Sequence[Mapping[str, Any]],
        results: Sequence[VerifyResult],
        *,
        verifier: str | None = None,
        options: Mapping[str, Any] | None = None,
        run: str | None = None,
    ) -> None:
        """One row per ``/v1/verify`` item and its result (``verifier`` and ``options``: the
        request's, for items with a reference)."""
        rows = []
        for item, result in zip(items, results, strict=True):
            row: dict[str, Any] = {"response": item["response"]}
            if "task_id" in item:
                row["task_id"] = item["task_id"]
            else:
                row["verifier"] = verifier
                row["reference"] = item["reference"]
                merged = {**(options or {}), **(item.get("options") or {})}
                if merged:
                    row["options"] = merged
            row.update(
                reward=result.reward, status=result.status, scorer=result.scorer,
                digest=result.digest,
            )  # fmt: skip
            if run is not None:
                row["run"] = run
            if item.get("id") is not None:
                row["id"] = item["id"]
            rows.append(json.dumps(row, ensure_ascii=False))
        self.append(rows)

    def append(self, lines: Sequence[str]) -> None:
        """Append already-serialised rows."""
        if not lines:
            return
        text = "".join(line + "\n" for line in lines)
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(text)
