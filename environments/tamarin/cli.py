"""``envserver tamarin ...``: the Tamarin family's tools (``prove``: greedy against MCTS).

``prove`` is a client of a running server: it searches over ``/v1/envs/tamarin/proof`` through
the project's HTTP client (``clients/proof_search``), so this module imports no backend.
"""

from __future__ import annotations

from typing import Annotated, Protocol, TypeVar

import typer

from clients.cli import EXIT_NO_REWARD, ApiKey, Url, connect, fail, reporting
from clients.http import DEFAULT_URL

ENV_ID = "tamarin/proof"

app = typer.Typer(
    help="Tamarin: prove a theory's lemmas on a server, by MCTS and by Tamarin's greedy choice.",
    add_completion=False,
    no_args_is_help=True,
)


@app.callback()
def tamarin() -> None:
    """Tamarin: prove a theory's lemmas on a server, by MCTS and by Tamarin's greedy choice."""


@app.command()
def prove(
    *,
    theory: Annotated[
        str | None,
        typer.Option(help="A theory id the server offers.", show_default="the first it serves"),
    ] = None,
    lemma: Annotated[
        list[str] | None,
        typer.Option(help="Lemma(s) to prove; repeatable.", show_default="every lemma"),
    ] = None,
    budget: Annotated[int, typer.Option(help="MCTS expansions per lemma.", min=1)] = 300,
    show_proof: Annotated[
        bool, typer.Option("--proof", help="Print MCTS's proof script.", show_default="off")
    ] = False,
    url: Url = DEFAULT_URL,
    api_key: ApiKey = None,
) -> None:
    """Prove lemmas by MCTS and by Tamarin's greedy choice (always method 1); compare them."""
    from clients.proof_search import MCTSConfig, greedy, mcts  # noqa: PLC0415  (only here)

    with reporting(), connect(url, api_key) as client:
        first = _opened(client.reset(ENV_ID, options={} if theory is None else {"theory": theory}))
        theory = theory or str(first.info.get("theory"))
        lemmas = lemma or list(first.info.get("lemmas") or [first.info.get("lemma")])
        typer.echo(f"{'lemma':<36} {'greedy':>18} {'mcts':>18} {'expansions':>10}")
        for name in lemmas:
            episode = _opened(client.reset(ENV_ID, options={"theory": theory, "lemma": name}))
            found = [
                greedy(client, ENV_ID, episode),
                mcts(client, ENV_ID, episode, MCTSConfig(budget)),
            ]
            cells = [f"{r.outcome} {r.proof_size}" if r.found else "not found" for r in found]
            typer.echo(f"{name:<36} {cells[0]:>18} {cells[1]:>18} {found[1].calls:>10}")
            if show_proof and found[1].proof:
                typer.echo(found[1].proof)


class _Reset(Protocol):
    """What the command reads of a reset answer (the client's ``ResetResponse``)."""

    @property
    def state(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def detail(self) -> str: ...


_R = TypeVar("_R", bound=_Reset)


def _opened(episode: _R) -> _R:
    """A reset that opened an episode; a failed one (``timeout``/``error``: no state) ends the
    command with its reason."""
    if episode.state is None:
        fail(f"the reset failed ({episode.status}): {episode.detail}", EXIT_NO_REWARD)
    return episode
