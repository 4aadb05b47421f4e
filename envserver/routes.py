"""The v1 HTTP routes. Thin: the logic lives in ``envserver.service``."""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel

import envserver
from envserver import calls
from envserver.calls import ENV_PATH, VERIFY_PATH
from envserver.catalogue import env_info, served_now
from envserver.curriculum import MAX_REPORT_TASKS, Curriculum
from envserver.limits import LimitedRoute
from envserver.problems import Problem, problem_responses
from envserver.service import Service
from envserver.wire import (
    MAX_RUN_CHARS,
    RUN_PATTERN,
    BatchResetRequest,
    BatchResetResponse,
    BatchStepRequest,
    BatchStepResponse,
    Catalogue,
    CurriculumReport,
    CurriculumRequest,
    CurriculumSample,
    EnvInfo,
    ExpandRequest,
    ExpandResponse,
    Health,
    ProblemKind,
    QueueHealth,
    ResetRequest,
    ResetResponse,
    StepRequest,
    StepResponse,
    VerifyRequest,
    VerifyResponse,
)

router = APIRouter(route_class=LimitedRoute)

# What each route can answer besides 200 (every one: 401 when API keys are configured).
# A JSON body: malformed (400), too large (413), not JSON (415), not the schema (422).
_BODY = (400, 401, 413, 415, 422)
# Work on the pool: busy (429), past the deadline (504), not served here (503).
_POOL = (404, 410, 429, 503, 504)
RESET_ERRORS = problem_responses(*_BODY, *_POOL)
STEP_ERRORS = problem_responses(*_BODY, 403, 409, *_POOL)
# A batch answers a finished episode in its item (``problem``), never with 409.
STEP_BATCH_ERRORS = problem_responses(*_BODY, 403, *_POOL)
VERIFY_ERRORS = problem_responses(*_BODY, *_POOL)


class JSONReply(Response):
    """A wire model serialised once by pydantic-core; the route's ``response_model`` documents it.

    Returning the model itself would make FastAPI validate it again before serialising, which
    is a measurable share of the server's CPU per scored item.
    """

    media_type = "application/json"

    def __init__(self, model: BaseModel, status_code: int = 200) -> None:
        super().__init__(model.model_dump_json(), status_code=status_code)


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


@router.get("/v1/envs", tags=["catalogue"], responses=problem_responses(401))
def list_envs(request: Request) -> Catalogue:
    """Every environment and verifier with its options schema, and the disabled families."""
    return served_now(request.app.state.catalogue, _service(request).registry)


@router.post(
    ENV_PATH + "/reset/batch",
    tags=["episodes"],
    response_model=BatchResetResponse,
    responses=RESET_ERRORS,
)
async def reset_batch(env_id: str, body: BatchResetRequest, request: Request) -> JSONReply:
    """Reset many episodes; results in request order, each with its own status."""
    return JSONReply(await calls.reset_batch(_service(request), env_id, body))


@router.post(
    ENV_PATH + "/step/batch",
    tags=["episodes"],
    response_model=BatchStepResponse,
    responses=STEP_BATCH_ERRORS,
)
async def step_batch(env_id: str, body: BatchStepRequest, request: Request) -> JSONReply:
    """Step many episodes; results in request order, each with its own status. An item whose
    episode has ended, or whose action the environment refuses, has status error and its
    ``problem`` (409 ``episode-finished``, 400 ``bad-input``); the other items are answered."""
    return JSONReply(await calls.step_batch(_service(request), env_id, body))


@router.post(
    ENV_PATH + "/reset", tags=["episodes"], response_model=ResetResponse, responses=RESET_ERRORS
)
async def reset(env_id: str, body: ResetRequest, request: Request) -> JSONReply:
    """Start an episode by seed and options, or by task id. The state token carries it on."""
    return JSONReply(await calls.reset(_service(request), env_id, body))


@router.post(
    ENV_PATH + "/step", tags=["episodes"], response_model=StepResponse, responses=STEP_ERRORS
)
async def step(env_id: str, body: StepRequest, request: Request) -> JSONReply:
    """Apply an action to the episode in the state token."""
    return JSONReply(await calls.step(_service(request), env_id, body))


@router.post(
    ENV_PATH + "/expand", tags=["episodes"], response_model=ExpandResponse, responses=STEP_ERRORS
)
async def expand(env_id: str, body: ExpandRequest, request: Request) -> JSONReply:
    """Tree search: apply each action to the state independently and return every resulting
    branch with its own state token (AND/OR search such as proof search)."""
    return JSONReply(await calls.expand(_service(request), env_id, body))


@router.get(ENV_PATH, tags=["catalogue"], responses=problem_responses(401, 404, 405, 410, 503))
async def get_env(env_id: str, request: Request) -> EnvInfo:
    """One environment's spec."""
    service = _service(request)
    # The path converter lets "GET .../<env>/reset" reach here; it is a wrong method, not an env.
    for action in ("/reset", "/step", "/reset/batch", "/step/batch", "/expand"):
        if env_id.endswith(action) and service.registry.serves(env_id.removesuffix(action)):
            raise Problem(
                405,
                f"{action.lstrip('/')} takes POST",
                kind=ProblemKind.METHOD_NOT_ALLOWED,
                headers={"Allow": "POST"},
            )
    return env_info(service.env(env_id), service.registry)


@router.post(
    VERIFY_PATH, tags=["verification"], response_model=VerifyResponse, responses=VERIFY_ERRORS
)
async def verify(body: VerifyRequest, request: Request) -> JSONReply:
    """Score a batch of responses against references or task ids."""
    return JSONReply(await calls.verify(_service(request), "", body))


@router.post(
    "/v1/curriculum/sample",
    tags=["curriculum"],
    response_model=CurriculumSample,
    responses=problem_responses(*_BODY, 404, 410, 503),
)
async def curriculum_sample(body: CurriculumRequest, request: Request) -> JSONReply:
    """Draw task ids of a single-turn environment for a run by the pass rates measured for it:
    tasks near the target rate, unseen tasks at the exploration rate and where too few are near
    it (the rule: ``envserver.curriculum``). Needs statistics on the server (503 otherwise)."""
    return JSONReply(await Curriculum(_service(request)).sample(body))


@router.get(
    "/v1/curriculum/{run}",
    tags=["curriculum"],
    response_model=CurriculumReport,
    responses=problem_responses(401, 404, 410, 422, 503),
)
async def curriculum_report(
    run: Annotated[str, Path(max_length=MAX_RUN_CHARS, pattern=RUN_PATTERN)],
    request: Request,
    env: Annotated[str | None, Query(max_length=1024, description="One environment's.")] = None,
    limit: Annotated[
        int, Query(ge=1, le=MAX_REPORT_TASKS, description="Most attempted tasks listed.")
    ] = 1000,
) -> JSONReply:
    """A run's estimated pass rate per task (most attempted first) and a histogram of them."""
    return JSONReply(await Curriculum(_service(request)).report(run, env, limit))


async def _served(request: Request) -> int:
    """How many environments ``GET /v1/envs`` lists now: the families' dynamic ones included
    (read from their stores, so off the event loop)."""
    catalogue, registry = request.app.state.catalogue, _service(request).registry
    return len((await run_in_threadpool(served_now, catalogue, registry)).envs)


@router.get("/healthz", tags=["operations"], responses={503: {"model": Health}})
async def healthz(request: Request, response: Response) -> Health:
    """Liveness: the process answers, its pool workers start (or are starting), and its
    sandbox (if it started) has a worker alive. 503 once pool workers keep failing to start or
    no sandbox worker could be replaced: restart the process. (A sandbox that never started is
    a configuration: /readyz answers 503 with the reason, and this stays 200 with ``degraded``
    true and the reason in ``detail``.) While lost pool workers (or the pool's fork server)
    are replaced it stays 200, since the process heals by itself, with ``degraded`` true and
    what is missing in ``detail``."""
    service = _service(request)
    executor = service.executor
    host = request.app.state.sandbox
    sandbox = host.health()
    problems = []
    if not executor.healthy:
        problems.append("pool workers keep failing to start")
    if host.sandbox is not None and not sandbox.healthy:
        problems.append("no sandbox worker is alive and none could be started")
    if problems:
        response.status_code = 503
    degraded = "; ".join(filter(None, [executor.degraded(), host.problem]))
    return Health(
        status="unavailable" if problems else "ok",
        version=envserver.__version__,
        detail="; ".join(problems or ([degraded] if degraded else [])),
        pool_workers=executor.live_workers(),
        pool_ready=executor.ready_workers(),
        degraded=bool(degraded),
        in_flight=executor.in_flight,
        coalesced=executor.coalesced,
        # Liveness reads no store: a store that is down must not get the process restarted,
        # and a probe every second must stay cheap. /readyz counts the families' dynamic ones.
        envs=len(request.app.state.catalogue.envs),
        disabled=request.app.state.catalogue.disabled,
        sandbox=host.isolation,
        sandbox_workers=sandbox.alive,
        process=os.getpid(),
    )


@router.get("/readyz", tags=["operations"], responses={503: {"model": Health}})
async def readyz(request: Request, response: Response) -> Health:
    """Readiness: the worker pool has a worker taking items, at least one environment is
    loaded, and the sandbox started (unless ``ENVSERVER_SANDBOX_BACKEND=none``). 503 while no
    pool worker is ready (all lost at once, e.g. with the pool's fork server, and being
    replaced): a balancer sends requests elsewhere meanwhile; ``degraded`` while some are. 503
    for good when the configured sandbox did not start: ``detail`` says why and what to do."""
    service = _service(request)
    executor = service.executor
    host = request.app.state.sandbox
    problem = (
        executor.problem()
        or ("" if executor.ready_workers() else "no pool worker is ready; they are being replaced")
        or host.problem
    )
    ready = not problem and bool(service.registry.envs)
    if not ready:
        response.status_code = 503
    degraded = executor.degraded()
    sized = request.app.state.sized
    return Health(
        status="ok" if ready else "unavailable",
        version=envserver.__version__,
        detail=(problem or "no environment loaded") if not ready else degraded,
        server_processes=sized.server_processes,
        pool_workers_total=sized.pool_workers,
        sizing=request.app.state.sizing,
        pool_workers=executor.workers,
        pool_ready=executor.ready_workers(),
        degraded=bool(degraded),
        in_flight=executor.in_flight,
        envs=await _served(request),
        disabled=request.app.state.catalogue.disabled,
        sandbox=host.isolation,
        sandbox_workers=host.health().alive,
        process=os.getpid(),
        queues=await run_in_threadpool(_queues, request),
    )


def _queues(request: Request) -> list[QueueHealth]:
    """The families' job queues now (read from their stores: off the event loop)."""
    return [QueueHealth.model_validate(asdict(queue.state())) for queue in request.app.state.queues]


@router.get(
    "/metrics",
    tags=["operations"],
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}},
        **problem_responses(401),
    },
)
async def metrics(request: Request) -> Response:
    """Prometheus metrics."""
    service = _service(request)
    service.metrics.in_flight.set(service.executor.in_flight)
    # Off the event loop: collectors read when scraped, and a family's job queue reads its store.
    exposition = await run_in_threadpool(generate_latest, service.metrics.registry)
    return Response(exposition, media_type=CONTENT_TYPE_LATEST)
