"""Where a training step's prompts come from and how its completions are scored: the two modes
of the trainer, each a small strategy with one interface.

``Episodes`` resets episodes of an environment (the prompts are their first observations) and
scores a completion by stepping its episode; ``Dataset`` reads prompts and references from a
JSONL file and scores completions with a verifier. Each prompt comes with a *target*: what its
completions are scored against (an episode's state token, or a reference)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from clients.curriculum import TaskDraws
from clients.http import EnvServerClient
from envserver.wire import Observation, StepResponse, VerifyResult

Scored = StepResponse | VerifyResult
"""A completion's result: its ``reward`` (None: unscored, masked) and, for an episode, where
the episode went (``state``, ``observation``, ``terminated``, ``truncated``)."""


class PromptSource(Protocol):
    """The prompts of each step, and the scoring of their completions."""

    multi_turn: bool
    """Whether a completion can be answered (an episode continues after it)."""

    def draw(self, step: int, count: int) -> tuple[list[Observation], list[Any]]:
        """``count`` prompts for training step ``step``, and the target of each."""
        ...

    def score(self, targets: Sequence[Any], texts: Sequence[str]) -> Sequence[Scored]:
        """One result per ``(target, text)``, in order, from one batched call."""
        ...


class Episodes:
    """Prompts from resets of ``env`` (seeded by step, so a resumed run draws the same ones);
    completions scored by one batched ``step`` call."""

    multi_turn = True

    def __init__(
        self, client: EnvServerClient, env: str, options: dict[str, Any], first_seed: int
    ) -> None:
        self.client, self.env, self.options, self.first_seed = client, env, options, first_seed

    def draw(self, step: int, count: int) -> tuple[list[Observation], list[Any]]:
        """First observations and state tokens; raises RuntimeError if a reset failed."""
        first = self.first_seed + step * count
        return self._start([{"seed": first + i, "options": self.options} for i in range(count)])

    def _start(self, items: list[dict[str, Any]]) -> tuple[list[Observation], list[Any]]:
        episodes = self.client.reset_batch(self.env, items).results
        failed = [e for e in episodes if e.status != "ok" or e.state is None]
        if failed:
            raise RuntimeError(f"reset of {self.env} failed: {failed[0].detail}")
        return [e.observation or "" for e in episodes], [str(e.state) for e in episodes]

    def score(self, targets: Sequence[Any], texts: Sequence[str]) -> Sequence[Scored]:
        """Each completion as the next action of its episode."""
        return self.client.step_batch(self.env, list(zip(targets, texts, strict=True))).results


class Curriculum(Episodes):
    """Prompts from resets of the tasks the service's curriculum draws (``draws``: by the pass
    rates measured for its run); each reset names the run, so the service counts the end of
    every episode a completion finishes, and the next draws read it."""

    def __init__(self, client: EnvServerClient, env: str, draws: TaskDraws) -> None:
        super().__init__(client, env, dict(draws.options), first_seed=0)
        self.draws = draws

    def draw(self, step: int, count: int) -> tuple[list[Observation], list[Any]]:
        """First observations and state tokens of ``count`` drawn tasks."""
        run = self.draws.run
        return self._start([{"task_id": t, "run": run} for t in self.draws.draw(count)])


class Dataset:
    """Prompts and references from a JSONL file of ``{"prompt", "reference"}`` rows, in order
    and cycling; completions scored by ``verifier``. Single-turn only."""

    multi_turn = False

    def __init__(self, client: EnvServerClient, path: str, verifier: str) -> None:
        self.client, self.verifier = client, verifier
        lines = Path(path).read_text().splitlines()
        self.rows: list[dict[str, Any]] = [json.loads(line) for line in lines if line.strip()]
        if not self.rows:
            raise ValueError(f"{path} holds no rows")

    def draw(self, step: int, count: int) -> tuple[list[Observation], list[Any]]:
        """The next ``count`` rows' prompts and references."""
        rows = [self.rows[(step * count + i) % len(self.rows)] for i in range(count)]
        return [str(row["prompt"]) for row in rows], [row["reference"] for row in rows]

    def score(self, targets: Sequence[Any], texts: Sequence[str]) -> Sequence[Scored]:
        """Each completion against its reference."""
        items = [
            {"response": text, "reference": reference}
            for reference, text in zip(targets, texts, strict=True)
        ]
        return self.client.verify(items, verifier=self.verifier).results
