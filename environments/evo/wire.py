"""What ``/v1/evo/*`` takes and answers: typed bodies, so the OpenAPI document describes every
reply and a generated client parses them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from environments.evo.admission import Stage
from environments.evo.contract import MAX_SOURCE_CHARS

Status = Literal["pending", "admitted", "rejected", "error"]


class RolloutItem(BaseModel):
    """A solver's response to one task of the submitted environment."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Strict: JSON true is not the integer 1 (pydantic's lax mode would take it as one).
    seed: StrictInt = Field(..., ge=0, le=2**63 - 1)
    difficulty: StrictInt
    response: str = Field(..., max_length=100_000)


class SubmissionRequest(BaseModel):
    """An environment module to admit, who submits it, and optional solver rollouts (L4)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(..., min_length=1, max_length=MAX_SOURCE_CHARS)
    submitter: str = Field("anonymous", min_length=1, max_length=200)
    rollouts: list[RolloutItem] = Field(default_factory=list, max_length=2000)


class SubmissionAccepted(BaseModel):
    """The id to poll at ``GET /v1/evo/submissions/{id}``."""

    id: str
    status: Literal["pending"] = "pending"


class StageReportReply(BaseModel):
    """What one stage checked and found; a stage that did not pass ends the pipeline."""

    stage: Stage
    name: str = Field(description="What the stage checks (execution, contract, review, ...), "
                      "or infrastructure when the sandbox or an endpoint failed.")  # fmt: skip
    passed: bool
    detail: str
    facts: dict[str, Any] = Field(description="The stage's measurements (counts, shares, pass "
                                  "rates, the strongest suspect of the search).")  # fmt: skip


class SubmissionStatus(BaseModel):
    """A submission: its provenance, where its admission stands, and its verdict."""

    model_config = ConfigDict(from_attributes=True)

    id: str
    digest: str = Field(description="The source's SHA-256.")
    submitter: str
    submitted_at: str = Field(description="ISO 8601.")
    status: Status = Field(
        description="pending (queued or being admitted), admitted, rejected (stage and reason "
        "say why), or error (infrastructure failed: no verdict on the code; submit it again)."
    )
    stage: Stage | None = Field(description="The stage that rejected it or failed; null when "
                                "admitted or pending.")  # fmt: skip
    reason: str
    reports: list[StageReportReply] = Field(description="Every stage run, in order.")
    env: str | None = Field(description="The environment it became, evo/<name>@<version>.")


class EvoEnvInfo(BaseModel):
    """An admitted environment (one version of a name), without its source."""

    model_config = ConfigDict(from_attributes=True)

    id: str = Field(description="Its environment id, evo/<name>.")
    name: str
    version: int = Field(description="Its admission version: new code under a name is the next.")
    digest: str = Field(description="The source's SHA-256.")
    description: str
    difficulties: list[int]
    answer_format: str
    pass_rates: dict[str, float] = Field(description="Pass rate per difficulty level, from L4 "
                                         "(empty when admitted uncalibrated).")  # fmt: skip
    submission: str = Field(description="The submission that admitted it.")
    admitted_at: str = Field(description="ISO 8601.")
    retired: bool
