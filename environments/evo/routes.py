"""The family's HTTP routes: submissions (admitted in the background), the admitted pool,
retire and restore, on the store the core opened for this process (``EvoResources``). Errors
leave as problem documents through the server's handlers."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Depends, HTTPException
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from environments.evo.admission import admit
from environments.evo.calibration import Rollout
from environments.evo.contract import MAX_SOURCE_CHARS, code_digest
from environments.evo.resources import EvoResources
from environments.extension import answers, injected

router = APIRouter(prefix="/v1/evo", tags=["evo"])
# Every error each route answers, as the core routes declare theirs: a JSON body malformed
# (400), too large (413), not JSON (415) or not the schema (422); keys (401); unknown ids (404).
_BODY = (400, 401, 413, 415, 422)


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
    status: str


Evo = Annotated[EvoResources, Depends(injected(EvoResources))]


def _admit(evo: EvoResources, submission: str, request: SubmissionRequest) -> None:
    rollouts = [Rollout(r.seed, r.difficulty, r.response) for r in request.rollouts]
    admission = admit(request.source, evo.store.pool(), rollouts, settings=evo.settings)
    evo.store.record(submission, admission)


@router.post("/submissions", status_code=202, responses=answers(*_BODY))
def submit(request: SubmissionRequest, background: BackgroundTasks, evo: Evo) -> SubmissionAccepted:
    """Record the submission and admit it in the background (L1-L5, all in the sandbox)."""
    submission = evo.store.submit(request.source, code_digest(request.source), request.submitter)
    background.add_task(_admit, evo, submission, request)
    return SubmissionAccepted(id=submission, status="pending")


@router.get("/submissions/{submission}", responses=answers(401, 404))
def submission_status(submission: str, evo: Evo) -> dict[str, Any]:
    """Status (pending, admitted, rejected, error), the rejecting stage and reason, the per-stage
    reports and the environment it became."""
    try:
        found = evo.store.submission(submission)
    except KeyError:
        raise HTTPException(404, f"no submission {submission!r}") from None
    return asdict(found)


@router.get("/envs", responses=answers(401, 422))
def admitted_envs(evo: Evo, include_retired: bool = False) -> list[dict[str, Any]]:
    """The admitted environments (with ``include_retired``, every version ever admitted)."""
    return [env.public() for env in evo.store.envs(include_retired=include_retired)]


def _set_retired(evo: EvoResources, name: str, retired: bool) -> dict[str, Any]:
    try:
        env = evo.store.set_retired(name, retired)
    except KeyError:
        raise HTTPException(404, f"no admitted environment named {name!r}") from None
    return env.public()


@router.post("/envs/{name}/retire", responses=answers(401, 404))
def retire(name: str, evo: Evo) -> dict[str, Any]:
    """Stop serving ``evo/<name>``: its task ids answer 410 until it is restored."""
    return _set_retired(evo, name, True)


@router.post("/envs/{name}/restore", responses=answers(401, 404))
def restore(name: str, evo: Evo) -> dict[str, Any]:
    """Serve the newest version of ``evo/<name>`` again."""
    return _set_retired(evo, name, False)
