"""OpenRLHF's remote reward protocol: ``POST /openrlhf/{verifier}/get_reward``.

OpenRLHF posts ``{"query": [...], "prompts": [...], "labels": [...]}`` (one sample per request
in current versions, mini-batches in older ones) and reads ``{"rewards", "scores",
"extra_logs"}``. It sends no data source, so the verifier is chosen in the path; verifier
options may be given as query parameters (``?reward=all``). ``query`` is prompt + response, so
the prompt is stripped as a prefix. A label is the reference; for a verifier whose references
are structured (hidden tests, say), a label is that reference as JSON text.

Every answer's ``extra_logs`` has the same keys: the verifier's declared components (0.0 where a
score lacks one), ``valid`` and ``bad_label`` (OpenRLHF merges the samples' logs key by key).
Each sample is handled on its own. A sample whose label cannot be used as a reference (empty,
unparsable, not the verifier's JSON) is a data error that no retry can fix: it gets reward 0
and is flagged with ``extra_logs["bad_label"] = 1``, and the other samples keep their rewards.
OpenRLHF has no way to mask a sample, so a sample the service could not score for a reason of
its own (status ``timeout``, or an ``error`` of the infrastructure) is not answered with a
made-up 0: the request fails with 503, which OpenRLHF retries and finally reports, rather than
training on a fake reward.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ConfigDict, Field, model_validator

from envserver.limits import LimitedRoute
from envserver.problems import Problem, problem_responses
from envserver.service import Service
from envserver.wire import VerifyItem, VerifyRequest, VerifyResult, WireModel, WireReply
from verifiers.score import BAD_REFERENCE, FAILURE_KIND

router = APIRouter(route_class=LimitedRoute)


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

    rewards: list[float]
    scores: list[float]
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
    responses=problem_responses(400, 401, 404, 413, 415, 422, 429, 503, 504),
)
async def get_reward(verifier: str, body: RewardRequest, request: Request) -> RewardResponse:
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
    unscored = [r for r in results if r is not None and r.reward is None and not _bad_label(r)]
    if unscored:
        raise Problem(
            503,
            f"{len(unscored)} of {len(results)} samples could not be scored "
            f"({unscored[0].status}: {unscored[0].detail}); retry",
            kind="reward-unavailable",
            headers={"Retry-After": "1"},
        )
    rewards = [0.0 if r is None or r.reward is None else r.reward for r in results]
    # The same keys for every sample (the verifier's declared components, 0.0 where a score
    # lacks one): OpenRLHF sends one sample per request and merges their logs key by key, so a
    # key some samples lack breaks its batch.
    logs = {
        name: [r.components.get(name, 0.0) if r is not None else 0.0 for r in results]
        for name in check.components
    }
    logs["valid"] = [float(r is not None and r.status == "ok") for r in results]
    logs["bad_label"] = [float(_bad_label(r)) for r in results]
    return RewardResponse(rewards=rewards, scores=rewards, extra_logs=logs)
