"""Gymnasium environments backed by an envserver: ``EnvServerEnv`` and the batched
``EnvServerVectorEnv``, registered on import.

    import gymnasium as gym
    import clients.gym  # registers the envserver/* ids
    env = gym.make("envserver/Math-v0", base_url="http://127.0.0.1:8000")
    envs = gym.make_vec("envserver/Math-v0", num_envs=8, vectorization_mode="vector_entry_point")

The server keeps nothing between calls: the episode lives in ``env.state_token``, which the
environment sends with every step. Set it to an earlier token to branch (tree search).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Unpack

import gymnasium as gym

from clients.remote import Remote, RemoteArgs
from clients.transitions import (
    draw_seed,
    ensure_ok,
    observation_text,
    reset_info,
    reward_of,
    step_info,
)
from clients.vector import EnvServerVectorEnv
from envserver.wire import ResetResponse

__all__ = ["GYM_IDS", "REMOTE_ID", "EnvServerEnv", "EnvServerVectorEnv", "GymId", "register"]


class EnvServerEnv(gym.Env[str, str]):
    """One remote environment driven through reset/step with an opaque state token.

    ``env_id`` is the server's environment id (``math``). ``options`` are the default reset
    options (e.g. ``{"difficulty": "easy", "max_attempts": 2}``); ``reset(options=...)``
    overrides them per episode, and ``reset(options={"task_id": ...})`` replays one task. Pass
    ``client`` to share one connection pool among many environments; otherwise the environment
    opens its own (from ``base_url``/``api_key``/``timeout``/``retry``/``transport``: ``"stream"``
    sends the calls over one WebSocket) and closes it on ``close()``.
    ``max_observation_chars`` and ``max_action_chars`` bound the spaces.

    Observations and actions are strings (``UnicodeText`` spaces); chat observations are their
    JSON list, with the messages also in ``info["messages"]``. ``step`` raises
    ``ItemFailedError`` when the server could not score the step (status ``timeout``/``error``):
    the state token is unchanged, so the step can be retried. Other failures raise the
    ``clients.errors`` exceptions.

    Making one asks the server for the environment's spec (kept as ``env_info``), so an
    environment the server cannot serve fails at ``gym.make`` with ``UnavailableError``, whose
    message is the server's reason and fix (``ClientError`` for an id it does not know).
    """

    # Gymnasium reads it from the class; the base annotates it as an instance attribute.
    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012

    def __init__(self, env_id: str, **remote: Unpack[RemoteArgs]) -> None:
        self.env_id = env_id
        self.remote = Remote.open(env_id, remote)
        self.client = self.remote.client
        self.options = self.remote.options
        self.env_info = self.remote.env_info
        self.observation_space = self.remote.observation_space
        self.action_space = self.remote.action_space
        self.task_id: str | None = None
        self._state_token: str | None = None
        self._finished = False

    @property
    def state_token(self) -> str | None:
        """The current episode's state token (None before the first reset)."""
        return self._state_token

    @state_token.setter
    def state_token(self, token: str) -> None:
        # Restoring an earlier token branches the episode from that point; whether that state
        # has ended is the server's to say (409 on a step).
        self._state_token = token
        self._finished = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode; returns ``(observation, info)`` with ``info["task_id"]`` naming
        the task. Unseeded resets draw the server seed from ``np_random``, so a seeded reset
        followed by unseeded ones repeats. Raises ``ItemFailedError`` if the server could not
        generate the task, ``ValueError`` for a task id given together with a seed or options."""
        super().reset(seed=seed)
        response = self._reset_response(seed, options or {})
        ensure_ok(response)
        self._state_token = response.state
        self._finished = False
        self.task_id = response.task_id
        return observation_text(response.observation), reset_info(response)

    def _reset_response(self, seed: int | None, options: dict[str, Any]) -> ResetResponse:
        if "task_id" in options:
            if seed is not None or len(options) > 1:
                raise ValueError("a task id names seed and options; give it alone")
            return self.client.reset(self.env_id, task_id=str(options["task_id"]))
        server_seed = int(seed) if seed is not None else draw_seed(self.np_random)
        return self.client.reset(self.env_id, seed=server_seed, options=self.options | options)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Send ``action``; returns ``(observation, reward, terminated, truncated, info)`` with
        ``info`` holding ``status`` (``ok``/``invalid``), ``detail``, ``components`` and
        ``metrics``. Raises ``gymnasium.error.ResetNeeded`` before a reset or after the episode
        ended."""
        if self._state_token is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self._finished:
            raise gym.error.ResetNeeded(
                "the episode has ended: call reset(), or set state_token to an earlier token"
            )
        response = self.client.step(self.env_id, self._state_token, action)
        ensure_ok(response)
        reward = reward_of(response)
        self._state_token = response.state
        self._finished = response.terminated or response.truncated
        return (
            observation_text(response.observation),
            reward,
            response.terminated,
            response.truncated,
            step_info(response),
        )

    def close(self) -> None:
        """Close the connection pool if this environment opened it."""
        self.remote.close()
        super().close()


# --- registration -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GymId:
    """A Gym id for a server environment. ``env_id`` None: the caller passes ``env_id=``."""

    id: str
    env_id: str | None
    max_episode_steps: int | None = None


REMOTE_ID = "envserver/Remote-v0"
GYM_IDS: tuple[GymId, ...] = (
    GymId("envserver/Math-v0", "math"),
    GymId("envserver/TamarinProof-v0", "tamarin/proof", max_episode_steps=500),
    GymId("envserver/WebShop-v0", "webshop", max_episode_steps=100),
    GymId("envserver/NL2SVA-Human-v0", "sva/nl2sva-human"),
    GymId("envserver/NL2SVA-Machine-v0", "sva/nl2sva-machine"),
    GymId("envserver/SVAGenerated-v0", "sva/generated"),
    GymId("envserver/SBOLDesign-v0", "sbol/design"),
    GymId("envserver/ALFWorld-v0", "alfworld", max_episode_steps=50),
    GymId(REMOTE_ID, None),
)
"""One line per family; new families append theirs."""


def register(ids: tuple[GymId, ...] = GYM_IDS) -> None:
    """Register ``ids`` with Gymnasium (each with the batched vector entry point); ids already
    registered are left alone, so a re-import does not warn."""
    for gym_id in ids:
        if gym_id.id in gym.registry:
            continue
        gym.register(
            id=gym_id.id,
            entry_point="clients.gym:EnvServerEnv",
            vector_entry_point="clients.vector:EnvServerVectorEnv",
            max_episode_steps=gym_id.max_episode_steps,
            kwargs={"env_id": gym_id.env_id} if gym_id.env_id is not None else {},
        )


register()
