"""OpenRLHF agent function: multi-turn episodes of a service environment.

    ENVSERVER_URL=http://127.0.0.1:8000 ENVSERVER_ENV=math python -m openrlhf.cli.train_ppo_ray \\
        ... --train.agent_func_path clients/adapters/openrlhf_agent.py \\
        --algo.dynamic_filtering_enable

Each dataset row's label names the episode: a task id (``math@1/42?max_attempts=3``; the
prompt column should then hold that task's prompt, as ``reset`` returned it), or a JSON object
(or a dict: a datasets struct column) ``{"seed": 42, "options": {...}}`` or ``{"task_id": ...}``;
keys the datasets library filled with ``None`` are dropped. Every model turn is one ``step``;
the environment's reply is appended as feedback until the episode ends; rewards are per step
(OpenRLHF sums them).

A label that names no episode (not a task id the service accepts, not the JSON above, or one
without a seed or task id, which would give each sample of a prompt a different random task)
is a data error, as in the single-turn route: the episode ends at its first step with reward 0
and ``bad_label`` 1.0.

A reset or step the service could not serve (``timeout``, ``error``) leaves the episode
unscored. What
OpenRLHF can skip is a prompt's whole group of samples, and only with dynamic filtering
(``--algo.dynamic_filtering_enable``): it drops a group whose mean score lies outside
``--algo.dynamic_filtering_range`` and draws another prompt. So the unscored sample's score is
NaN, outside every range, and its reward None (``AgentExecutor`` below): with dynamic filtering
its group is dropped; without it OpenRLHF has nothing to skip with and stops at that batch
(``Experience.concat_experiences`` cannot merge a missing reward) rather than training on a
made-up 0. Every step's ``extra_logs`` has the same keys (``valid``, ``bad_label``,
``unscored`` and the components and metrics the environment's verifier declares, 0.0 where a
step lacks one): OpenRLHF merges the samples' logs key by key, and a key some samples lack
breaks the batch.
"""

from __future__ import annotations

import json
import logging
import math
import os
from typing import Any

import torch

from clients.adapters.rows import missing, present_options
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


log = logging.getLogger("envserver")
_LOG_KEYS: dict[str, tuple[str, ...]] = {}


async def _log_keys(client: AsyncEnvServerClient, env_id: str) -> tuple[str, ...]:
    """The components and metrics every step of ``env_id`` logs: those its verifier declares
    (none for an environment without one). Asked once per process."""
    if env_id not in _LOG_KEYS:
        catalogue = await client.envs()
        verifier = next((e.verifier for e in catalogue.envs if e.id == env_id), None)
        declared = next(
            ([*v.components, *v.metrics] for v in catalogue.verifiers if v.name == verifier), []
        )
        _LOG_KEYS[env_id] = tuple(declared)
    return _LOG_KEYS[env_id]


class AgentInstance(AgentInstanceBase):  # type: ignore[misc]
    """One episode: ``reset`` starts it from the label, ``step`` plays one model turn."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.env = os.environ.get("ENVSERVER_ENV", "math")
        self.state: str | None = None
        self.bad_label: str | None = None  # why the label names no episode
        self.unscored = False  # the service could not start or score the episode

    async def reset(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """``{"observation", "label"}`` → ``{"observation"}`` (the prompt, unchanged)."""
        self.state, self.bad_label, self.unscored = None, None, False
        label = states.get("label")
        try:
            start = _start(label)
            async with AsyncEnvServerClient() as client:
                episode = await client.reset(self.env, **start)
        except (ValueError, ClientError) as exc:  # the label's fault: no retry can fix it
            self.bad_label = f"{self.env}: label {label!r} names no episode: {exc}"
            return {"observation": states["observation"]}
        if episode.status != "ok" or episode.state is None:
            self._lost("start", episode.status, episode.detail)
        self.state = episode.state
        return {"observation": states["observation"]}

    def _lost(self, what: str, status: str, detail: str) -> None:
        log.warning("%s could not %s the episode (%s: %s)", self.env, what, status, detail)
        self.unscored = True

    async def step(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """One model turn (``action_text``) → reward, feedback and whether the episode ended."""
        async with AsyncEnvServerClient() as client:
            keys = await _log_keys(client, self.env)
            if self.bad_label is not None or self.unscored:
                return _ended(states, keys, unscored=self.unscored)
            if self.state is None:
                raise RuntimeError("step before reset")
            result = await client.step(self.env, self.state, states["action_text"])
        if result.reward is None:
            self._lost("score a step of", result.status, result.detail)
            return _ended(states, keys, unscored=True)
        self.state = result.state or self.state
        done = result.terminated or result.truncated
        reward = torch.tensor(float(result.reward))
        recorded = {**result.metrics, **result.components}
        return {
            "rewards": reward,
            "scores": reward,
            "environment_feedback": "" if done else "\n" + observation_text(result.observation),
            "done": done,
            "sampling_params": states.get("sampling_params"),
            "extra_logs": {
                "valid": torch.tensor(float(result.status == "ok")),
                "bad_label": torch.tensor(0.0),
                "unscored": torch.tensor(0.0),
                **{k: torch.tensor(recorded.get(k, 0.0)) for k in keys},
            },
        }


def _start(label: Any) -> dict[str, Any]:
    """The reset arguments a label names; ValueError for one that names no episode."""
    if isinstance(label, str) and "@" in label:
        return {"task_id": label}
    spec = json.loads(label) if isinstance(label, str) else label
    if not isinstance(spec, dict):
        raise ValueError("a label is a task id or a JSON object")
    if not missing(spec.get("task_id")):
        return {"task_id": spec["task_id"]}
    if missing(spec.get("seed")):
        raise ValueError(
            "it has no seed or task id (each sample of the prompt would get a different task)"
        )
    return {"seed": spec["seed"], "options": present_options(spec.get("options"))}


def _ended(states: dict[str, Any], keys: tuple[str, ...], *, unscored: bool) -> dict[str, Any]:
    """The last step of an episode the service could not score (NaN: see the module's doc), or
    the one step of an episode whose label names none (0, flagged)."""
    zero = torch.tensor(0.0)
    reward = torch.tensor(math.nan) if unscored else zero
    return {
        "rewards": reward,
        "scores": reward,
        "environment_feedback": "",
        "done": True,
        "sampling_params": states.get("sampling_params"),
        "extra_logs": {
            "valid": zero,
            "bad_label": torch.tensor(float(not unscored)),
            "unscored": torch.tensor(float(unscored)),
            **dict.fromkeys(keys, zero),
        },
    }


class AgentExecutor(MultiTurnAgentExecutor):  # type: ignore[misc]
    """What OpenRLHF loads from ``--train.agent_func_path``: its multi-turn executor, with an
    unscored episode's reward (NaN, summed over its steps) turned into None."""

    def __init__(self) -> None:
        super().__init__(AgentInstance)

    async def execute(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """One sample, as OpenRLHF's executor plays it (see the module's doc for None)."""
        sample: dict[str, Any] = await super().execute(*args, **kwargs)
        if math.isnan(sample["reward"]):
            sample["reward"] = None
        return sample
