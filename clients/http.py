"""HTTP clients for the v1 API: ``EnvServerClient`` (sync) and ``AsyncEnvServerClient``.

Each client holds one pooled ``httpx`` client, so connections are reused across calls and the
number of sockets to the server is bounded. Requests and responses are the pydantic models of
``envserver.wire`` (a light module: pydantic only). Every call is idempotent, so 429, 503 and
connection failures are retried with backoff (``clients.retry``), and a connection the server
reset instead of answering is retried once at once, whatever the policy; idle connections
expire before the server's keep-alive does. Problem documents become typed exceptions
(``clients.errors``). Items whose status is ``timeout``/``error`` are returned
as data: masking them is the caller's decision.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Generic, Literal, Self, TypeVar
from urllib.parse import quote, urlencode

import httpx
from pydantic import BaseModel, ValidationError

import envserver
from clients.errors import (
    EnvServerError,
    RetriesExhaustedError,
    UnexpectedResponseError,
    error_for,
    is_unavailable,
    problem_of,
)
from clients.retry import (
    NO_RETRY,
    RESET_ERRORS,
    RETRY_TRANSPORT_ERRORS,
    RetryPolicy,
    retry_after_s,
    worth_retrying,
)
from clients.stream import AsyncStreamTransport, StreamTransport
from envserver.wire import (
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
    ResetRequest,
    ResetResponse,
    StepRequest,
    StepResponse,
    VerifyItem,
    VerifyRequest,
    VerifyResponse,
)

log = logging.getLogger("clients.http")

DEFAULT_URL = "http://127.0.0.1:8000"
# The read timeout sits above the server's whole-request deadline (600 s by default), so a slow
# request ends with the server's 504 problem, which says what happened, not a bare socket timeout.
DEFAULT_TIMEOUT = httpx.Timeout(630.0, connect=10.0)
KEEPALIVE_EXPIRY_S = 4.0
"""Idle pooled connections are closed after this long: before the server closes them (uvicorn's
default keep-alive is 5 s, envserver's ``ENVSERVER_KEEP_ALIVE_S`` 75 s), so a request is not sent
on a connection the server is closing. What still races is retried once (``RESET_ERRORS``)."""
DEFAULT_LIMITS = httpx.Limits(
    max_connections=64, max_keepalive_connections=32, keepalive_expiry=KEEPALIVE_EXPIRY_S
)

M = TypeVar("M", bound=BaseModel)

ResetItem = ResetRequest | Mapping[str, Any]
StepItem = StepRequest | Mapping[str, Any] | tuple[str, str]
VerifyInput = VerifyItem | Mapping[str, Any]


def default_url() -> str:
    """``ENVSERVER_URL`` if set, else ``http://127.0.0.1:8000``."""
    return os.environ.get("ENVSERVER_URL") or DEFAULT_URL


def default_api_key() -> str | None:
    """``ENVSERVER_API_KEY`` if set and not empty, else None."""
    return os.environ.get("ENVSERVER_API_KEY") or None


# --- requests, independent of sync or async -----------------------------------------------------


@dataclass(frozen=True)
class _Call(Generic[M]):
    """One API call: what to send and which model the answer is. ``answer_statuses`` are
    non-2xx statuses whose body is still the model (``/readyz`` answers 503 with a Health)."""

    method: str
    path: str
    model: type[M]
    body: dict[str, Any] | None = None
    retry: bool = True
    answer_statuses: frozenset[int] = field(default_factory=frozenset)


def _env_path(env_id: str, suffix: str = "") -> str:
    if not env_id:
        raise ValueError("env_id must not be empty")
    # Env ids may contain '/' (family/name), which the route takes as part of the id.
    return f"/v1/envs/{quote(env_id, safe='/')}{suffix}"


def _body(model: BaseModel) -> dict[str, Any]:
    # Unset optional fields stay out of the body, so an older server that does not know a newer
    # field still accepts requests that do not use it.
    return model.model_dump(mode="json", exclude_none=True)


def _as_reset(item: ResetItem) -> ResetRequest:
    return item if isinstance(item, ResetRequest) else ResetRequest.model_validate(item)


def _as_step(item: StepItem) -> StepRequest:
    if isinstance(item, StepRequest):
        return item
    if isinstance(item, tuple):
        state, action = item
        return StepRequest(state=state, action=action)
    return StepRequest.model_validate(item)


def _as_verify(item: VerifyInput) -> VerifyItem:
    return item if isinstance(item, VerifyItem) else VerifyItem.model_validate(item)


def _catalogue_call() -> _Call[Catalogue]:
    return _Call("GET", "/v1/envs", Catalogue)


def _env_call(env_id: str) -> _Call[EnvInfo]:
    return _Call("GET", _env_path(env_id), EnvInfo)


def _reset_call(
    env_id: str,
    seed: int | None,
    options: Mapping[str, Any] | None,
    task_id: str | None,
    run: str | None = None,
) -> _Call[ResetResponse]:
    request = ResetRequest(seed=seed, options=dict(options or {}), task_id=task_id, run=run)
    return _Call("POST", _env_path(env_id, "/reset"), ResetResponse, _body(request))


def _step_call(env_id: str, state: str, action: str) -> _Call[StepResponse]:
    request = StepRequest(state=state, action=action)
    return _Call("POST", _env_path(env_id, "/step"), StepResponse, _body(request))


def _expand_call(env_id: str, state: str, actions: Sequence[str] | None) -> _Call[ExpandResponse]:
    request = ExpandRequest(state=state, actions=None if actions is None else list(actions))
    return _Call("POST", _env_path(env_id, "/expand"), ExpandResponse, _body(request))


def _reset_batch_call(env_id: str, items: Sequence[ResetItem]) -> _Call[BatchResetResponse]:
    request = BatchResetRequest(items=[_as_reset(item) for item in items])
    return _Call("POST", _env_path(env_id, "/reset/batch"), BatchResetResponse, _body(request))


def _step_batch_call(env_id: str, items: Sequence[StepItem]) -> _Call[BatchStepResponse]:
    request = BatchStepRequest(items=[_as_step(item) for item in items])
    return _Call("POST", _env_path(env_id, "/step/batch"), BatchStepResponse, _body(request))


def _verify_call(
    items: Sequence[VerifyInput],
    verifier: str | None,
    options: Mapping[str, Any] | None,
    timeout_s: float | None,
    run: str | None = None,
) -> _Call[VerifyResponse]:
    request = VerifyRequest(
        verifier=verifier,
        options=dict(options or {}),
        timeout_s=timeout_s,
        items=[_as_verify(item) for item in items],
        run=run,
    )
    return _Call("POST", "/v1/verify", VerifyResponse, _body(request))


def _curriculum_call(request: CurriculumRequest | Mapping[str, Any]) -> _Call[CurriculumSample]:
    if not isinstance(request, CurriculumRequest):
        request = CurriculumRequest.model_validate(request)
    return _Call("POST", "/v1/curriculum/sample", CurriculumSample, _body(request))


def _report_call(run: str, env_id: str | None, limit: int | None) -> _Call[CurriculumReport]:
    if not run:
        raise ValueError("run must not be empty")
    query = {k: v for k, v in (("env", env_id), ("limit", limit)) if v is not None}
    path = f"/v1/curriculum/{quote(run, safe='')}" + (f"?{urlencode(query)}" if query else "")
    return _Call("GET", path, CurriculumReport)


def _health_call(path: str) -> _Call[Health]:
    # Probes answer "how is it now": a retry would hide exactly what they are asked.
    return _Call("GET", path, Health, retry=False, answer_statuses=frozenset({503}))


# --- responses, independent of sync or async ----------------------------------------------------


def _decode(call: _Call[M], response: httpx.Response, attempts: int) -> M:
    """The answer as ``call.model``; raises the matching ``EnvServerError`` otherwise."""
    status = response.status_code
    if response.is_success or status in call.answer_statuses:
        try:
            return call.model.model_validate_json(response.content)
        except ValidationError as exc:
            if response.is_success:
                raise UnexpectedResponseError(
                    f"{call.method} {call.path}: the answer is not a {call.model.__name__}: "
                    f"{exc.errors()[0]['msg'] if exc.errors() else exc}",
                    status=status,
                    attempts=attempts,
                ) from None
    raise error_for(response, attempts=attempts, retryable=worth_retrying(response))


def _delay_before_next(
    policy: RetryPolicy, attempt: int, response: httpx.Response | None
) -> float | None:
    """Seconds to wait before attempt ``attempt + 1``; None when this outcome is final.
    ``response`` is None when the attempt failed in transport (a retryable error)."""
    if attempt >= policy.attempts:
        return None
    if response is None:
        return policy.delay_s(attempt)
    if not worth_retrying(response) or is_unavailable(problem_of(response)):
        return None
    return policy.delay_s(attempt, retry_after_s(response))


def _log_retry(call: _Call[Any], attempt: int, policy: RetryPolicy, why: str, wait: float) -> None:
    log.info(
        "%s %s: %s; retrying in %.2f s (attempt %d of %d)",
        call.method,
        call.path,
        why,
        wait,
        attempt + 1,
        policy.attempts,
    )


def _resend_at_once(call: _Call[Any], exc: httpx.TransportError, resent: bool) -> bool:
    """Whether to send again at once, not counted as an attempt: the first time the peer reset
    the connection (``RESET_ERRORS``: mostly a kept-alive connection the server was closing)."""
    if resent or not isinstance(exc, RESET_ERRORS):
        return False
    log.info("%s %s: %s; sending it again on a fresh connection", call.method, call.path, repr(exc))
    return True


def _where(call: _Call[Any], exc: httpx.TransportError) -> str:
    """The call's method and whole URL (where nothing answered, the server's address is the
    point), or its path when the error has no request."""
    try:
        return f"{call.method} {exc.request.url}"
    except RuntimeError:
        return f"{call.method} {call.path}"


def _exhausted(call: _Call[Any], attempts: int, exc: httpx.TransportError) -> RetriesExhaustedError:
    return RetriesExhaustedError(
        f"{_where(call, exc)}: gave up after {attempts} attempt"
        f"{'s' if attempts != 1 else ''}; last error: {type(exc).__name__}: {exc}",
        attempts=attempts,
    )


def _transport_failed(call: _Call[Any], attempts: int, exc: httpx.TransportError) -> EnvServerError:
    if isinstance(exc, httpx.ReadTimeout):
        detail = f"{_where(call, exc)}: no answer within the read timeout ({exc})"
    else:
        detail = f"{_where(call, exc)}: {type(exc).__name__}: {exc}"
    return EnvServerError(detail, attempts=attempts)


Transport = Literal["http", "stream"]
"""How calls travel: ``http`` (a request each) or ``stream`` (the episode and verify calls as
frames of one WebSocket, ``clients.stream``; HTTP where a proxy refuses WebSockets)."""


def _sync_transport(
    transport: httpx.BaseTransport | Transport, limits: httpx.Limits
) -> httpx.BaseTransport | None:
    if transport == "stream":
        return StreamTransport(httpx.HTTPTransport(limits=limits))
    return None if transport == "http" else transport


def _async_transport(
    transport: httpx.AsyncBaseTransport | Transport, limits: httpx.Limits
) -> httpx.AsyncBaseTransport | None:
    if transport == "stream":
        return AsyncStreamTransport(httpx.AsyncHTTPTransport(limits=limits))
    return None if transport == "http" else transport


def _headers(api_key: str | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    headers = {
        "Accept": "application/json, application/problem+json",
        "User-Agent": f"envserver-client/{envserver.__version__}",
        **(extra or {}),
    }
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


# --- the clients --------------------------------------------------------------------------------


class EnvServerClient:
    """A synchronous client over one pooled ``httpx.Client`` (thread-safe: share one per process).

    ``base_url`` defaults to ``ENVSERVER_URL`` (else ``http://127.0.0.1:8000``) and ``api_key``
    to ``ENVSERVER_API_KEY`` (pass ``""`` to send none). ``timeout`` is seconds or an
    ``httpx.Timeout``; ``limits`` bounds the connection pool; ``retry`` says how often and how
    patiently 429/503/connection failures are retried; ``transport`` is ``"http"``, ``"stream"``
    (``Transport``) or an ``httpx`` transport of your own. Use it as a context manager, or call
    ``close()``.

    Every method raises ``ClientError`` (4xx: the request is wrong), ``ServerError`` (5xx),
    ``RetriesExhaustedError`` (still 429/503/unreachable after every attempt),
    ``UnexpectedResponseError`` (the answer is not the API's) or ``EnvServerError`` (another
    transport failure, e.g. a read timeout); and ``pydantic.ValidationError`` before sending
    anything when the arguments cannot form a valid request.
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        limits: httpx.Limits = DEFAULT_LIMITS,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | Transport = "http",
    ) -> None:
        self.base_url = (base_url or default_url()).rstrip("/")
        self.retry = retry or RetryPolicy()
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=_headers(api_key if api_key is not None else default_api_key(), headers),
            timeout=timeout,
            limits=limits,
            transport=_sync_transport(transport, limits),
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the pooled connections; the client cannot be used afterwards."""
        self._http.close()

    def _call(self, call: _Call[M]) -> M:
        policy = self.retry if call.retry else NO_RETRY
        attempt = 0
        resent = False
        while True:
            attempt += 1
            try:
                response = self._http.request(call.method, call.path, json=call.body)
            except RETRY_TRANSPORT_ERRORS as exc:
                if _resend_at_once(call, exc, resent):
                    resent, attempt = True, attempt - 1
                    continue
                wait = _delay_before_next(policy, attempt, None)
                if wait is None:
                    raise _exhausted(call, attempt, exc) from exc
                _log_retry(call, attempt, policy, f"{type(exc).__name__}: {exc}", wait)
                time.sleep(wait)
                continue
            except httpx.TransportError as exc:
                raise _transport_failed(call, attempt, exc) from exc
            wait = _delay_before_next(policy, attempt, response)
            if wait is None:
                return _decode(call, response, attempt)
            _log_retry(call, attempt, policy, f"HTTP {response.status_code}", wait)
            time.sleep(wait)

    def envs(self) -> Catalogue:
        """The catalogue: every environment and verifier, and the disabled families."""
        return self._call(_catalogue_call())

    def env(self, env_id: str) -> EnvInfo:
        """One environment's spec; ``ClientError`` (404) if the server has no such env."""
        return self._call(_env_call(env_id))

    def reset(
        self,
        env_id: str,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
        task_id: str | None = None,
        run: str | None = None,
    ) -> ResetResponse:
        """Start an episode by ``seed`` and ``options``, or by ``task_id`` (not both); neither:
        the server draws a seed. The answer carries the first observation and the state token.
        With ``run``, a server keeping statistics counts the episode's end for its task."""
        return self._call(_reset_call(env_id, seed, options, task_id, run))

    def step(self, env_id: str, state: str, action: str) -> StepResponse:
        """Apply ``action`` to the episode in the ``state`` token. A tampered or foreign token is
        a ``ClientError`` (400/403); a finished episode is one too (409)."""
        return self._call(_step_call(env_id, state, action))

    def expand(
        self, env_id: str, state: str, actions: Sequence[str] | None = None
    ) -> ExpandResponse:
        """Tree search: apply each of ``actions`` (default: every valid one) to the goal in
        ``state`` independently; each expansion lists its branches with their own tokens."""
        return self._call(_expand_call(env_id, state, actions))

    def reset_batch(self, env_id: str, items: Sequence[ResetItem]) -> BatchResetResponse:
        """Many resets in one request (``ResetRequest`` or its dict form); results in order."""
        return self._call(_reset_batch_call(env_id, items))

    def step_batch(self, env_id: str, items: Sequence[StepItem]) -> BatchStepResponse:
        """Many steps in one request (``StepRequest``, its dict form, or ``(state, action)``);
        results in order. Steps of one token with many actions branch a search tree."""
        return self._call(_step_batch_call(env_id, items))

    def verify(
        self,
        items: Sequence[VerifyInput],
        verifier: str | None = None,
        options: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        run: str | None = None,
    ) -> VerifyResponse:
        """Score responses: items with a ``reference`` need ``verifier``; items with a
        ``task_id`` name their environment. ``options`` are defaults for every item;
        ``timeout_s`` is the per-item limit (capped by the server); with ``run``, a server
        keeping statistics counts each task id's outcome in that run. Results in order."""
        return self._call(_verify_call(items, verifier, options, timeout_s, run))

    def curriculum_sample(self, request: CurriculumRequest | Mapping[str, Any]) -> CurriculumSample:
        """Task ids drawn for a run by their measured pass rates (``POST
        /v1/curriculum/sample``; the server must keep statistics, else ``UnavailableError``)."""
        return self._call(_curriculum_call(request))

    def curriculum(
        self, run: str, env_id: str | None = None, limit: int | None = None
    ) -> CurriculumReport:
        """A run's estimated pass rate per task and their histogram (``GET
        /v1/curriculum/{run}``)."""
        return self._call(_report_call(run, env_id, limit))

    def health(self) -> Health:
        """Liveness (``/healthz``); not retried."""
        return self._call(_health_call("/healthz"))

    def ready(self) -> Health:
        """Readiness (``/readyz``): ``status`` is ``unavailable`` while the server cannot serve
        (the 503 answer is returned, not raised); not retried."""
        return self._call(_health_call("/readyz"))


class AsyncEnvServerClient:
    """The asyncio twin of ``EnvServerClient`` over one pooled ``httpx.AsyncClient``; the same
    arguments, methods and exceptions, awaited. Use ``async with``, or ``await aclose()``."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        limits: httpx.Limits = DEFAULT_LIMITS,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | Transport = "http",
    ) -> None:
        self.base_url = (base_url or default_url()).rstrip("/")
        self.retry = retry or RetryPolicy()
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=_headers(api_key if api_key is not None else default_api_key(), headers),
            timeout=timeout,
            limits=limits,
            transport=_async_transport(transport, limits),
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the pooled connections; the client cannot be used afterwards."""
        await self._http.aclose()

    async def _call(self, call: _Call[M]) -> M:
        policy = self.retry if call.retry else NO_RETRY
        attempt = 0
        resent = False
        while True:
            attempt += 1
            try:
                response = await self._http.request(call.method, call.path, json=call.body)
            except RETRY_TRANSPORT_ERRORS as exc:
                if _resend_at_once(call, exc, resent):
                    resent, attempt = True, attempt - 1
                    continue
                wait = _delay_before_next(policy, attempt, None)
                if wait is None:
                    raise _exhausted(call, attempt, exc) from exc
                _log_retry(call, attempt, policy, f"{type(exc).__name__}: {exc}", wait)
                await asyncio.sleep(wait)
                continue
            except httpx.TransportError as exc:
                raise _transport_failed(call, attempt, exc) from exc
            wait = _delay_before_next(policy, attempt, response)
            if wait is None:
                return _decode(call, response, attempt)
            _log_retry(call, attempt, policy, f"HTTP {response.status_code}", wait)
            await asyncio.sleep(wait)

    async def envs(self) -> Catalogue:
        """The catalogue: every environment and verifier, and the disabled families."""
        return await self._call(_catalogue_call())

    async def env(self, env_id: str) -> EnvInfo:
        """One environment's spec; ``ClientError`` (404) if the server has no such env."""
        return await self._call(_env_call(env_id))

    async def reset(
        self,
        env_id: str,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
        task_id: str | None = None,
        run: str | None = None,
    ) -> ResetResponse:
        """Start an episode by ``seed`` and ``options``, or by ``task_id`` (not both)."""
        return await self._call(_reset_call(env_id, seed, options, task_id, run))

    async def step(self, env_id: str, state: str, action: str) -> StepResponse:
        """Apply ``action`` to the episode in the ``state`` token."""
        return await self._call(_step_call(env_id, state, action))

    async def expand(
        self, env_id: str, state: str, actions: Sequence[str] | None = None
    ) -> ExpandResponse:
        """Tree search: expand the goal in ``state`` (see ``EnvServerClient.expand``)."""
        return await self._call(_expand_call(env_id, state, actions))

    async def reset_batch(self, env_id: str, items: Sequence[ResetItem]) -> BatchResetResponse:
        """Many resets in one request; results in order."""
        return await self._call(_reset_batch_call(env_id, items))

    async def step_batch(self, env_id: str, items: Sequence[StepItem]) -> BatchStepResponse:
        """Many steps in one request; results in order."""
        return await self._call(_step_batch_call(env_id, items))

    async def verify(
        self,
        items: Sequence[VerifyInput],
        verifier: str | None = None,
        options: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        run: str | None = None,
    ) -> VerifyResponse:
        """Score responses against references (with ``verifier``) or task ids; in order."""
        return await self._call(_verify_call(items, verifier, options, timeout_s, run))

    async def curriculum_sample(
        self, request: CurriculumRequest | Mapping[str, Any]
    ) -> CurriculumSample:
        """Task ids drawn for a run by their measured pass rates."""
        return await self._call(_curriculum_call(request))

    async def curriculum(
        self, run: str, env_id: str | None = None, limit: int | None = None
    ) -> CurriculumReport:
        """A run's estimated pass rate per task and their histogram."""
        return await self._call(_report_call(run, env_id, limit))

    async def health(self) -> Health:
        """Liveness (``/healthz``); not retried."""
        return await self._call(_health_call("/healthz"))

    async def ready(self) -> Health:
        """Readiness (``/readyz``); a 503 answer is returned with status ``unavailable``."""
        return await self._call(_health_call("/readyz"))
