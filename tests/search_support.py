"""What the families' search tests share: a search of one family in process, by its seed."""

from __future__ import annotations

from environments.search import SearchSpace
from envserver import redteam
from envserver.registry import Registry
from envserver.search import search


def paid_classes(
    family: str, space: SearchSpace, registry: Registry, *, tries: int, seed: int, budget_s: float
) -> set[str]:
    """The move classes of which a search of ``tries`` mutants (at least) found one paid."""
    report = search(
        family, space, redteam.InProcess(registry), budget_s=budget_s, seed=seed, max_tries=tries
    )
    assert report.tried.total() >= tries
    return set(report.paid)
