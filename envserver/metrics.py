"""Prometheus metrics (prometheus-client), one registry per app so tests can build many apps."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


@dataclass
class Metrics:
    """The service's metrics; ``registry`` is what ``/metrics`` exposes."""

    registry: CollectorRegistry = field(
        default_factory=lambda: CollectorRegistry(auto_describe=True)
    )

    def __post_init__(self) -> None:
        # The *_created series double the exposition and no dashboard here reads them.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        r = self.registry
        self.requests = Counter(
            "envserver_http_requests",
            "HTTP requests.",
            ["method", "route", "status", "api_key"],
            registry=r,
        )
        self.request_seconds = Histogram(
            "envserver_http_request_seconds",
            "HTTP request latency.",
            ["method", "route"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.items = Counter(
            "envserver_items",
            "Items scored or stepped, by outcome.",
            ["kind", "target", "status"],
            registry=r,
        )
        self.item_seconds = Histogram(
            "envserver_item_seconds",
            "Time of one item in the pool, queueing included.",
            ["kind", "target"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.worker_failures = Counter(
            "envserver_worker_failures",
            "Items whose worker was stopped or died.",
            ["reason"],
            registry=r,
        )
        self.rejected = Counter(
            "envserver_rejected_items",
            "Items refused with 429 because the queue was full.",
            registry=r,
        )
        self.in_flight = Gauge("envserver_in_flight_items", "Items in the pool now.", registry=r)


class MetricsMiddleware:
    """Counts every response (401s and 413s included) by route template, never by raw path."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_and_record(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_record)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")
            key = scope.get("state", {}).get("api_key", "anonymous")
            method = scope["method"]
            self.metrics.requests.labels(method, route, str(status), key).inc()
            self.metrics.request_seconds.labels(method, route).observe(
                time.perf_counter() - started
            )
