"""``envserver sbol ...``: the SBOL family's tools (evaluate answers, the benchmark split)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from environments.sbol import bench, evaluate
from environments.sbol.circuits import Split

app = typer.Typer(
    help="SBOL circuits: evaluate answers; list the benchmark split.",
    add_completion=False,
    no_args_is_help=True,
)
split_app = typer.Typer(help="The benchmark split: in-distribution (id) or held-out parts (ood).")
app.add_typer(split_app, name="bench")

SplitOption = Annotated[str, typer.Option("--split", help="id or ood.")]
PerCell = Annotated[int, typer.Option(help="Tasks per task kind x circuit type.", min=1)]


def _split(value: str) -> Split:
    if value not in ("id", "ood"):
        typer.echo(f"error: --split must be id or ood, not {value!r}", err=True)
        raise typer.Exit(2)
    return "id" if value == "id" else "ood"


@app.command("evaluate")
def evaluate_command(
    answers: Annotated[Path, typer.Argument(help="JSONL of {task_id, response | responses}.")],
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON.", show_default="off")
    ] = False,
) -> None:
    """Success per circuit type x task kind, per split, and the share of tries per level."""
    try:
        report = evaluate.evaluate(answers)
    except (OSError, ValueError, KeyError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except RuntimeError as exc:  # a try the sandbox could not run: its score would be missing
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(
        json.dumps(asdict(report), indent=2) if json_output else evaluate.format_report(report)
    )


@split_app.command("ids")
def ids(split: SplitOption = "id", per_cell: PerCell = bench.PER_CELL) -> None:
    """The split's task ids, one a line."""
    typer.echo("\n".join(bench.bench_task_ids(_split(split), per_cell)))


@split_app.command("reference")
def reference(
    out: Annotated[Path, typer.Argument(help="JSONL to write.")],
    split: SplitOption = "id",
    per_cell: PerCell = bench.PER_CELL,
) -> None:
    """The reference answer of every task of the split."""
    bench.write_references(out, _split(split), per_cell)
