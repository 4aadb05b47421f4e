"""Errors as ``application/problem+json`` (RFC 9457): type, title, status, detail.

The same module documents them: ``problem_responses`` gives a route's error responses for its
OpenAPI operation, and ``install_problem_handlers`` adds the ``Problem`` schemas the spec refers
to, so generated clients parse errors as the server sends them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

PROBLEM_MEDIA_TYPE = "application/problem+json"
PROBLEM_BASE = "https://envserver.dev/problems/"
log = logging.getLogger("envserver")


class FieldError(BaseModel):
    """One reason a request was refused: where (``loc``: body, query or path, then the field
    path), what, and the error's type."""

    loc: list[str | int]
    msg: str
    type: str


class ProblemDocument(BaseModel):
    """An error (RFC 9457). ``type`` ends with a stable kind (``unknown-environment``,
    ``overloaded``, ...) to branch on. Some problems carry more members: ``errors`` (400
    malformed JSON, 422), ``reason`` and ``fix`` (503 ``environment-unavailable``)."""

    model_config = ConfigDict(extra="allow", title="Problem")

    type: str = Field(description="A URI whose last segment is the kind of error.")
    title: str = Field(description="The HTTP status phrase.")
    status: int = Field(description="The HTTP status code.")
    detail: str = Field(description="What went wrong, for a person; never reveals a reference.")
    errors: list[FieldError] | None = Field(None, description="Every field that was refused.")


class ValidationProblemDocument(ProblemDocument):
    """A request the schema or the options refuse (422): ``errors`` lists every field."""

    model_config = ConfigDict(extra="allow", title="ValidationProblem")

    errors: list[FieldError] = Field(description="Every field that was refused.")


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
            schemas.update(_problem_schemas())
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
        kind: str | None = None,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(status, detail, headers or {})
        self.status = status
        self.detail = detail
        self.kind = kind or HTTPStatus(status).phrase.lower().replace(" ", "-")
        self.extra = extra or {}


def problem_response(
    status: int,
    detail: str,
    *,
    kind: str | None = None,
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
    status: int, detail: str, *, kind: str | None = None, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The JSON of a problem document (what ``problem_response`` sends, and what a message on
    a WebSocket carries)."""
    kind = kind or HTTPStatus(status).phrase.lower().replace(" ", "-")
    body = {
        "type": PROBLEM_BASE + kind,
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        **(extra or {}),
    }
    if status == 422:  # the documented contract: a 422 always lists what was refused
        body.setdefault("errors", [{"loc": [], "msg": detail, "type": kind}])
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
            kind="malformed-json",
            extra={"errors": errors},
        )
    content_type = request.headers.get("content-type", "")
    if content_type and "json" not in content_type and errors and errors[0]["loc"] == ["body"]:
        return problem_response(
            415,
            f"the request body must be JSON (Content-Type: application/json), not {content_type}",
            kind="unsupported-media-type",
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
        kind="validation-error",
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

    @app.exception_handler(Problem)
    async def _problem(_: Request, exc: Problem) -> JSONResponse:
        return problem_response(
            exc.status, exc.detail, kind=exc.kind, headers=dict(exc.headers or {}), extra=exc.extra
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _validation_problem(request, exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
        return problem_response(exc.status_code, detail, headers=dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return problem_response(500, "internal error (a bug: please report it)", kind="internal")
