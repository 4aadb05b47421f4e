"""What the server's reset and step answers become in Gym terms; shared by the single and the
vector environment so both report the same observations, infos and failures."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from clients.errors import ItemFailedError, ItemRefusedError, UnexpectedResponseError
from clients.http import EnvServerClient
from envserver.wire import ChatMessage, EnvInfo, ResetResponse, StepResponse

MAX_SERVER_SEED = 2**63 - 1
"""The largest seed a reset accepts (``ResetRequest.seed``)."""

DEFAULT_MAX_OBSERVATION_CHARS = 1_000_000
"""Observations have no server-side limit; a million characters is far beyond any prompt."""


def served_spec(client: EnvServerClient, env_id: str, *, close_on_error: bool) -> EnvInfo:
    """The server's spec of ``env_id``, asked when an environment is made so that making one the
    server cannot serve fails at once with the server's reason: ``UnavailableError`` (disabled
    there; ``.fix`` says how to enable it), ``ClientError`` (unknown id) or a transport error.
    ``close_on_error`` closes ``client`` before raising (an environment's own client)."""
    try:
        return client.env(env_id)
    except BaseException:
        if close_on_error:
            client.close()
        raise


def observation_text(observation: str | list[ChatMessage] | None) -> str:
    """The observation as one string: text as it is; chat messages as their JSON list (lossless,
    so a chat template can be applied to ``json.loads(obs)``)."""
    if observation is None:
        return ""
    if isinstance(observation, str):
        return observation
    return json.dumps([m.model_dump() for m in observation], ensure_ascii=False)


def ensure_ok(response: ResetResponse | StepResponse, index: int | None = None) -> None:
    """Raise ``ItemRefusedError`` for an item the server refused (its episode had ended), and
    ``ItemFailedError`` for one whose status is ``timeout`` or ``error``: there is no observation
    or reward, and reporting one (0) would teach the policy a lie."""
    if response.problem is not None:
        raise ItemRefusedError(response.problem, index=index)
    if response.status in ("timeout", "error"):
        raise ItemFailedError(response.status, response.detail, index=index)
    if response.state is None:
        raise UnexpectedResponseError(
            f"a {response.status!r} item came without a state token", title="missing state"
        )


def reward_of(response: StepResponse) -> float:
    """The step's reward; an ``ok``/``invalid`` step always has one."""
    if response.reward is None:
        raise UnexpectedResponseError(
            f"a {response.status!r} step came without a reward", title="missing reward"
        )
    return float(response.reward)


def reset_info(response: ResetResponse) -> dict[str, Any]:
    """The server's info plus ``task_id`` (and ``messages`` for chat observations)."""
    info: dict[str, Any] = {**response.info, "task_id": response.task_id}
    if isinstance(response.observation, list):
        info["messages"] = [m.model_dump() for m in response.observation]
    return info


def step_info(response: StepResponse) -> dict[str, Any]:
    """The server's info plus how the step was scored: ``status`` (``ok``/``invalid``),
    ``detail``, the reward's named ``components`` and the ``metrics`` recorded beside it."""
    info: dict[str, Any] = {
        **response.info,
        "status": response.status,
        "detail": response.detail,
        "components": dict(response.components),
        "metrics": dict(response.metrics),
    }
    if isinstance(response.observation, list):
        info["messages"] = [m.model_dump() for m in response.observation]
    return info


def draw_seed(rng: np.random.Generator) -> int:
    """A server seed drawn from ``rng``, so ``reset(seed=s)`` followed by unseeded resets gives
    the same sequence of episodes every time, as Gym's seeding promises."""
    return int(rng.integers(0, MAX_SERVER_SEED, dtype=np.int64))
