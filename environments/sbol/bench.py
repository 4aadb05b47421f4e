"""The benchmark split: task ids in-distribution and with held-out repressors.

    envserver sbol bench ids [--split id|ood] [--per-cell 10]    # one id a line
    envserver sbol bench reference OUT.jsonl [--split ...]      # reference answers

Each split has ``per_cell`` tasks (seeds 0..per_cell-1) for every task kind x circuit type at
difficulty medium: 6 x 6 x 10 = 360 tasks by default. The ``ood`` split is SynBio-Reason's
out-of-distribution test in our terms (Cello-OOD: at least one held-out repressor per circuit).
"""

from __future__ import annotations

import json
from pathlib import Path

from environments.sbol.circuits import Difficulty, Split
from environments.sbol.family import FAMILIES, VERSION, SbolOptions
from environments.task_id import TaskId
from verifiers.sbol.design import CIRCUIT_TYPES

PER_CELL = 10


def bench_task_ids(
    split: Split = "id", per_cell: int = PER_CELL, difficulty: Difficulty = "medium"
) -> list[str]:
    """The split's task ids, by task kind, then circuit type, then seed."""
    return [
        TaskId.format(
            family.id,
            VERSION,
            seed,
            {"circuit": circuit, "difficulty": difficulty, "split": split},
        )
        for family in FAMILIES
        for circuit in CIRCUIT_TYPES
        for seed in range(per_cell)
    ]


def family_for(task_id: str) -> tuple[object, int, SbolOptions]:
    """The family, seed and options a task id names (``ValueError`` when it is not ours)."""
    parsed = TaskId.parse(task_id)
    family = next((f for f in FAMILIES if f.id == parsed.env), None)
    if family is None:
        raise ValueError(f"{task_id}: not an sbol task id")
    if parsed.version != VERSION:
        raise ValueError(f"{task_id}: version {parsed.version}, this code generates {VERSION}")
    return family, parsed.seed, SbolOptions.model_validate(parsed.options)


def write_references(out: Path, split: Split, per_cell: int = PER_CELL) -> None:
    """The reference answer of every task of the split, as JSONL ``{task_id, response}``."""
    with out.open("w") as handle:
        for task_id in bench_task_ids(split, per_cell):
            family, seed, options = family_for(task_id)
            task = family.generate(seed, options)  # type: ignore[attr-defined]
            response = family.expert_response(task)  # type: ignore[attr-defined]
            handle.write(json.dumps({"task_id": task_id, "response": response}) + "\n")
