"""verl: ``compute_score`` for its reward managers, backed by the service.

Point verl at this file (it loads it by path) and pass the service through ``reward_kwargs``:

    custom_reward_function.path=clients/adapters/verl.py
    custom_reward_function.name=compute_score_batch   # with reward_model.reward_manager=batch
    +custom_reward_function.reward_kwargs.url=http://127.0.0.1:8000
    +custom_reward_function.reward_kwargs.verifier=math  # else chosen from data_source

``compute_score`` is the per-sample form (verl's ``naive`` manager and the reward loop, which
call it as ``compute_score(data_source=, solution_str=, ground_truth=, extra_info=,
**reward_kwargs)``); ``compute_score_batch`` scores a whole batch in one request (the ``batch``
manager: ``compute_score(data_sources=, solution_strs=, ground_truths=, extra_infos=,
**reward_kwargs)`` with numpy object arrays). A row with ``extra_info["task_id"]`` is scored by
task id, so its reference stays on the server.

Every result is a dict with the same keys, because verl stacks the dicts of a batch into columns
(``reward_extra_info``; the reward loop takes the first sample's keys for all): ``score``,
``bad_reference`` and each component the verifier declares in the catalogue. A component a
score lacks (an answer with no final answer carries none) is ``NEUTRAL`` = 0.0. With
``verifier`` given, the components are that verifier's; without it (chosen per data source) they
are every verifier's the server offers, so mixed data sources still line up; ``components``
(a list of names) sets them explicitly.

verl cannot mask a sample. A sample whose reference is unusable (an empty or unparsable ground
truth: a data error no retry can fix) scores 0 with ``bad_reference`` = 1.0. One the service
could not score for a reason of its own (timeout, infrastructure) raises ``RewardUnavailable``
instead of returning a made-up 0. For code rewards verl can also use the service's SandboxFusion
route: ``reward_model.sandbox_fusion.url=<url>/run_code``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from clients.http import EnvServerClient
from envserver.wire import Catalogue, VerifyResult

NEUTRAL = 0.0
"""The value of a declared component a score does not carry."""
BAD_REFERENCE = "bad_reference"
"""The key (1.0 or 0.0) that flags a sample scored 0 because its ground truth is unusable; also
the ``failure_kind`` the service puts in such a result's ``extra``."""

# verl's own data_source names for the datasets our verifiers cover.
DATA_SOURCES = {
    "openai/gsm8k": "math",
    "lighteval/MATH": "math",
    "DigitalLearningGmbH/MATH-lighteval": "math",
    "math_dapo": "math",
    "aime": "math",
    "codecontests": "code",
    "apps": "code",
    "taco": "code",
    "livecodebench": "code",
}


class RewardUnavailable(RuntimeError):
    """The service could not score a sample (its check timed out or failed)."""


@lru_cache(maxsize=8)
def _catalogue(url: str | None, api_key: str | None) -> Catalogue:
    # Once per process and server: the per-sample form must not ask for every sample.
    with EnvServerClient(url, api_key=api_key) as client:
        return client.envs()


def _keys(
    catalogue: Catalogue, verifier: str | None, components: Sequence[str] | None
) -> list[str]:
    """The result keys besides ``score`` and ``bad_reference``, in a stable order."""
    if components is not None:
        return list(components)
    declared = {v.name: v.components for v in catalogue.verifiers}
    names = [verifier] if verifier else sorted(declared)
    return list(dict.fromkeys(c for name in names for c in declared.get(name, ())))


def _row(result: VerifyResult, index: int, keys: list[str]) -> dict[str, float]:
    if result.reward is None:
        if result.extra.get("failure_kind") != BAD_REFERENCE:
            raise RewardUnavailable(
                f"sample {index}: {result.status}: {result.detail or 'no detail'}"
            )
        return {"score": 0.0, BAD_REFERENCE: 1.0, **dict.fromkeys(keys, NEUTRAL)}
    parts = {key: float(result.components.get(key, NEUTRAL)) for key in keys}
    return {"score": result.reward, BAD_REFERENCE: 0.0, **parts}


def _plain(value: Any) -> Any:
    """numpy object arrays and scalars (what verl's batch manager passes) as plain Python."""
    return value.tolist() if hasattr(value, "tolist") else value


def _verifier(data_source: str, verifier: str | None) -> str:
    if verifier:
        return verifier
    for prefix, name in DATA_SOURCES.items():
        if data_source == prefix or data_source.startswith(prefix):
            return name
    return data_source  # a data source named after a verifier ("math", "code", "opt")


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
    *,
    url: str | None = None,
    verifier: str | None = None,
    api_key: str | None = None,
    options: Mapping[str, Any] | None = None,
    components: Sequence[str] | None = None,
    **_: Any,
) -> list[dict[str, float]]:
    """One ``{"score", "bad_reference", <components>}`` dict per sample, in order, every dict
    with the same keys, from one request per verifier. Raises ``RewardUnavailable`` for a
    sample the service could not score."""
    sources = [str(s) for s in _plain(data_sources)]
    infos = list(_plain(extra_infos)) if extra_infos is not None else [None] * len(sources)
    truths = list(_plain(ground_truths))
    groups: dict[str | None, list[int]] = {}
    items: list[dict[str, Any]] = []
    for index, (source, text, truth, info) in enumerate(
        zip(sources, solution_strs, truths, infos, strict=True)
    ):
        task_id = (info or {}).get("task_id")
        if task_id:
            items.append({"response": text, "task_id": task_id})
            groups.setdefault(None, []).append(index)
        else:
            items.append({"response": text, "reference": truth})
            groups.setdefault(_verifier(source, verifier), []).append(index)
    keys = _keys(_catalogue(url, api_key), verifier, components)
    scores: list[dict[str, float]] = [{} for _ in items]
    with EnvServerClient(url, api_key=api_key) as client:
        for name, indices in groups.items():
            batch = [items[i] for i in indices]
            results = client.verify(batch, verifier=name, options=options).results
            for index, result in zip(indices, results, strict=True):
                scores[index] = _row(result, index, keys)
    return scores


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """The per-sample form (verl's ``naive`` manager, the reward loop): the same dict, with the
    same keys, as ``compute_score_batch`` gives for the sample."""
    return compute_score_batch(
        [data_source], [solution_str], [ground_truth], [extra_info], **kwargs
    )[0]
