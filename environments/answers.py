"""Reading answers for offline evaluation: JSONL lines of ``{"task_id", "response"}`` (or
``"responses": [...]`` for several tries), as the families' ``evaluate`` scripts take them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator


def read_tries(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """``(task_id, response)`` per try; ``ValueError`` naming the line when one is malformed
    (``json.JSONDecodeError`` when it is not JSON)."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not isinstance(row, dict) or not isinstance(row.get("task_id"), str):
            raise ValueError(f"line {number}: expected an object with a 'task_id'")
        responses = row.get("responses", [row.get("response")])
        if not isinstance(responses, list) or not all(isinstance(r, str) for r in responses):
            raise ValueError(f"line {number}: 'response' must be a string (or 'responses' a list)")
        for response in responses:
            yield row["task_id"], response
