"""Errors as ``application/problem+json`` (RFC 9457): type, title, status, detail."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

PROBLEM_MEDIA_TYPE = "application/problem+json"
PROBLEM_BASE = "https://envserver.dev/problems/"
log = logging.getLogger("envserver")


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
    kind = kind or HTTPStatus(status).phrase.lower().replace(" ", "-")
    body = {
        "type": PROBLEM_BASE + kind,
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        **(extra or {}),
    }
    return JSONResponse(body, status_code=status, headers=headers, media_type=PROBLEM_MEDIA_TYPE)


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
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    where = ".".join(str(part) for part in first["loc"])
    return problem_response(
        422,
        f"{where}: {first['msg']}" if where else str(first["msg"]),
        kind="validation-error",
        extra={"errors": errors},
    )


def install_problem_handlers(app: FastAPI) -> None:
    """Every error the app can raise leaves as a problem document; a 500 is logged as a bug."""

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
