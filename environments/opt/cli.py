"""``envserver opt ...``: the OPT-BENCH family's tools (evaluate answers, the benchmark set's
references and baseline)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from environments.opt import bench, evaluate
from environments.opt.references import BENCH_REFERENCES

app = typer.Typer(
    help="OPT-BENCH: evaluate answers; build and check the benchmark set's references.",
    add_completion=False,
    no_args_is_help=True,
)
references = typer.Typer(help="The 1,000-instance benchmark set's proven references.")
app.add_typer(references, name="references")

Answers = Annotated[Path, typer.Argument(help="JSONL of {task_id, response | responses}.")]
Json = Annotated[bool, typer.Option("--json", help="Print the report as JSON.", show_default="off")]


@app.command("evaluate")
def evaluate_command(answers: Answers, json_output: Json = False) -> None:
    """Score answers with the original's aggregation: SR and QR per task, category, overall."""
    try:
        report = evaluate.evaluate(answers)
    except (OSError, ValueError, KeyError) as exc:  # JSONDecodeError is a ValueError
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(
        json.dumps(asdict(report), indent=2) if json_output else evaluate.format_report(report)
    )


@references.command("build")
def build(
    workers: Annotated[int, typer.Option(help="Solver processes.", min=1)] = 2,
    out: Annotated[Path, typer.Option(help="Where to write the cache.")] = BENCH_REFERENCES,
) -> None:
    """Prove every optimum of the set (minutes) and write the reference cache."""
    bench.build(out, workers)


@references.command("baseline")
def baseline(out: Annotated[Path, typer.Argument(help="JSONL to write.")]) -> None:
    """Write the greedy baseline's answer for every instance of the set."""
    bench.baseline(out)


@references.command("verify")
def verify() -> None:
    """Check that every cached reference is for the instance the code generates now."""
    sys.exit(bench.verify(BENCH_REFERENCES))
