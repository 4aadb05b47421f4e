"""TRL: a ``reward_funcs`` entry that scores a whole generation batch with one service call,
and an ``environment_factory`` class for the service's multi-turn environments.

    from clients.adapters.trl import RemoteReward
    trainer = GRPOTrainer(model, reward_funcs=[RemoteReward(verifier="math")], ...)

TRL calls ``reward(prompts=..., completions=..., completion_ids=..., **columns)`` with every
dataset column except ``prompt`` as a keyword, one value per completion; async callables run
concurrently on TRL's event loop. The reference comes from the ``reference_column`` (TRL's
examples call it ``ground_truth``), or a ``task_id`` column names the task so the reference
never leaves the server. A completion the service could not score (``timeout``/``error``) gets
``None``, which TRL treats as "does not apply" (NaN) rather than a reward of 0.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from clients.http import AsyncEnvServerClient, EnvServerClient
from clients.transitions import observation_text


def completion_text(completion: Any) -> str:
    """The text of a completion: a string, or (conversational format) the content of the last
    message of a list of chat messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion:
        last = completion[-1]
        if isinstance(last, Mapping):
            return str(last.get("content") or "")
    raise TypeError(f"cannot read a completion of type {type(completion).__name__}")


class RemoteReward:
    """An async TRL reward function backed by ``POST /v1/verify`` (one request per batch).

    ``__name__`` is what TRL logs (``rewards/<name>/mean``): ``envserver_<verifier>`` unless
    ``name`` is given.
    """

    def __init__(
        self,
        verifier: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        reference_column: str = "ground_truth",
        options: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        name: str | None = None,
    ) -> None:
        self.verifier = verifier
        self.base_url = base_url
        self.api_key = api_key
        self.reference_column = reference_column
        self.options = dict(options or {})
        self.timeout_s = timeout_s
        self.__name__ = name or f"envserver_{verifier or 'task'}"

    def _items(
        self, completions: Sequence[Any], columns: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        texts = [completion_text(c) for c in completions]
        if "task_id" in columns:
            return [
                {"response": t, "task_id": i}
                for t, i in zip(texts, columns["task_id"], strict=True)
            ]
        if self.verifier is None:
            raise ValueError("RemoteReward needs a verifier, or a 'task_id' column in the dataset")
        references = columns.get(self.reference_column)
        if references is None:
            raise ValueError(f"the dataset has no '{self.reference_column}' column for references")
        return [{"response": t, "reference": r} for t, r in zip(texts, references, strict=True)]

    async def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] = (),
        completion_ids: Any = None,
        **columns: Any,
    ) -> list[float | None]:
        """Rewards in completion order; ``None`` where the service could not score."""
        items = self._items(completions, columns)
        if not items:
            return []
        scored = await _async_client(self.base_url, self.api_key).verify(
            items,
            verifier=None if "task_id" in columns else self.verifier,
            options=self.options or None,
            timeout_s=self.timeout_s,
        )
        return [r.reward if r.status in ("ok", "invalid") else None for r in scored.results]


def present_options(options: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A row's ``options`` without the keys the datasets library filled with ``None`` (it gives
    every row every key any row has, so a row that set fewer options carries ``None`` for the
    rest, which the service would refuse as an invalid value)."""
    if options is None:
        return None
    return {k: v for k, v in options.items() if v is not None}


# One client per process for resets (TRL calls ``reset`` synchronously) and one per event loop
# for tools and rewards (TRL awaits async tools on its own loop): concurrent rollouts share
# their connections.
_SYNC_CLIENTS: dict[tuple[str | None, str | None], EnvServerClient] = {}
_ASYNC_CLIENTS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str | None, str | None], AsyncEnvServerClient]
] = weakref.WeakKeyDictionary()


def _sync_client(base_url: str | None, api_key: str | None) -> EnvServerClient:
    if (base_url, api_key) not in _SYNC_CLIENTS:
        _SYNC_CLIENTS[base_url, api_key] = EnvServerClient(base_url, api_key=api_key)
    return _SYNC_CLIENTS[base_url, api_key]


def _async_client(base_url: str | None, api_key: str | None) -> AsyncEnvServerClient:
    clients = _ASYNC_CLIENTS.setdefault(asyncio.get_running_loop(), {})
    if (base_url, api_key) not in clients:
        clients[base_url, api_key] = AsyncEnvServerClient(base_url, api_key=api_key)
    return clients[base_url, api_key]


class RemoteEnvironment:
    """A TRL environment: one episode of a service environment per rollout.

        trainer = GRPOTrainer(..., environment_factory=environment_factory("math"))

    TRL calls ``reset(**row)`` with the dataset row (``seed``/``options`` or ``task_id``
    columns name the task; options the datasets library filled with ``None`` are dropped) and
    appends the returned text to the prompt; ``answer`` is the (async) tool the model calls to
    act; ``get_reward`` is summed into the reward. An episode the model ended without ever
    answering is scored by the service as an empty answer, so the environment's own rule for
    a missing answer decides its reward. An unscored step leaves the reward ``None``, never 0.
    """

    def __init__(
        self, env_id: str, *, base_url: str | None = None, api_key: str | None = None
    ) -> None:
        self.env_id = env_id
        self.base_url, self.api_key = base_url, api_key
        self._state: str | None = None
        self._reward: float | None = 0.0
        self._answered = False
        self.done = False

    def reset(self, **row: Any) -> str:
        """Start the episode the row names; the task text for the prompt."""
        episode = _sync_client(self.base_url, self.api_key).reset(
            self.env_id,
            seed=row.get("seed"),
            options=present_options(row.get("options")),
            task_id=row.get("task_id"),
        )
        if episode.status != "ok" or episode.state is None:
            raise RuntimeError(f"{self.env_id} reset failed: {episode.status}: {episode.detail}")
        self._state, self._reward, self.done, self._answered = episode.state, 0.0, False, False
        return observation_text(episode.observation)

    async def _step(self, text: str) -> str:
        assert self._state is not None
        client = _async_client(self.base_url, self.api_key)
        step = await client.step(self.env_id, self._state, text)
        self._answered = True
        if step.reward is None:
            self._reward = None  # unscored: masked, not 0
        elif self._reward is not None:
            self._reward += step.reward
        self._state = step.state or self._state
        self.done = step.terminated or step.truncated
        feedback = observation_text(step.observation)
        return feedback or ("The episode has ended." if self.done else "")

    async def answer(self, text: str) -> str:
        """Submit an answer or action to the environment.

        Args:
            text: The answer or action, as the task asks for it.

        Returns:
            What the environment says back (feedback, the next observation, or that it ended).
        """
        if self._state is None or self.done:
            return "The episode has ended."
        return await self._step(text)

    async def get_reward(self) -> float | None:
        """The episode's summed reward (None if a step could not be scored); an episode never
        answered is first scored as an empty answer by the service."""
        if self._state is not None and not self._answered and not self.done:
            await self._step("")
        return self._reward


def environment_factory(env_id: str, **kwargs: Any) -> Callable[[], RemoteEnvironment]:
    """What TRL's ``environment_factory`` wants: a zero-argument constructor."""
    return lambda: RemoteEnvironment(env_id, **kwargs)
