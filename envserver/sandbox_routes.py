"""``/v1/sandbox``: run programs, run pass matrices; and SandboxFusion's ``/run_code``."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field, ValidationError

from envserver.limits import LimitedRoute
from envserver.problems import Problem, problem_responses
from envserver.sandbox_fusion import RunCodeRequest, RunCodeResponse, to_response
from envserver.sandbox_host import SandboxHost
from envserver.wire import ProblemKind, WireModel
from sandbox import languages
from sandbox.model import Limits, RunRecord, RunRequest
from sandbox.runner import MatrixRequest, MatrixResult

router = APIRouter(route_class=LimitedRoute)
# A JSON body (400, 413, 415, 422), keys (401), a busy (429) or absent (503) sandbox.
RUN_ERRORS = problem_responses(400, 401, 413, 415, 422, 429, 503)


class LanguageInfo(BaseModel):
    """A language the sandbox knows."""

    name: str
    aliases: list[str]
    compiled: bool
    available: bool


class SandboxInfo(BaseModel):
    """What the sandbox is and offers."""

    isolation: str = Field(..., description="full, container, weak, none or unavailable.")
    workers: int
    alive: int = Field(..., description="Workers running now (lost ones come back by themselves).")
    busy: int
    healthy: bool = Field(..., description="Open and at least one worker running.")
    memory_cap: str = Field(
        ...,
        description="cgroup: a run's processes together; container: the container's; "
        "address-space: per process (processes are then limited to fit the memory maximum).",
    )
    detail: str = ""
    languages: list[LanguageInfo]
    default_limits: Limits
    maximum_limits: Limits = Field(..., description="The most a request may ask for.")


class BatchRunRequest(WireModel):
    """Many programs in one request."""

    items: list[RunRequest] = Field(..., min_length=1)


class BatchRunResponse(BaseModel):
    """Records in request order."""

    results: list[RunRecord]


def _host(request: Request) -> SandboxHost:
    host: SandboxHost = request.app.state.sandbox
    return host


@router.get("/v1/sandbox", tags=["sandbox"], responses=problem_responses(401))
async def sandbox_info(request: Request) -> SandboxInfo:
    """The isolation level in force, the workers and the languages."""
    host = _host(request)
    health = host.health()
    return SandboxInfo(
        isolation=host.isolation,
        workers=health.size,
        alive=health.alive,
        busy=health.busy,
        healthy=health.healthy,
        memory_cap=host.sandbox.pool.memory_cap if host.sandbox is not None else "",
        detail=host.reason,
        languages=[
            LanguageInfo(
                name=lang.name,
                aliases=list(lang.aliases),
                compiled=lang.compiled,
                available=lang.available(),
            )
            for lang in languages.LANGUAGES
        ],
        default_limits=host.sandbox.fit(Limits()) if host.sandbox is not None else Limits(),
        maximum_limits=host.maxima,
    )


@router.post("/v1/sandbox/run", tags=["sandbox"], responses=RUN_ERRORS)
async def sandbox_run(body: RunRequest, request: Request) -> RunRecord:
    """Run one program under limits; the record says how it ended (never judged)."""
    return await _host(request).call(lambda sandbox: sandbox.run(body))


@router.post("/v1/sandbox/run/batch", tags=["sandbox"], responses=RUN_ERRORS)
async def sandbox_run_batch(body: BatchRunRequest, request: Request) -> BatchRunResponse:
    """Run many programs concurrently; records in request order."""
    request.app.state.service.check_batch(len(body.items))
    records = await _host(request).call(lambda sandbox: sandbox.run_many(body.items))
    return BatchRunResponse(results=records)


@router.post("/v1/sandbox/matrix", tags=["sandbox"], responses=RUN_ERRORS)
async def sandbox_matrix(body: MatrixRequest, request: Request) -> MatrixResult:
    """N programs x M tests: the pass matrix, each program's tests in one warm process."""
    return await _host(request).call(lambda sandbox: sandbox.matrix(body))


@router.post("/run_code", tags=["compatibility"], responses=RUN_ERRORS)
async def run_code(body: RunCodeRequest, request: Request) -> RunCodeResponse:
    """SandboxFusion's ``run_code``: same request and response fields."""
    try:
        run = body.to_run(_host(request).maxima.memory_mb)
    except ValidationError as exc:
        errors = [
            {"loc": ["body", *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in exc.errors()
        ]
        first = errors[0]
        raise Problem(
            422,
            f"{'.'.join(map(str, first['loc'][1:]))}: {first['msg']}",
            kind=ProblemKind.VALIDATION_ERROR,
            extra={"errors": errors},
        ) from None
    return to_response(await _host(request).call(lambda sandbox: sandbox.run(run)))
