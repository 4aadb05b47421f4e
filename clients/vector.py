"""``EnvServerVectorEnv``: N remote episodes advanced by the batch routes.

A vector reset is one ``reset/batch`` request and a vector step one ``step/batch`` request. With
next-step autoreset (Gymnasium's default) a step where some sub-environments restart sends their
resets as a second ``reset/batch`` request, concurrently with the steps, so the vector step still
costs one round trip. The request runs on a background thread between ``step_async`` and
``step_wait``, so a trainer can overlap it with other work.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass
from typing import Any, Unpack

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from clients.remote import Remote, RemoteArgs
from clients.transitions import (
    draw_seed,
    ensure_ok,
    observation_text,
    reset_info,
    reward_of,
    step_info,
)
from envserver.wire import (
    BatchResetResponse,
    BatchStepResponse,
    ResetRequest,
    StepRequest,
)

Observations = tuple[str, ...]
Infos = dict[str, Any]


@dataclass
class _Pending:
    """A call between ``*_async`` and ``*_wait``: which sub-environments reset and which step."""

    kind: str  # "reset" or "step"
    reset_indices: list[int]
    resets: Future[BatchResetResponse] | None
    step_indices: list[int]
    steps: Future[BatchStepResponse] | None


class EnvServerVectorEnv(VectorEnv[Observations, Sequence[str], np.ndarray]):
    """``num_envs`` episodes of the server environment ``env_id``, batched.

    Observations are tuples of strings; actions are sequences of strings; rewards, terminations
    and truncations are arrays. Autoreset is next-step: the step after a sub-environment ends
    resets it (its action is ignored) and returns its first observation with reward 0. Arguments
    as for ``EnvServerEnv``; ``max_episode_steps`` truncates episodes locally.

    ``reset``/``step`` raise ``ItemFailedError`` (with ``index``) if any item came back
    ``timeout``/``error``; nothing is committed then, so the same call can be repeated. An item
    the server refused (``ItemRefusedError``, a ``ClientError``: its episode had ended) cannot
    succeed on a retry.
    ``*_wait(timeout=...)`` raises ``TimeoutError`` with the call still pending. Making one
    fails as making ``EnvServerEnv`` does for an environment the server cannot serve.
    """

    # Gymnasium reads it from the class; the base annotates it as an instance attribute.
    metadata: dict[str, Any] = {  # noqa: RUF012
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int,
        env_id: str,
        *,
        max_episode_steps: int | None = None,
        **remote: Unpack[RemoteArgs],
    ) -> None:
        if num_envs < 1:
            raise ValueError("num_envs must be at least 1")
        self.num_envs = num_envs
        self.env_id = env_id
        self.remote = Remote.open(env_id, remote)
        self.client = self.remote.client
        self.options = self.remote.options
        self._episode_options = self.options
        self.max_episode_steps = max_episode_steps
        self.env_info = self.remote.env_info
        self.single_observation_space = self.remote.observation_space
        self.single_action_space = self.remote.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._tokens: list[str | None] = [None] * num_envs
        self._task_ids: list[str | None] = [None] * num_envs
        # One generator per sub-environment, as a sub-environment of SyncVectorEnv would have:
        # sub-environment i after reset(seed=s) sees the episodes EnvServerEnv sees after
        # reset(seed=s + i).
        self._env_rngs: list[np.random.Generator | None] = [None] * num_envs
        self._autoreset = np.zeros(num_envs, dtype=np.bool_)
        self._episode_steps = np.zeros(num_envs, dtype=np.int64)
        # Two threads: the steps and the autoresets of one vector step go out together.
        self._threads = ThreadPoolExecutor(max_workers=2, thread_name_prefix="envserver-vector")
        self._pending: _Pending | None = None

    @property
    def state_tokens(self) -> tuple[str | None, ...]:
        """Each sub-environment's current state token (None before the first reset)."""
        return tuple(self._tokens)

    @property
    def task_ids(self) -> tuple[str | None, ...]:
        """Each sub-environment's current task id."""
        return tuple(self._task_ids)

    # --- seeds ------------------------------------------------------------------------------

    def _env_seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, int | np.integer):
            return [int(seed) + i for i in range(self.num_envs)]
        seeds = [None if s is None else int(s) for s in seed]
        if len(seeds) != self.num_envs:
            raise ValueError(f"{len(seeds)} seeds for {self.num_envs} environments")
        return seeds

    def _server_seed(self, index: int, seed: int | None) -> int:
        if seed is not None:
            self._env_rngs[index] = seeding.np_random(seed)[0]
            return seed
        rng = self._env_rngs[index]
        if rng is None:
            rng = self._env_rngs[index] = seeding.np_random()[0]
        return draw_seed(rng)

    def _reset_items(self, indices: list[int], seeds: list[int | None]) -> list[ResetRequest]:
        return [
            ResetRequest(seed=self._server_seed(i, seeds[i]), options=self._episode_options)
            for i in indices
        ]

    # --- reset ------------------------------------------------------------------------------

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Observations, Infos]:
        """Reset every sub-environment in one request; ``seed`` is an int (sub-environment i
        gets ``seed + i``) or one seed per sub-environment; ``options`` override the default
        reset options for these episodes and the ones autoreset starts."""
        self.reset_async(seed=seed, options=options)
        return self.reset_wait()

    def reset_async(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        """Send the reset and return at once; ``reset_wait`` collects it."""
        self._ensure_idle()
        if isinstance(seed, int | np.integer):
            super().reset(seed=int(seed))
        # Autoresets start episodes like the last explicit reset did.
        self._episode_options = self.options | (options or {})
        everyone = list(range(self.num_envs))
        items = self._reset_items(everyone, self._env_seeds(seed))
        future = self._threads.submit(self.client.reset_batch, self.env_id, items)
        self._pending = _Pending("reset", everyone, future, [], None)

    def reset_wait(self, timeout: float | None = None) -> tuple[Observations, Infos]:
        """The pending reset's ``(observations, infos)``; each info has ``task_id``."""
        pending = self._collect("reset", timeout)
        assert pending.resets is not None  # a reset always resets everyone
        results = pending.resets.result().results
        for i, response in zip(pending.reset_indices, results, strict=True):
            ensure_ok(response, index=i)
        observations: list[str] = []
        infos: Infos = {}
        for i, response in enumerate(results):
            self._tokens[i] = response.state
            self._task_ids[i] = response.task_id
            observations.append(observation_text(response.observation))
            infos = self._add_info(infos, reset_info(response), i)
        self._autoreset[:] = False
        self._episode_steps[:] = 0
        return tuple(observations), infos

    # --- step -------------------------------------------------------------------------------

    def step(
        self, actions: Sequence[str]
    ) -> tuple[Observations, np.ndarray, np.ndarray, np.ndarray, Infos]:
        """One vector step: ``(observations, rewards, terminations, truncations, infos)``."""
        self.step_async(actions)
        return self.step_wait()

    def step_async(self, actions: Sequence[str]) -> None:
        """Send the step (and the autoresets) and return at once; ``step_wait`` collects it."""
        self._ensure_idle()
        if any(token is None for token in self._tokens):
            raise gym.error.ResetNeeded("call reset() before step()")
        actions = list(actions)
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} actions for {self.num_envs} environments")
        reset_indices = [i for i in range(self.num_envs) if self._autoreset[i]]
        step_indices = [i for i in range(self.num_envs) if not self._autoreset[i]]
        resets = steps = None
        if reset_indices:
            items = self._reset_items(reset_indices, [None] * self.num_envs)
            resets = self._threads.submit(self.client.reset_batch, self.env_id, items)
        if step_indices:
            requests = [
                StepRequest(state=str(self._tokens[i]), action=actions[i]) for i in step_indices
            ]
            steps = self._threads.submit(self.client.step_batch, self.env_id, requests)
        self._pending = _Pending("step", reset_indices, resets, step_indices, steps)

    def step_wait(
        self, timeout: float | None = None
    ) -> tuple[Observations, np.ndarray, np.ndarray, np.ndarray, Infos]:
        """The pending step's results; raises ``ItemFailedError`` (nothing committed) if an
        item could not be scored."""
        pending = self._collect("step", timeout)
        resets = pending.resets.result().results if pending.resets is not None else []
        steps = pending.steps.result().results if pending.steps is not None else []
        for i, reset_response in zip(pending.reset_indices, resets, strict=True):
            ensure_ok(reset_response, index=i)
        for i, step_response in zip(pending.step_indices, steps, strict=True):
            ensure_ok(step_response, index=i)
            reward_of(step_response)

        observations = [""] * self.num_envs
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=np.bool_)
        truncations = np.zeros(self.num_envs, dtype=np.bool_)
        infos: Infos = {}
        for i, reset_response in zip(pending.reset_indices, resets, strict=True):
            self._tokens[i] = reset_response.state
            self._task_ids[i] = reset_response.task_id
            self._episode_steps[i] = 0
            observations[i] = observation_text(reset_response.observation)
            infos = self._add_info(infos, reset_info(reset_response), i)
        for i, step_response in zip(pending.step_indices, steps, strict=True):
            self._tokens[i] = step_response.state
            self._episode_steps[i] += 1
            observations[i] = observation_text(step_response.observation)
            rewards[i] = reward_of(step_response)
            terminations[i] = step_response.terminated
            truncations[i] = step_response.truncated or (
                self.max_episode_steps is not None
                and not step_response.terminated
                and self._episode_steps[i] >= self.max_episode_steps
            )
            infos = self._add_info(infos, step_info(step_response), i)
        self._autoreset = terminations | truncations
        return tuple(observations), rewards, terminations, truncations, infos

    # --- plumbing ---------------------------------------------------------------------------

    def _ensure_idle(self) -> None:
        if self.closed:
            raise gym.error.ClosedEnvironmentError("the vector environment is closed")
        if self._pending is not None:
            raise gym.error.AlreadyPendingCallError(
                f"a {self._pending.kind} is pending: call {self._pending.kind}_wait() first",
                self._pending.kind,
            )

    def _collect(self, kind: str, timeout: float | None) -> _Pending:
        pending = self._pending
        if pending is None or pending.kind != kind:
            raise gym.error.NoAsyncCallError(f"no {kind} is pending: call {kind}_async()", kind)
        futures: list[Future[Any]] = [f for f in (pending.resets, pending.steps) if f is not None]
        _, not_done = wait_for(futures, timeout=timeout)
        if not_done:
            raise TimeoutError(f"the {kind} did not finish within {timeout} s; it is pending")
        # Whatever happens next (results or an exception from them), the call is over.
        self._pending = None
        return pending

    def close_extras(self, **kwargs: Any) -> None:
        """Wait for a pending call, stop the threads, close the pool if this env opened it."""
        self._threads.shutdown(wait=True)
        self._pending = None
        self.remote.close()
