"""verl: ``compute_score`` for its reward managers, backed by the service.

Point verl at this file (it loads it by path) and pass the service through ``reward_kwargs``:

    custom_reward_function.path=clients/adapters/verl.py
    custom_reward_function.name=compute_score_batch   # with reward_model.reward_manager=batch
    +custom_reward_function.reward_kwargs.url=http://127.0.0.1:8000
    +custom_reward_function.reward_kwargs.verifier=math  # else chosen from data_source

``compute_score`` is the per-sample form (the ``naive`` manager); ``compute_score_batch`` scores
a whole batch in one request (the ``batch`` manager). Scores are dicts: ``score`` plus the
verifier's components, which verl logs. A row with ``extra_info["task_id"]`` is scored by task
id, so its reference stays on the server. verl cannot mask a sample, so one the service could
not score raises ``RewardUnavailable`` instead of returning a made-up 0. For code rewards verl
can also use the service's SandboxFusion route: ``reward_model.sandbox_fusion.url=<url>/run_code``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clients.http import EnvServerClient

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
    **_: Any,
) -> list[dict[str, float]]:
    """One ``{"score", <components>}`` dict per sample, in order, from one request per
    verifier."""
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
    scores: list[dict[str, float]] = [{} for _ in items]
    with EnvServerClient(url, api_key=api_key) as client:
        for name, indices in groups.items():
            batch = [items[i] for i in indices]
            results = client.verify(batch, verifier=name, options=options).results
            for index, result in zip(indices, results, strict=True):
                if result.reward is None:
                    raise RewardUnavailable(
                        f"sample {index}: {result.status}: {result.detail or 'no detail'}"
                    )
                scores[index] = {"score": result.reward, **result.components}
    return scores


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """The per-sample form, for verl's ``naive`` reward manager."""
    return compute_score_batch(
        [data_source], [solution_str], [ground_truth], [extra_info], **kwargs
    )[0]
