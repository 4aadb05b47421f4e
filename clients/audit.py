"""Red-team cases scored by a live server, through the project's own client: ``/v1/verify`` by
task id or by verifier and reference, reset and step for episodes (``envserver audit --url``).
The suites and their judging are ``envserver.redteam``'s."""

from __future__ import annotations

from typing import Any

from clients.errors import UnavailableError
from clients.http import EnvServerClient
from envserver.redteam import Got, Skip
from envserver.wire import VerifyItem


class OverHttp:
    """The ``envserver.redteam.Target`` a server answers; its 503 ``environment-unavailable``
    (a disabled environment or verifier) becomes a skip with the server's reason."""

    def __init__(self, client: EnvServerClient) -> None:
        self.client = client

    def disabled(self) -> dict[str, str]:
        return {entry.name: entry.reason for entry in self.client.envs().disabled}

    def score_task(self, task_id: str, response: str) -> Got:
        try:
            result = self.client.verify([VerifyItem(task_id=task_id, response=response)])
        except UnavailableError as exc:
            raise Skip(exc.reason or exc.detail) from None
        item = result.results[0]
        return Got(item.status, item.reward, item.detail)

    def score(self, verifier: str, reference: Any, options: dict[str, Any], response: str) -> Got:
        item = VerifyItem(response=response, reference=reference, options=options or None)
        try:
            result = self.client.verify([item], verifier=verifier)
        except UnavailableError as exc:
            raise Skip(exc.reason or exc.detail) from None
        scored = result.results[0]
        return Got(scored.status, scored.reward, scored.detail)

    def reset(self, env: str, seed: int, options: dict[str, Any]) -> Any:
        try:
            episode = self.client.reset(env, seed=seed, options=options)
        except UnavailableError as exc:
            raise Skip(exc.reason or exc.detail) from None
        if episode.state is None:
            raise RuntimeError(f"the reset failed ({episode.status}): {episode.detail}")
        return episode.state

    def step(self, env: str, handle: Any, action: str) -> tuple[Any, Got, bool]:
        reply = self.client.step(env, str(handle), action)
        ended = reply.terminated or reply.truncated
        return reply.state, Got(reply.status, reply.reward, reply.detail), ended
