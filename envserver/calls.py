"""The POST calls a trainer makes on every item (reset, step, their batches, expand, verify),
routed by their path alone and run on the service: one core under HTTP's direct path
(``envserver.direct``) and ``/v1/stream``.

These routes are declared to FastAPI too (``envserver.routes``: their OpenAPI document, and what
answers a body the direct path leaves to FastAPI), with endpoints that run these same functions.
Routing them here costs a few string comparisons; FastAPI's router and dependency solving cost
a step 90-110 µs of the event loop's CPU (``benchmarks/hot_path.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from envserver.service import Service
from envserver.wire import (
    BatchResetRequest,
    BatchResetResponse,
    BatchStepRequest,
    BatchStepResponse,
    ExpandRequest,
    ExpandResponse,
    ResetRequest,
    ResetResponse,
    StepRequest,
    StepResponse,
    VerifyRequest,
    VerifyResponse,
)

ENV_PATH = "/v1/envs/{env_id:path}"
VERIFY_PATH = "/v1/verify"
_ENV_PREFIX = "/v1/envs/"


async def reset(service: Service, env_id: str, body: ResetRequest) -> ResetResponse:
    """Start an episode."""
    return (await service.reset(env_id, [body], batch=False))[0]


async def step(service: Service, env_id: str, body: StepRequest) -> StepResponse:
    """Step an episode."""
    return (await service.step(env_id, [body], batch=False))[0]


async def reset_batch(service: Service, env_id: str, body: BatchResetRequest) -> BatchResetResponse:
    """Start many episodes."""
    return BatchResetResponse(results=await service.reset(env_id, body.items, batch=True))


async def step_batch(service: Service, env_id: str, body: BatchStepRequest) -> BatchStepResponse:
    """Step many episodes."""
    return BatchStepResponse(results=await service.step(env_id, body.items, batch=True))


async def expand(service: Service, env_id: str, body: ExpandRequest) -> ExpandResponse:
    """Expand a proof state."""
    return await service.expand(env_id, body)


async def verify(service: Service, _: str, body: VerifyRequest) -> VerifyResponse:
    """Score responses."""
    return await service.verify(body)


@dataclass(frozen=True)
class Route:
    """One POST route: its path as FastAPI declares it (the label its metrics carry), its
    body's schema, and what runs it."""

    template: str
    body: type[BaseModel]
    run: Callable[[Service, str, Any], Awaitable[BaseModel]]


# Longest suffix first: ".../reset/batch" is not a reset of the env ".../reset".
_ENV_ROUTES: tuple[tuple[str, Route], ...] = tuple(
    (suffix, Route(ENV_PATH + suffix, body, run))
    for suffix, body, run in (
        ("/reset/batch", BatchResetRequest, reset_batch),
        ("/step/batch", BatchStepRequest, step_batch),
        ("/reset", ResetRequest, reset),
        ("/step", StepRequest, step),
        ("/expand", ExpandRequest, expand),
    )
)
_VERIFY = Route(VERIFY_PATH, VerifyRequest, verify)
ROUTES = (*(r for _, r in _ENV_ROUTES), _VERIFY)


def route(path: str) -> tuple[Route, str] | None:
    """The route ``path`` (percent-decoded) names and the environment id in it; None for a
    path that is no POST route of the episodes or of verification."""
    if path == VERIFY_PATH:
        return _VERIFY, ""
    if path.startswith(_ENV_PREFIX):
        for suffix, found in _ENV_ROUTES:
            env_id = path[len(_ENV_PREFIX) : -len(suffix)] if path.endswith(suffix) else ""
            if env_id:
                return found, env_id
    return None
