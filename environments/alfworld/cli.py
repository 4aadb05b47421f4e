"""``envserver alfworld ...``: the ALFWorld family's tools (export games as ALFWorld's files,
the differential check against ALFWorld's engine, statistics, the wheel's tables)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, get_args

import typer

from environments.alfworld import differential, export, statistics, tables
from environments.alfworld.engine import GrammarVersion
from environments.alfworld.generator import Split
from environments.alfworld.scenes import Difficulty
from environments.alfworld.tables import TaskType

app = typer.Typer(
    help="ALFWorld: export games as its files; check the native engine against ALFWorld's own.",
    add_completion=False,
    no_args_is_help=True,
)

# Typer offers choices through Enums; these mirror the family's Literal types.
TaskTypeChoice = Enum("TaskTypeChoice", {name: name for name in get_args(TaskType)}, type=str)  # type: ignore[misc]
SplitChoice = Enum("SplitChoice", {name: name for name in get_args(Split)}, type=str)  # type: ignore[misc]
DifficultyChoice = Enum("DifficultyChoice", {n: n for n in get_args(Difficulty)}, type=str)  # type: ignore[misc]
GrammarChoice = Enum("GrammarChoice", {n: n for n in get_args(GrammarVersion)}, type=str)  # type: ignore[misc]


def _seeds(text: str) -> range:
    first, _, last = text.partition("-")
    try:
        return range(int(first), int(last or first) + 1)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a seed or a range such as 0-99") from None


@app.command("export")
def export_command(
    out: Annotated[Path, typer.Argument(help="Folder to write the released layout under.")],
    *,
    seeds: Annotated[str, typer.Option(help="A seed or a range, e.g. 0-99.")] = "0-9",
    task_type: Annotated[
        TaskTypeChoice | None,
        typer.Option(help="One task type.", show_default="each seed's own"),
    ] = None,
    split: Annotated[SplitChoice, typer.Option(help="The split.")] = SplitChoice["train"],
    difficulty: Annotated[DifficultyChoice, typer.Option(help="Scene size.")] = DifficultyChoice[
        "hard"
    ],
    grammar: Annotated[
        GrammarChoice, typer.Option(help="0.4 (the wheel's) or 0.3 (the released 2.1.1 games).")
    ] = GrammarChoice["0.4"],
) -> None:
    """Write generated games as ALFWorld's own files (game.tw-pddl, traj_data.json)."""
    for path in export.write_games(
        out,
        _seeds(seeds),
        task_type=task_type.value if task_type else None,
        split=split.value,
        difficulty=difficulty.value,
        version=grammar.value,
    ):
        typer.echo(path)


@app.command("differential")
def differential_command(
    games: Annotated[int, typer.Option(help="Games to check.", min=1)] = 1000,
    first_seed: Annotated[int, typer.Option(help="The first game's seed.", min=0)] = 0,
    workers: Annotated[int, typer.Option(help="Processes.", min=1)] = 2,
    released: Annotated[
        bool,
        typer.Option(
            "--released",
            help="Check every game under ALFWORLD_DATA instead of generated ones.",
            show_default="off",
        ),
    ] = False,
) -> None:
    """Compare the native engine with ALFWorld's own, byte for byte (needs the extra)."""
    if not released:
        raise typer.Exit(differential.run(games, first_seed, workers))
    paths = differential.released_files()
    if not paths:
        typer.echo("no released games: set ALFWORLD_DATA to alfworld-download's folder", err=True)
        raise typer.Exit(2)
    raise typer.Exit(differential.run_files(paths, workers))


@app.command("statistics")
def statistics_command(
    games: Annotated[int, typer.Option(help="Seeds per task type and split.", min=1)] = 100,
) -> None:
    """Scene sizes per difficulty and room, and the expert's wins and plan lengths."""
    statistics.report(games)


@app.command("tables")
def tables_command(
    write: Annotated[
        bool, typer.Option("--write", help="Rewrite data/ from the wheel.", show_default="off")
    ] = False,
) -> None:
    """Check the shipped tables against the installed alfworld wheel (needs the extra)."""
    raise typer.Exit(tables.sync(write))
