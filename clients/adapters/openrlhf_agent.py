"""OpenRLHF agent function: multi-turn episodes of a service environment.

    ENVSERVER_URL=http://127.0.0.1:8000 ENVSERVER_ENV=math python -m openrlhf.cli.train_ppo_ray \\
        ... --train.agent_func_path clients/adapters/openrlhf_agent.py

Each dataset row's label names the episode: a task id (``math@1/42?max_attempts=3``; the
prompt column should then hold that task's prompt, as ``reset`` returned it), or a JSON object
``{"seed": 42, "options": {...}}``. Every model turn is one ``step``; the environment's reply is
appended as feedback until the episode ends; rewards are per step (OpenRLHF sums them). A step
the service could not score raises, since OpenRLHF cannot mask a sample and a made-up 0 would
poison training. A label that names no episode (not a task id the service accepts, not the JSON
above) is a data error, as in the single-turn route: the episode ends at its first step with
reward 0 and ``bad_label`` 1.0. Every step's ``extra_logs`` has the same keys (``valid``,
``bad_label`` and the components the environment's verifier declares, 0.0 where a step lacks
one): OpenRLHF merges the samples' logs key by key, and a key some samples lack breaks the batch.
"""

from __future__ import annotations

import json
import os
from typing import Any

import torch

from clients.errors import ClientError
from clients.http import AsyncEnvServerClient
from clients.transitions import observation_text

try:  # inside OpenRLHF
    from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor
except ImportError:  # elsewhere: plain bases, so the file stays importable and testable

    class AgentInstanceBase:  # type: ignore[no-redef]
        """Stands in for OpenRLHF's base class."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            del args, kwargs

    class MultiTurnAgentExecutor:  # type: ignore[no-redef]
        """Stands in for OpenRLHF's executor base."""

        def __init__(self, agent_instance_cls: type[Any]) -> None:
            self.agent_instance_cls = agent_instance_cls


_LOG_KEYS: dict[str, tuple[str, ...]] = {}


async def _log_keys(client: AsyncEnvServerClient, env_id: str) -> tuple[str, ...]:
    """The components every step of ``env_id`` logs: those its verifier declares (none for an
    environment without one). Asked once per process."""
    if env_id not in _LOG_KEYS:
        catalogue = await client.envs()
        verifier = next((e.verifier for e in catalogue.envs if e.id == env_id), None)
        declared = next((v.components for v in catalogue.verifiers if v.name == verifier), [])
        _LOG_KEYS[env_id] = tuple(declared)
    return _LOG_KEYS[env_id]


class AgentInstance(AgentInstanceBase):  # type: ignore[misc]
    """One episode: ``reset`` starts it from the label, ``step`` plays one model turn."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.env = os.environ.get("ENVSERVER_ENV", "math")
        self.state: str | None = None
        self.bad_label: str | None = None  # why the label names no episode

    async def reset(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """``{"observation", "label"}`` → ``{"observation"}`` (the prompt, unchanged)."""
        self.state, self.bad_label = None, None
        label = states.get("label")
        try:
            start = _start(label)
            async with AsyncEnvServerClient() as client:
                episode = await client.reset(self.env, **start)
        except (ValueError, ClientError) as exc:  # the label's fault: no retry can fix it
            self.bad_label = f"{self.env}: label {label!r} names no episode: {exc}"
            return {"observation": states["observation"]}
        if episode.status != "ok" or episode.state is None:
            raise RuntimeError(f"{self.env} reset failed: {episode.status}: {episode.detail}")
        self.state = episode.state
        return {"observation": states["observation"]}

    async def step(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """One model turn (``action_text``) → reward, feedback and whether the episode ended."""
        async with AsyncEnvServerClient() as client:
            keys = await _log_keys(client, self.env)
            if self.bad_label is not None:
                return _ended(states, keys)
            if self.state is None:
                raise RuntimeError("step before reset")
            result = await client.step(self.env, self.state, states["action_text"])
        if result.reward is None:
            raise RuntimeError(
                f"{self.env} could not score the step: {result.status}: {result.detail}"
            )
        self.state = result.state or self.state
        done = result.terminated or result.truncated
        reward = torch.tensor(float(result.reward))
        return {
            "rewards": reward,
            "scores": reward,
            "environment_feedback": "" if done else "\n" + observation_text(result.observation),
            "done": done,
            "sampling_params": states.get("sampling_params"),
            "extra_logs": {
                "valid": torch.tensor(float(result.status == "ok")),
                "bad_label": torch.tensor(0.0),
                **{k: torch.tensor(result.components.get(k, 0.0)) for k in keys},
            },
        }


def _start(label: Any) -> dict[str, Any]:
    """The reset arguments a label names; ValueError for one that names nothing."""
    if isinstance(label, str) and "@" in label:
        return {"task_id": label}
    spec = json.loads(label) if isinstance(label, str) else label
    if not isinstance(spec, dict):
        raise ValueError("a label is a task id or a JSON object")
    return {"seed": spec.get("seed"), "options": spec.get("options")}


def _ended(states: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The one step of an episode whose label names none: 0, flagged, over."""
    zero = torch.tensor(0.0)
    return {
        "rewards": zero,
        "scores": zero,
        "environment_feedback": "",
        "done": True,
        "sampling_params": states.get("sampling_params"),
        "extra_logs": {
            "valid": zero,
            "bad_label": torch.tensor(1.0),
            **dict.fromkeys(keys, zero),
        },
    }


class AgentExecutor(MultiTurnAgentExecutor):  # type: ignore[misc]
    """What OpenRLHF loads from ``--train.agent_func_path``."""

    def __init__(self) -> None:
        super().__init__(AgentInstance)
