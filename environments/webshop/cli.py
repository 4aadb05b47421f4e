"""``envserver webshop ...``: the WebShop family's tools (the scripted baseline)."""

from __future__ import annotations

from typing import Annotated

import typer

from environments.webshop.baseline import evaluate
from environments.webshop.family import WebShopEnv

app = typer.Typer(
    help="WebShop: the scripted baseline on the configured catalogue.",
    add_completion=False,
    no_args_is_help=True,
)


@app.callback()
def webshop() -> None:
    """WebShop: the scripted baseline on the configured catalogue."""


@app.command()
def baseline(
    split: Annotated[str, typer.Option(help="test, eval, train or all.")] = "test",
    limit: Annotated[
        int | None, typer.Option(help="At most this many goals.", min=1, show_default="all")
    ] = None,
) -> None:
    """Score (mean reward x 100) and success rate of the scripted shopper over a split."""
    if split not in ("test", "eval", "train", "all"):
        typer.echo(f"error: --split must be test, eval, train or all, not {split!r}", err=True)
        raise typer.Exit(2)
    env = WebShopEnv()
    score, success = evaluate(env, split, limit)
    typer.echo(
        f"catalogue {env.shop.fingerprint}: split {split}: score {score:.1f}, "
        f"success rate {100 * success:.1f}%"
    )
