"""When and how long the clients wait before sending a request again.

Every call of the v1 API is idempotent (the server keeps no state: a step is a pure function of
state token and action), so any request may be repeated. The policy only decides which failures
are worth repeating and how long to wait between attempts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

RETRY_STATUSES = frozenset({429, 503})
"""Overloaded (the bounded queue is full) and unavailable: both pass with time."""

GATEWAY_STATUSES = frozenset({500, 502})
"""What a balancer or Ray Serve's proxy answers when the replica holding the request died or
could not be reached (nginx: 502; Serve: 500, in plain text). The service's own errors are
``application/problem+json``; one of these statuses without that body came from in between, and
another replica can answer the same request."""

PROBLEM_JSON = "application/problem+json"

RETRY_TRANSPORT_ERRORS: tuple[type[httpx.TransportError], ...] = (
    httpx.NetworkError,  # connect, read, write and close errors: the connection failed
    httpx.RemoteProtocolError,  # the server closed a kept-alive connection mid-request
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
    httpx.WriteTimeout,
)
"""Transport failures worth repeating. A read timeout is not among them: the server accepted the
request and is still working on it, so sending it again would double the load exactly when the
server is slowest."""

RESET_ERRORS: tuple[type[httpx.TransportError], ...] = (
    httpx.ReadError,  # ECONNRESET: the peer reset the connection
    httpx.WriteError,  # EPIPE: it had already closed it
    httpx.RemoteProtocolError,  # it closed it without an answer
)
"""The peer closed or reset the connection instead of answering. On a kept-alive connection
this is mostly the server closing it as idle while the request was on its way (a race no expiry
removes entirely), so the request is sent again at once on a fresh connection, once, whatever the
policy (even ``NO_RETRY`` and the health probes): every call of the API is idempotent."""


@dataclass(frozen=True)
class RetryPolicy:
    """A bounded number of attempts with exponential backoff and full jitter.

    ``attempts`` counts every request sent, the first included (1 disables retries). The n-th
    wait is drawn uniformly from ``[0, min(max_backoff_s, backoff_s * 2**(n-1))]``, so clients
    that failed together do not come back together. A ``Retry-After`` from the server replaces
    the backoff (up to ``max_retry_after_s``), plus up to ``backoff_s`` of jitter.
    """

    attempts: int = 5
    backoff_s: float = 0.25
    max_backoff_s: float = 10.0
    max_retry_after_s: float = 60.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if min(self.backoff_s, self.max_backoff_s, self.max_retry_after_s) < 0:
            raise ValueError("delays must not be negative")

    def delay_s(self, failures: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait after the ``failures``-th failed attempt (1-based)."""
        if retry_after_s is not None:
            return min(retry_after_s, self.max_retry_after_s) + self.rng.uniform(0, self.backoff_s)
        ceiling = min(self.max_backoff_s, self.backoff_s * 2 ** (failures - 1))
        return self.rng.uniform(0, ceiling)


NO_RETRY = RetryPolicy(attempts=1)


def worth_retrying(response: httpx.Response) -> bool:
    """Whether sending ``response``'s request again may succeed: an overload or unavailability
    that passes with time, or a gateway's answer for a replica that died mid-request."""
    if response.status_code in RETRY_STATUSES:
        return True
    from_service = response.headers.get("content-type", "").startswith(PROBLEM_JSON)
    return response.status_code in GATEWAY_STATUSES and not from_service


def retry_after_s(response: httpx.Response) -> float | None:
    """The ``Retry-After`` header in seconds (delta-seconds or an HTTP date), None if absent or
    unreadable."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT; a naive result means the zone was omitted
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
