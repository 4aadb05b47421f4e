"""OpenRLHF's remote reward protocol: ``POST /openrlhf/{verifier}/get_reward``.

OpenRLHF posts ``{"query": [...], "prompts": [...], "labels": [...]}`` (one sample per request
in current versions, mini-batches in older ones) and reads ``{"rewards", "scores",
"extra_logs"}``. It sends no data source, so the verifier is chosen in the path; verifier
options may be given as query parameters (``?reward=all``). ``query`` is prompt + response, so
the prompt is stripped as a prefix. A label is the reference; for a verifier whose references
are structured (hidden tests, say), a label is that reference as JSON text.

OpenRLHF has no way to mask a sample, so a sample the service could not score (status
``timeout`` or ``error``) is not answered with a made-up 0: the request fails with 503, which
OpenRLHF retries and finally reports, rather than training on a fake reward.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ConfigDict, Field, model_validator

from envserver.limits import LimitedRoute
from envserver.problems import Problem
from envserver.registry import UnknownVerifier
from envserver.service import Service
from envserver.wire import VerifyItem, VerifyRequest, WireModel, WireReply

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
    if structured and isinstance(label, str):
        try:
            return json.loads(label)
        except ValueError:
            raise Problem(422, "a label for this verifier must be its reference as JSON") from None
    return label


@router.post("/openrlhf/{verifier}/get_reward", tags=["compatibility"])
async def get_reward(verifier: str, body: RewardRequest, request: Request) -> RewardResponse:
    """Score OpenRLHF samples with ``verifier``; query parameters are its options."""
    service: Service = request.app.state.service
    try:
        check = service.registry.verifier(verifier)
    except UnknownVerifier as exc:
        raise Problem(404, str(exc), kind="unknown-verifier") from None
    structured = check.example is not None and not isinstance(check.example[1], str)
    prompts: list[str | None] = [*body.prompts] or [None] * len(body.query)
    items = [
        VerifyItem(response=_response(query, prompt), reference=_reference(label, structured))
        for query, prompt, label in zip(body.query, prompts, body.labels, strict=True)
    ]
    scored = await service.verify(
        VerifyRequest(verifier=verifier, options=dict(request.query_params), items=items)
    )
    unscored = [r for r in scored.results if r.reward is None]
    if unscored:
        raise Problem(
            503,
            f"{len(unscored)} of {len(items)} samples could not be scored "
            f"({unscored[0].status}: {unscored[0].detail}); retry",
            kind="reward-unavailable",
            headers={"Retry-After": "1"},
        )
    rewards = [float(r.reward or 0.0) for r in scored.results]
    names = sorted({name for r in scored.results for name in r.components})
    logs = {name: [r.components.get(name, 0.0) for r in scored.results] for name in names}
    logs["valid"] = [float(r.status == "ok") for r in scored.results]
    return RewardResponse(rewards=rewards, scores=rewards, extra_logs=logs)
