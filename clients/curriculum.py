"""Task ids drawn through the service's curriculum (``POST /v1/curriculum/sample``): the one
client-side piece that the TRL dataset (``clients.adapters.trl.curriculum_dataset``), verl's
sampler (``clients.adapters.verl_curriculum.CurriculumSampler``) and ``envserver-train
--curriculum`` share.

The rule lives on the server (``envserver.curriculum``), which reads the pass rates every
trainer of the run has measured: a client only asks for the next ``batch`` task ids, either of
the environment's whole task space (new seeds where the run's tasks are too few near the
target) or of a fixed pool (a dataset's task ids). The outcomes that move the estimates are
recorded by the service when the completions are scored with the same ``run`` (``verify(...,
run=)``, ``RemoteReward(run=)``, verl's ``run`` reward keyword, a reset with ``run``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clients.http import EnvServerClient
from envserver.wire import MAX_CURRICULUM_TASKS, CurriculumRequest


@dataclass
class TaskDraws:
    """Task ids of ``env`` for ``run``, ``batch`` per request (see the module docstring);
    ``tasks`` restricts them to a pool; ``seed`` makes the draws repeatable (each request
    draws with ``seed`` plus its number)."""

    client: EnvServerClient
    env: str
    run: str
    tasks: Sequence[str] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    target: float = 0.5
    width: float = 0.2
    explore: float = 0.1
    batch: int = 64
    seed: int | None = None
    requests: int = field(default=0, init=False)
    """Requests made so far (each draws with ``seed`` plus this number)."""

    def __post_init__(self) -> None:
        if not 1 <= self.batch <= MAX_CURRICULUM_TASKS:
            raise ValueError(f"batch must be between 1 and {MAX_CURRICULUM_TASKS}")
        self._request(1)  # a bad argument fails here, before a trainer starts, not at its draw

    def _request(self, n: int) -> CurriculumRequest:
        return CurriculumRequest(
            env=self.env,
            run=self.run,
            n=n,
            target=self.target,
            width=self.width,
            explore=self.explore,
            options=dict(self.options),
            tasks=list(self.tasks) if self.tasks is not None else None,
            seed=None if self.seed is None else self.seed + self.requests,
        )

    def draw(self, n: int) -> list[str]:
        """The next ``n`` task ids (one request per ``MAX_CURRICULUM_TASKS``)."""
        drawn: list[str] = []
        while len(drawn) < n:
            count = min(n - len(drawn), MAX_CURRICULUM_TASKS)
            reply = self.client.curriculum_sample(self._request(count))
            self.requests += 1
            drawn += [task.task_id for task in reply.tasks]
        return drawn

    def __iter__(self) -> Iterator[str]:
        """Task ids without end, ``batch`` per request."""
        while True:
            yield from self.draw(self.batch)
