"""Monte-Carlo tree search over the AND/OR proof tree, and the greedy baseline.

Both talk to the service through ``EnvServerClient`` only. MCTS selects methods by PUCT (value
plus a prior-weighted exploration bonus), descends into the least promising unproven case of an
AND node (every case must be proven, so the weakest one decides), expands one goal per ``expand``
call, and stops when the root is proven, a trace is found, or the budget is spent. A proof found
is then replayed through ``step``, so the server itself confirms it and renders its script.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from clients.http import EnvServerClient
from clients.proof_search.tree import Goal, Method
from envserver.wire import ExpandResponse, ResetResponse

Prior = Callable[[Sequence[dict[str, Any]]], list[float]]
"""Method descriptions (``info["methods"]``: rank, text, explanation, kind, goal_kind) → prior
probabilities in the same order. A learned policy plugs in here."""


def tamarin_prior(methods: Sequence[dict[str, Any]]) -> list[float]:
    """Tamarin's ranking as a prior: weight 1/rank, normalised."""
    weights = [1.0 / (i + 1) for i in range(len(methods))]
    total = sum(weights) or 1.0
    return [w / total for w in weights]


@dataclass(frozen=True)
class MCTSConfig:
    """Search settings: ``budget`` is the number of goals expanded (one ``expand`` call each)."""

    budget: int = 200
    c_puct: float = 1.5
    prior: Prior = tamarin_prior


@dataclass(frozen=True)
class SearchResult:
    """What a search found: ``outcome`` as the environment reports it (verified, falsified,
    trace_found, …), the proof's size and script, and the server calls it spent."""

    found: bool
    outcome: str | None = None
    proof_size: int | None = None
    proof: str | None = None
    calls: int = 0
    detail: str = ""


def _finished(info: dict[str, Any], calls: int) -> SearchResult:
    return SearchResult(True, info.get("outcome"), info.get("proof_size"), info.get("proof"), calls)


def _unopened(episode: ResetResponse) -> SearchResult:
    """No search from a reset that failed (``timeout``/``error``): its reason instead."""
    return SearchResult(False, detail=f"the reset failed ({episode.status}): {episode.detail}")


def greedy(
    client: EnvServerClient, env_id: str, episode: ResetResponse, max_steps: int = 500
) -> SearchResult:
    """Always take method 1 (Tamarin's own choice, which its autoprover takes too)."""
    state = episode.state
    if state is None:
        return _unopened(episode)
    for calls in range(1, max_steps + 1):
        step = client.step(env_id, state, "1")
        if step.status != "ok":
            return SearchResult(False, calls=calls, detail=f"{step.status}: {step.detail}")
        if step.terminated:
            return _finished(step.info, calls)
        if step.truncated or step.state is None:
            return SearchResult(False, calls=calls, detail="step limit reached")
        state = step.state
    return SearchResult(False, calls=max_steps, detail="step limit reached")


@dataclass
class _Search:
    client: EnvServerClient
    env_id: str
    config: MCTSConfig
    calls: int = 0
    trace: dict[str, Any] | None = None

    def expand(self, goal: Goal) -> float:
        """Expand ``goal`` with one ``expand`` call; returns its value estimate."""
        self.calls += 1
        reply: ExpandResponse = self.client.expand(self.env_id, goal.state)
        if reply.status != "ok":
            goal.dead, goal.methods = True, []
            return 0.0
        priors = self.config.prior(goal.info.get("methods", []))
        goal.methods = []
        for position, expansion in enumerate(reply.expansions):
            method = Method(expansion.action, priors[position] if position < len(priors) else 0.0)
            method.failed = expansion.status != "ok"
            for branch in expansion.branches:
                case = Goal(branch.state, (*goal.path, branch.name), branch.info)
                if branch.terminated:
                    case.trace = bool(branch.reward)
                    case.dead = not branch.reward
                    if case.trace and self.trace is None:
                        self.trace = branch.info
                method.cases.append(case)
            goal.methods.append(method)
        live = [m.value for m in goal.methods if not m.dead]
        goal.dead = not live
        return max(live, default=0.0)

    def select(self, goal: Goal) -> Method | None:
        live = [m for m in goal.methods or () if not m.dead and not m.proven]
        if not live:
            return None
        scale = math.sqrt(goal.visits + 1)
        return max(
            live, key=lambda m: m.value + self.config.c_puct * m.prior * scale / (1 + m.visits)
        )

    def simulate(self, root: Goal) -> None:
        """One descent from the root, an expansion, and the backup of its value."""
        trail: list[tuple[Goal, Method]] = []
        goal = root
        while goal.methods is not None:
            method = self.select(goal)
            if method is None:
                goal.dead = True
                break
            trail.append((goal, method))
            open_cases = [c for c in method.cases if not c.proven]
            goal = min(open_cases, key=lambda c: c.value)
        value = 0.0 if goal.dead else self.expand(goal)
        goal.visits += 1
        goal.value_sum += value
        for node, method in trail:
            node.visits += 1
            node.value_sum += value
            method.visits += 1
            method.value_sum += value


def _plan(goal: Goal, plan: dict[tuple[str, ...], str]) -> None:
    """The smallest proof below ``goal``, as the method to apply at each case path."""
    proven = [m for m in goal.methods or () if m.proven]
    best = min(proven, key=lambda m: m.proof_size())
    plan[goal.path] = best.text
    for case in best.cases:
        _plan(case, plan)


def _replay(
    client: EnvServerClient, env_id: str, episode: ResetResponse, plan: dict[tuple[str, ...], str]
) -> SearchResult:
    state, info, calls = episode.state, episode.info, 0
    while state is not None:
        method = plan.get(tuple(info.get("path", ())))
        if method is None:
            return SearchResult(False, calls=calls, detail="the proof does not cover a goal")
        step = client.step(env_id, state, method)
        calls += 1
        if step.status != "ok":
            return SearchResult(False, calls=calls, detail=f"{step.status}: {step.detail}")
        if step.terminated:
            return _finished(step.info, calls)
        state, info = step.state, step.info
    return SearchResult(False, calls=calls, detail="the episode ended without a proof")


def mcts(
    client: EnvServerClient,
    env_id: str,
    episode: ResetResponse,
    config: MCTSConfig | None = None,
) -> SearchResult:
    """Search for a proof of the episode's lemma within ``config.budget`` expansions."""
    config = config or MCTSConfig()
    if episode.state is None:
        return _unopened(episode)
    search = _Search(client, env_id, config)
    root = Goal(episode.state, (), episode.info)
    while search.calls < config.budget and search.trace is None:
        if root.proven or root.dead:
            break
        search.simulate(root)
    if search.trace is not None:
        return _finished(search.trace, search.calls)
    if not root.proven:
        return SearchResult(False, calls=search.calls, detail="no proof within the budget")
    plan: dict[tuple[str, ...], str] = {}
    _plan(root, plan)
    replayed = _replay(client, env_id, episode, plan)
    return SearchResult(
        replayed.found,
        replayed.outcome,
        replayed.proof_size,
        replayed.proof,
        search.calls + replayed.calls,
        replayed.detail,
    )
