"""Errors as ``application/problem+json`` (RFC 9457): type, kind, title, status, detail.

Every kind is a ``ProblemKind`` (``envserver.wire``, which clients import too), and every
exception the service turns into a problem is in one table, ``PROBLEMS``: ``problem_for`` reads
it wherever such an exception is caught (a lookup, a pool item, the sandbox). ``ITEM_KINDS`` are
the problems of one item, which a batch answers in that item instead of refusing the batch.

The same module documents them: ``problem_responses`` gives a route's error responses for its
OpenAPI operation, and ``install_problem_handlers`` adds the ``Problem`` schemas (and the
``ProblemKind`` enum) the spec refers to, so generated clients parse errors as the server sends
them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from environments.base import (
    EnvironmentGone,
    EnvironmentInputError,
    EnvironmentUnavailable,
    EpisodeFinished,
)
from environments.task_id import TaskIdError
from envserver.executor import PoolUnavailable
from envserver.registry import Disabled, UnknownEnvironment, UnknownVerifier
from envserver.tokens import TokenError
from envserver.wire import (
    PROBLEM_BASE,
    ProblemDocument,
    ProblemKind,
    ValidationProblemDocument,
)
from sandbox.pool import Overloaded
from sandbox.runner import SandboxInputError
from verifiers.base import Unavailable

PROBLEM_MEDIA_TYPE = "application/problem+json"
log = logging.getLogger("envserver")


_DESCRIPTIONS = {
    400: "Malformed input: JSON, task id, state token, or content the environment refuses.",
    401: "Missing or invalid API key (when the server requires keys).",
    403: "A state token that was altered, or belongs to another environment or version.",
    404: "Unknown environment, verifier or task version.",
    405: "The path takes another method.",
    409: "A step on an episode that has ended.",
    410: "An environment that was served and has been retired.",
    413: "The body or the batch is too large.",
    415: "The body is not JSON.",
    422: "The body, the options or a query parameter do not fit the schema; see errors.",
    429: "The server is busy: retry after Retry-After seconds.",
    503: "Unavailable: not served here (environment-unavailable: see reason and fix), the "
    "sandbox is down, or a sample could not be scored (reward-unavailable: retry).",
    504: "The request's deadline passed.",
}
_HEADERS = {
    401: {"WWW-Authenticate": {"schema": {"type": "string"}}},
    429: {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}},
    503: {"Retry-After": {"description": "Seconds to wait, when a retry can help.",
                          "schema": {"type": "integer"}}},
}  # fmt: skip
_SCHEMA_NAMES = {422: "ValidationProblem"}


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI responses of a route that answers ``statuses`` with problem documents."""
    responses: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        schema = {"$ref": f"#/components/schemas/{_SCHEMA_NAMES.get(status, 'Problem')}"}
        response: dict[str, Any] = {
            "description": _DESCRIPTIONS[status],
            "content": {PROBLEM_MEDIA_TYPE: {"schema": schema}},
        }
        if status in _HEADERS:
            response["headers"] = _HEADERS[status]
        responses[status] = response
    return responses


def _problem_schemas() -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    for model in (ProblemDocument, ValidationProblemDocument):
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(schema.pop("$defs", {}))
        schemas[str(schema["title"])] = schema
    return schemas


_PROBLEM_REF = "#/components/schemas/Problem"


def _renamed(node: Any, ref: str, to: str) -> Any:
    """``node`` (a JSON document) with every ``$ref`` to ``ref`` pointing at ``to`` instead."""
    if isinstance(node, dict):
        return {
            key: to if key == "$ref" and value == ref else _renamed(value, ref, to)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_renamed(item, ref, to) for item in node]
    return node


def _documented(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """``app.openapi`` with the problem schemas, and without FastAPI's default 422 (a JSON
    ``{detail: [...]}`` body this server never sends) where a route declares no 422."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
                tags=app.openapi_tags,
            )
            for operations in spec.get("paths", {}).values():
                for operation in operations.values():
                    responses = operation.get("responses", {})
                    if PROBLEM_MEDIA_TYPE not in responses.get("422", {}).get("content", {}):
                        responses.pop("422", None)
            schemas = spec.setdefault("components", {}).setdefault("schemas", {})
            for unused in ("HTTPValidationError", "ValidationError"):
                schemas.pop(unused, None)
            # A reply that holds a problem (a batch's item) names it by its class; the document
            # has one name for it, its title.
            schemas.pop(ProblemDocument.__name__, None)
            spec = _renamed(spec, f"#/components/schemas/{ProblemDocument.__name__}", _PROBLEM_REF)
            spec["components"]["schemas"].update(_problem_schemas())
            app.openapi_schema = spec
        return app.openapi_schema

    return openapi


class Problem(StarletteHTTPException):
    """Raise anywhere in a request to answer with a problem document (an HTTP exception, so
    FastAPI lets it through even from body parsing)."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        kind: ProblemKind,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(status, detail, headers or {})
        self.status = status
        self.detail = detail
        self.kind = kind
        self.extra = extra or {}

    def body(self) -> dict[str, Any]:
        """The problem document's JSON."""
        return problem_body(self.status, self.detail, kind=self.kind, extra=self.extra)

    def document(self) -> ProblemDocument:
        """The problem document, as a batch's item carries it."""
        return ProblemDocument.model_validate(self.body())

    def response(self) -> JSONResponse:
        """The problem document as an HTTP response."""
        return problem_response(
            self.status,
            self.detail,
            kind=self.kind,
            headers=dict(self.headers or {}),
            extra=self.extra,
        )


Answer = tuple[int, ProblemKind, str]
"""How an exception is answered: status, kind and detail."""


def _answer(status: int, kind: ProblemKind, detail: str = "{}") -> Callable[[Any], Answer]:
    return lambda exc: (status, kind, detail.format(exc))


PROBLEMS: Mapping[type[Exception], Callable[[Any], Answer]] = {
    # The caller's input, found unusable by the environment (in a batch: the item's problem).
    EpisodeFinished: _answer(409, ProblemKind.EPISODE_FINISHED),
    EnvironmentInputError: _answer(400, ProblemKind.BAD_INPUT),
    TaskIdError: _answer(400, ProblemKind.MALFORMED_TASK_ID),
    # A token is unreadable (400) or refused (403); it says which, and why.
    TokenError: lambda exc: (403 if exc.forbidden else 400, exc.kind, exc.detail),
    SandboxInputError: _answer(422, ProblemKind.SANDBOX_INPUT),
    # What the request names, and whether it is served here.
    UnknownEnvironment: _answer(404, ProblemKind.UNKNOWN_ENVIRONMENT),
    UnknownVerifier: _answer(404, ProblemKind.UNKNOWN_VERIFIER),
    EnvironmentGone: _answer(410, ProblemKind.ENVIRONMENT_GONE),
    Disabled: _answer(503, ProblemKind.ENVIRONMENT_UNAVAILABLE),
    EnvironmentUnavailable: _answer(503, ProblemKind.ENVIRONMENT_UNAVAILABLE),
    # Capacity: retry after Retry-After.
    Overloaded: _answer(429, ProblemKind.OVERLOADED, "the server is busy ({}); retry later"),
    PoolUnavailable: _answer(
        503, ProblemKind.UNAVAILABLE, "no pool worker can run the work now ({}); retry shortly"
    ),
}
"""Every exception the service answers with a problem, and how (``problem_for``)."""

ITEM_KINDS = frozenset({ProblemKind.EPISODE_FINISHED, ProblemKind.BAD_INPUT})
"""Problems of one item's own input: a batch answers them in the item (status ``error`` with
the problem document) and the rest of the batch as usual; a single call answers with them."""


def problem_for(exc: BaseException, where: str = "") -> Problem | None:
    """The problem ``exc`` answers with (``PROBLEMS``), its detail prefixed by ``where`` (the
    field at fault, ``items.3.state``); None for an exception that is not the caller's to see
    (a bug)."""
    answer = next((PROBLEMS[cls] for cls in type(exc).__mro__ if cls in PROBLEMS), None)
    if answer is None:
        return None
    status, kind, detail = answer(exc)
    detail = f"{where}: {detail}" if where else detail
    if isinstance(exc, Disabled | EnvironmentUnavailable):
        return unavailable_problem(detail, exc.why)
    headers: dict[str, str] = {}
    if isinstance(exc, Overloaded | PoolUnavailable):
        headers["Retry-After"] = str(exc.retry_after_s)
    return Problem(status, detail, kind=kind, headers=headers)


def problem_of(exc: BaseException) -> Problem | None:
    """The problem a request answers with when ``exc`` reaches its route's edge: a ``Problem``
    itself, an HTTP exception (no route, a wrong method, a family route's own) by its status,
    an exception of ``PROBLEMS`` by the table; None for a bug."""
    if isinstance(exc, Problem):
        return exc
    if isinstance(exc, StarletteHTTPException):
        status = exc.status_code
        detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(status).phrase
        kind = ProblemKind.of_status(status)
        return Problem(status, detail, kind=kind, headers=dict(exc.headers or {}))
    return problem_for(exc)


def unavailable_problem(detail: str, why: Unavailable) -> Problem:
    """503 for what this server cannot serve because of its configuration: not the caller's
    fault, and not worth retrying until the fix (also given as ``fix``) is applied."""
    return Problem(
        503,
        detail,
        kind=ProblemKind.ENVIRONMENT_UNAVAILABLE,
        extra={"reason": why.reason, "fix": why.fix},
    )


def problem_response(
    status: int,
    detail: str,
    *,
    kind: ProblemKind,
    headers: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> JSONResponse:
    """The problem document for ``status`` with a stable ``type`` URI per kind of error."""
    return JSONResponse(
        problem_body(status, detail, kind=kind, extra=extra),
        status_code=status,
        headers=headers,
        media_type=PROBLEM_MEDIA_TYPE,
    )


def problem_body(
    status: int, detail: str, *, kind: ProblemKind, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The JSON of a problem document (what ``problem_response`` sends, and what a message on
    a WebSocket carries)."""
    body = {
        "type": PROBLEM_BASE + kind,
        "kind": kind.value,
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        **(extra or {}),
    }
    if status == 422:  # the documented contract: a 422 always lists what was refused
        body.setdefault("errors", [{"loc": [], "msg": detail, "type": kind.value}])
    return body


def _validation_problem(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = [
        {
            "loc": list(error.get("loc", ())),
            "msg": str(error.get("msg", "")),
            "type": str(error.get("type", "")),
        }
        for error in exc.errors()[:50]
    ]
    if any(error["type"] == "json_invalid" for error in errors):
        return problem_response(
            400,
            "the request body is not valid JSON",
            kind=ProblemKind.MALFORMED_JSON,
            extra={"errors": errors},
        )
    content_type = request.headers.get("content-type", "")
    if content_type and "json" not in content_type and errors and errors[0]["loc"] == ["body"]:
        return problem_response(
            415,
            f"the request body must be JSON (Content-Type: application/json), not {content_type}",
            kind=ProblemKind.UNSUPPORTED_MEDIA_TYPE,
        )
    problem = schema_problem(errors)
    return problem_response(422, problem.detail, kind=problem.kind, extra=problem.extra)


def schema_problem(errors: list[dict[str, Any]]) -> Problem:
    """422 for a body that is JSON but not the schema; ``errors`` are pydantic's, each with
    ``loc`` (from ``body``), ``msg`` and ``type``."""
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    where = ".".join(str(part) for part in first["loc"])
    return Problem(
        422,
        f"{where}: {first['msg']}" if where else str(first["msg"]),
        kind=ProblemKind.VALIDATION_ERROR,
        extra={"errors": errors},
    )


def body_problem(exc: ValidationError) -> Problem:
    """``schema_problem`` for a body a route validates itself (a stream frame's, OpenEnv's):
    pydantic's errors, located in the body."""
    return schema_problem(
        [
            {"loc": ["body", *e["loc"]], "msg": e["msg"], "type": e["type"]}
            for e in exc.errors()[:50]
        ]
    )


def install_problem_handlers(app: FastAPI) -> None:
    """Every error the app can raise leaves as a problem document; a 500 is logged as a bug.
    The app's OpenAPI document gets the ``Problem`` schemas its routes' errors refer to."""
    app.openapi = _documented(app)  # type: ignore[method-assign]

    async def _answer(_: Request, exc: Exception) -> JSONResponse:
        problem = problem_of(exc)
        assert problem is not None  # registered only for what problem_of answers
        return problem.response()

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _validation_problem(request, exc)

    # A Problem, no route or a wrong method (HTTP exceptions), and an exception of the table
    # that a route lets through (a family route's Overloaded). Registered per class: the
    # catch-all below answers from the outermost middleware, and re-raises (logged as a crash).
    for known_type in (Problem, StarletteHTTPException, *PROBLEMS):
        app.add_exception_handler(known_type, _answer)

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return problem_response(
            500, "internal error (a bug: please report it)", kind=ProblemKind.INTERNAL
        )
