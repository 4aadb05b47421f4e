"""What the clients raise: one base class, split by what the caller should do about it.

- ``ClientError``: the server refused the request (4xx other than 429). Retrying the same request
  cannot help; fix it.
- ``ServerError``: the server failed (5xx other than 503: a bug, or a whole-request timeout).
- ``RetriesExhaustedError``: the server stayed overloaded (429), unavailable (503) or unreachable
  for every attempt of the retry policy.
- ``UnexpectedResponseError``: the answer was not what the API promises (not JSON, wrong shape):
  usually the URL points at something that is not an envserver.
- ``UnavailableError``: the server cannot serve this environment or verifier at all (it is
  disabled there: a missing extra, data file or binary); ``fix`` says how to enable it. Retrying
  cannot help.
- ``ItemFailedError``: a Gym call's item came back ``timeout``/``error``. The HTTP clients return
  such items as data; the Gym layer raises, so an infrastructure failure never becomes reward 0.
- ``ItemRefusedError`` (a ``ClientError``): the server refused one item of a batch (its episode
  had ended, its input was refused) and answered the rest; the item carries the problem document
  the same call alone is answered with. The Gym layer raises it; retrying cannot help.

Every error the server sends has a kind (``ProblemKind`` of ``envserver.wire``, the server's own
vocabulary): ``EnvServerError.kind``.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from envserver.wire import ProblemDocument, ProblemKind


class EnvServerError(Exception):
    """Base of every error the clients raise.

    ``status`` is the HTTP status of the last answer (None when there was none: a connection
    error, or an item failure). ``type``, ``title`` and ``detail`` come from the server's
    ``application/problem+json`` document when there was one; ``problem`` is that whole document
    (it may hold more, e.g. ``errors`` for a 422). ``attempts`` is how many requests were sent.
    """

    def __init__(
        self,
        detail: str,
        *,
        status: int | None = None,
        type: str = "about:blank",  # the RFC 9457 member name
        title: str = "",
        problem: dict[str, Any] | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.type = type
        self.title = title
        self.problem = problem or {}
        self.attempts = attempts

    @property
    def kind(self) -> ProblemKind | str:
        """The kind of error, e.g. ``ProblemKind.UNKNOWN_ENVIRONMENT``: stable across servers, so
        callers can branch on it (the text itself for a kind this client does not know, from a
        newer server or from something that is not an envserver)."""
        return kind_of(self.problem or {"type": self.type})

    def __str__(self) -> str:
        if self.status is None:
            return self.detail
        title = f" {self.title}" if self.title else ""
        return f"HTTP {self.status}{title}: {self.detail}"


class ClientError(EnvServerError):
    """The server refused the request (4xx other than 429): retrying it cannot help."""


class ServerError(EnvServerError):
    """The server failed to answer the request (5xx other than 503)."""


class RetriesExhaustedError(EnvServerError):
    """A retryable failure (429, 503, connection error) persisted through every attempt.

    ``status`` is the last answer's status, or None when the last attempt got no answer; the
    underlying transport error, if any, is ``__cause__``.
    """


class UnavailableError(EnvServerError):
    """The server cannot serve the environment or verifier asked for (503
    ``environment-unavailable``): it is disabled there. ``reason`` says why, ``fix`` what enables
    it (an extra to install, a variable to set, a binary to put on PATH); retrying cannot help."""

    @property
    def reason(self) -> str:
        """Why the server cannot serve it."""
        return str(self.problem.get("reason") or self.detail)

    @property
    def fix(self) -> str:
        """What would enable it on the server ("" when the server did not say)."""
        return str(self.problem.get("fix") or "")


class UnexpectedResponseError(EnvServerError):
    """The server's answer does not match the API (not JSON, or not the documented shape)."""


class ItemRefusedError(ClientError):
    """The server refused item ``index`` of a batch and answered the others: ``problem`` is the
    item's problem document (``status``, ``kind``: ``episode-finished``, ``bad-input``)."""

    def __init__(self, problem: ProblemDocument, *, index: int | None = None) -> None:
        where = f"item {index}: " if index is not None else ""
        body = problem.model_dump(mode="json", exclude_none=True)
        super().__init__(
            where + problem.detail,
            status=problem.status,
            type=problem.type,
            title=problem.title,
            problem=body,
        )
        self.index = index


class ItemFailedError(EnvServerError):
    """An item of a Gym reset/step came back ``timeout`` or ``error``: infrastructure failed and
    there is no reward to report. The episode's state token is unchanged, so the call can be
    retried. ``item_status`` is the item's status and ``index`` its position in a batch."""

    def __init__(self, item_status: str, detail: str, *, index: int | None = None) -> None:
        where = f"item {index}: " if index is not None else ""
        super().__init__(f"{where}{item_status}: {detail or 'no detail'}", title=item_status)
        self.item_status = item_status
        self.index = index


def problem_of(response: httpx.Response) -> dict[str, Any]:
    """The problem document of an error response; a synthetic one when the body is not JSON
    (a proxy's HTML page, an empty body), so callers always get a detail to show."""
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        return body
    text = response.text.strip()[:500]
    return {
        "type": "about:blank",
        "title": response.reason_phrase,
        "status": response.status_code,
        "detail": text or response.reason_phrase or f"HTTP {response.status_code}",
    }


def kind_of(problem: dict[str, Any]) -> ProblemKind | str:
    """The kind of a problem document: its ``kind`` member, or the last segment of its
    ``type`` (a server older than the member); the text where it is no ``ProblemKind``."""
    kind = str(problem.get("kind") or str(problem.get("type", "")).rsplit("/", 1)[-1])
    try:
        return ProblemKind(kind)
    except ValueError:
        return kind


def is_unavailable(problem: dict[str, Any]) -> bool:
    """Whether ``problem`` says the server cannot serve the target at all (not a passing
    overload)."""
    return kind_of(problem) == ProblemKind.ENVIRONMENT_UNAVAILABLE


def error_for(
    response: httpx.Response, *, attempts: int, retryable: bool = False
) -> EnvServerError:
    """The exception for a non-success ``response``; ``retryable`` marks the last answer of an
    exhausted retry loop."""
    problem = problem_of(response)
    status = response.status_code
    if status == 503 and is_unavailable(problem):
        cls: type[EnvServerError] = UnavailableError
        retryable = False
    elif retryable:
        cls = RetriesExhaustedError
    elif 400 <= status < 500:
        cls = ClientError
    elif status >= 500:
        cls = ServerError
    else:  # a redirect or an informational answer: not something this API sends
        cls = UnexpectedResponseError
    detail = str(problem.get("detail", ""))
    if status == 404 and detail == response.reason_phrase:
        # No route (an unknown environment says so): most often a base URL ending in /v1.
        detail += f" ({_no_route(response)}: the URL must be the server's root, without /v1)"
    if retryable:
        plural = "s" if attempts != 1 else ""
        detail = f"gave up after {attempts} attempt{plural}; last answer: {detail}"
    return cls(
        detail,
        status=status,
        type=str(problem.get("type", "about:blank")),
        title=str(problem.get("title", response.reason_phrase)),
        problem=problem,
        attempts=attempts,
    )


def _no_route(response: httpx.Response) -> str:
    try:
        return f"the server has no {response.request.url.path}"
    except RuntimeError:  # a response built without its request
        return "the server has no such route"
