"""The family's HTTP routes: submissions (queued in the store, admitted by the admission queue's
workers: ``jobs``), the admitted pool, retire and restore, on the resources the core opened for
this process (``EvoResources``). Replies are typed (``wire``); errors leave as problem documents
through the server's handlers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException

from environments.evo.calibration import Rollout
from environments.evo.resources import EvoResources
from environments.evo.wire import (
    EvoEnvInfo,
    SubmissionAccepted,
    SubmissionRequest,
    SubmissionStatus,
)
from environments.extension import answers, injected

router = APIRouter(prefix="/v1/evo", tags=["evo"])
# Every error each route answers, as the core routes declare theirs: a JSON body malformed
# (400), too large (413), not JSON (415) or not the schema (422); keys (401); unknown ids (404).
_BODY = (400, 401, 413, 415, 422)

Evo = Annotated[EvoResources, Depends(injected(EvoResources))]


@router.post("/submissions", status_code=202, responses=answers(*_BODY, 429))
def submit(request: SubmissionRequest, evo: Evo) -> SubmissionAccepted:
    """Queue the submission's admission (L1-L5, all in the sandbox) and answer at once: poll
    ``GET /v1/evo/submissions/{id}``. 429 with Retry-After when ``ENVSERVER_EVO_MAX_QUEUED``
    submissions are queued or being admitted already, on all replicas of the store."""
    rollouts = [Rollout(r.seed, r.difficulty, r.response) for r in request.rollouts]
    # A full queue raises Overloaded: the app answers 429 with its Retry-After.
    submission = evo.admissions.submit(request.source, request.submitter, rollouts)
    return SubmissionAccepted(id=submission)


@router.get("/submissions/{submission}", responses=answers(401, 404))
def submission_status(submission: str, evo: Evo) -> SubmissionStatus:
    """Status (pending, admitted, rejected, error), the rejecting stage and reason, the per-stage
    reports and the environment it became."""
    try:
        found = evo.store.submission(submission)
    except KeyError:
        raise HTTPException(404, f"no submission {submission!r}") from None
    return SubmissionStatus.model_validate(found)


@router.get("/envs", responses=answers(401, 422))
def admitted_envs(evo: Evo, include_retired: bool = False) -> list[EvoEnvInfo]:
    """The admitted environments (with ``include_retired``, every version ever admitted)."""
    return [
        EvoEnvInfo.model_validate(env) for env in evo.store.envs(include_retired=include_retired)
    ]


def _set_retired(evo: EvoResources, name: str, retired: bool) -> EvoEnvInfo:
    try:
        env = evo.store.set_retired(name, retired)
    except KeyError:
        raise HTTPException(404, f"no admitted environment named {name!r}") from None
    return EvoEnvInfo.model_validate(env)


@router.post("/envs/{name}/retire", responses=answers(401, 404))
def retire(name: str, evo: Evo) -> EvoEnvInfo:
    """Stop serving ``evo/<name>``: its task ids answer 410 until it is restored."""
    return _set_retired(evo, name, True)


@router.post("/envs/{name}/restore", responses=answers(401, 404))
def restore(name: str, evo: Evo) -> EvoEnvInfo:
    """Serve the newest version of ``evo/<name>`` again."""
    return _set_retired(evo, name, False)
