"""What the families' search tests share: a search of one family in process, by its seed, and
an episode played out to its last reward."""

from __future__ import annotations

from collections.abc import Iterable

from environments.base import Environment, JSONValue
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


def last_reward(env: Environment, state: JSONValue, actions: Iterable[str]) -> float:
    """The reward of the episode's last step, playing ``actions`` from ``state`` until it ends
    (0 for no step)."""
    reward = 0.0
    for action in actions:
        result = env.step(state, action)
        reward = result.score.reward or 0.0
        if result.terminated or result.truncated:
            break
        state = result.state
    return reward
