"""OpenRLHF's remote reward protocol: ``POST /openrlhf/{verifier}/get_reward``.

OpenRLHF posts ``{"query": [...], "prompts": [...], "labels": [...]}`` (one sample per request
in current versions, mini-batches in older ones) and reads ``{"rewards", "scores",
"extra_logs"}``. It sends no data source, so the verifier is chosen in the path; verifier
options may be given as query parameters (``?reward=all``). ``query`` is prompt + response, so
the prompt is stripped as a prefix. A label is the reference; for a verifier whose references
are structured (hidden tests, say), a label is that reference as JSON text.

Every answer's ``extra_logs`` has the same keys: the verifier's declared components and metrics
(0.0 where a score lacks one), ``valid``, ``bad_label`` and ``unscored`` (OpenRLHF merges the
samples' logs key by key). Each sample is handled on its own. A sample whose label cannot be
used as a reference (empty, unparsable, not the verifier's JSON) is a data error that no retry
can fix: it gets reward 0 and is flagged with ``extra_logs["bad_label"] = 1``, and the other
samples keep their rewards.

A sample the service could not score for a reason of its own (status ``timeout``, or an
``error`` of the infrastructure) gets no made-up 0. What OpenRLHF 0.11 can skip is a prompt's
whole group of samples, and only with dynamic filtering (``--algo.dynamic_filtering_enable``,
``SamplesGenerator._generate_vllm``): a group whose mean score is not inside
``--algo.dynamic_filtering_range`` is dropped and another prompt drawn in its place. So the
sample's score is ``NaN`` (outside every range; JSON has no NaN, but OpenRLHF reads the answer
with Python's ``json``, which does) and the answer's ``rewards`` is ``null``: with dynamic
filtering its group is dropped; without it, OpenRLHF has nothing to skip with and stops at that
batch (``Experience.concat_experiences`` cannot merge a missing reward) instead of training on
a fake reward. (A 503, which OpenRLHF retried five times and then also stopped at, cost a
minute and dropped nothing.) Overload (429) and a whole request's deadline (504) stay HTTP
errors, which OpenRLHF retries.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ConfigDict, Field, model_validator

from envserver.limits import LimitedRoute
from envserver.problems import problem_responses
from envserver.routes import JSONReply
from envserver.service import Service
from envserver.wire import VerifyItem, VerifyRequest, VerifyResult, WireModel, WireReply
from verifiers.score import BAD_REFERENCE, FAILURE_KIND

router = APIRouter(route_class=LimitedRoute)
NAN = float("nan")
"""The score of a sample the service could not score (see the module's doc)."""


class RewardRequest(WireModel):
    """OpenRLHF's body (fields it may add later are ignored)."""

    model_config = ConfigDict(extra="ignore")

    query: list[str] = Field(..., min_length=1, description="Prompt + response, decoded.")
    prompts: list[str] = Field(default_factory=list, description="The prompts, as sent.")
    labels: list[Any] = Field(default_factory=list, description="References (--label_key).")

    @model_validator(mode="after")
    def _aligned(self) -> RewardRequest:
        if len(self.labels) != len(self.query):
            raise ValueError(f"{len(self.query)} queries but {len(self.labels)} labels")
        if self.prompts and len(self.prompts) != len(self.query):
            raise ValueError(f"{len(self.query)} queries but {len(self.prompts)} prompts")
        return self


class RewardResponse(WireReply):
    """``rewards`` drive the advantages, ``scores`` the filtering and logs."""

    # NaN is written as Python's json reads it (see the module's doc).
    model_config = ConfigDict(ser_json_inf_nan="constants")

    rewards: list[float] | None = Field(
        description="One per sample; null when a sample could not be scored (see scores)."
    )
    scores: list[float] = Field(
        description="One per sample; NaN for a sample the service could not score, which "
        "OpenRLHF's dynamic filtering drops with its prompt's group."
    )
    extra_logs: dict[str, list[float]]


def _response(query: str, prompt: str | None) -> str:
    return query[len(prompt) :] if prompt and query.startswith(prompt) else query


def _reference(label: Any, structured: bool) -> Any:
    """The reference a label stands for; None for a label that is none (empty, or not JSON where
    the verifier's references are structured)."""
    if structured and isinstance(label, str):
        try:
            return json.loads(label)
        except ValueError:
            return None
    return label if label not in (None, "") else None


def _bad_label(result: VerifyResult | None) -> bool:
    return result is None or result.extra.get(FAILURE_KIND) == BAD_REFERENCE


@router.post(
    "/openrlhf/{verifier}/get_reward",
    tags=["compatibility"],
    response_model=RewardResponse,
    responses=problem_responses(400, 401, 404, 413, 415, 422, 429, 503, 504),
)
async def get_reward(verifier: str, body: RewardRequest, request: Request) -> JSONReply:
    """Score OpenRLHF samples with ``verifier``; query parameters are its options."""
    service: Service = request.app.state.service
    check = service.verifier(verifier)
    structured = check.example is not None and not isinstance(check.example[1], str)
    prompts: list[str | None] = [*body.prompts] or [None] * len(body.query)
    items = {
        index: VerifyItem(response=_response(query, prompt), reference=reference)
        for index, (query, prompt, label) in enumerate(
            zip(body.query, prompts, body.labels, strict=True)
        )
        if (reference := _reference(label, structured)) is not None
    }
    results: list[VerifyResult | None] = [None] * len(body.query)
    if items:
        scored = await service.verify(
            VerifyRequest(
                verifier=verifier, options=dict(request.query_params), items=list(items.values())
            )
        )
        for index, result in zip(items, scored.results, strict=True):
            results[index] = result
    unscored = [r is not None and r.reward is None and not _bad_label(r) for r in results]
    scores = [
        NAN if lost else 0.0 if r is None or r.reward is None else r.reward
        for r, lost in zip(results, unscored, strict=True)
    ]
    # The same keys for every sample (the verifier's declared components and metrics, 0.0 where
    # a score lacks one): OpenRLHF sends one sample per request and merges their logs key by
    # key, so a key some samples lack breaks its batch.
    recorded = [{**r.metrics, **r.components} if r is not None else {} for r in results]
    logs = {
        name: [parts.get(name, 0.0) for parts in recorded]
        for name in (*check.components, *check.metrics)
    }
    logs["valid"] = [float(r is not None and r.status == "ok") for r in results]
    logs["bad_label"] = [float(_bad_label(r)) for r in results]
    logs["unscored"] = [float(lost) for lost in unscored]
    rewards = None if any(unscored) else scores
    return JSONReply(RewardResponse(rewards=rewards, scores=scores, extra_logs=logs))
