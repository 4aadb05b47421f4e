"""Red-team cases scored by a live server, through the project's own client: ``/v1/verify`` by
task id or by verifier and reference, reset and step for episodes (``envserver audit --url``).

``OverHttp`` answers the calls of the server side's audit target protocol with the wire's own
results; loading the suites and judging the answers happen there (``envserver.redteam``), so this
module imports nothing of the server but its wire schemas.
"""

from __future__ import annotations

from typing import Any

from clients.errors import UnavailableError
from clients.http import EnvServerClient
from envserver.wire import StepResponse, VerifyItem, VerifyResult


class OverHttp:
    """The audit's target on a server: its 503 ``environment-unavailable`` (a disabled
    environment or verifier) is ``unavailable``, with the server's reason: the case is skipped."""

    def __init__(self, client: EnvServerClient) -> None:
        self.client = client

    def disabled(self) -> dict[str, str]:
        return {entry.name: entry.reason for entry in self.client.envs().disabled}

    def unavailable(self, error: Exception) -> str | None:
        return error.reason if isinstance(error, UnavailableError) else None

    def score_task(self, task_id: str, response: str) -> VerifyResult:
        return self.client.verify([VerifyItem(task_id=task_id, response=response)]).results[0]

    def score(
        self, verifier: str, reference: Any, options: dict[str, Any], response: str
    ) -> VerifyResult:
        item = VerifyItem(response=response, reference=reference, options=options or None)
        return self.client.verify([item], verifier=verifier).results[0]

    def reset(self, env: str, seed: int, options: dict[str, Any]) -> str:
        episode = self.client.reset(env, seed=seed, options=options)
        if episode.state is None:
            raise RuntimeError(f"the reset failed ({episode.status}): {episode.detail}")
        return episode.state

    def step(self, env: str, handle: Any, action: str) -> tuple[str | None, StepResponse, bool]:
        reply = self.client.step(env, str(handle), action)
        return reply.state, reply, reply.terminated or reply.truncated
