"""Prometheus metrics (prometheus-client), one registry per app so tests can build many apps.

Besides traffic and latency, what shows a policy earning reward without solving tasks: each
environment's (or verifier's) reward histogram and item statuses, and the share of the most
frequent response among its last ``SKETCH_ITEMS`` scored items (one answer sent for every task,
a classic hack, drives it towards 1). ``deploy/`` holds the dashboard and the alert rules that
read them.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from environments.extension import JobQueue

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
# Rewards lie in [0, 1]: a bucket for exact zeros, tenths, and one that parts "almost" from 1.
REWARD_BUCKETS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.999, 1.0)
SKETCH_ITEMS = 256
"""Responses remembered per (kind, target) for the top-response share."""
_DIGEST_EDGE = 2048
"""Characters hashed at each end of a response: the digest costs the same for any length."""


class ResponseSketch:
    """Digests of the last ``size`` responses and how often each occurs among them: O(1) per
    item, O(distinct responses) only when scraped. Responses that agree in length and in their
    first and last ``_DIGEST_EDGE`` characters count as one (a sketch, not a ledger)."""

    __slots__ = ("counts", "size", "window")

    def __init__(self, size: int = SKETCH_ITEMS) -> None:
        self.size = size
        self.window: deque[int] = deque()
        self.counts: dict[int, int] = {}

    def push(self, response: str) -> None:
        digest = hash((len(response), response[:_DIGEST_EDGE], response[-_DIGEST_EDGE:]))
        if len(self.window) == self.size:
            old = self.window.popleft()
            left = self.counts[old] - 1
            if left:
                self.counts[old] = left
            else:
                del self.counts[old]
        self.window.append(digest)
        self.counts[digest] = self.counts.get(digest, 0) + 1

    def top_share(self) -> float:
        """The most frequent response's share of the window (0 when empty)."""
        return max(self.counts.values()) / len(self.window) if self.window else 0.0


class _SketchCollector:
    """Exports the sketches as gauges, computed when scraped."""

    def __init__(self, sketches: dict[tuple[str, str], ResponseSketch]) -> None:
        self.sketches = sketches

    def collect(self) -> Iterator[Metric]:
        share = GaugeMetricFamily(
            "envserver_top_response_share",
            f"Share of the most frequent response among the last {SKETCH_ITEMS} scored items.",
            labels=["kind", "target"],
        )
        items = GaugeMetricFamily(
            "envserver_top_response_window_items",
            "Scored items in the window the top-response share is computed over.",
            labels=["kind", "target"],
        )
        for (kind, target), sketch in sorted(self.sketches.items()):
            share.add_metric([kind, target], sketch.top_share())
            items.add_metric([kind, target], len(sketch.window))
        yield share
        yield items


class QueueCollector:
    """The families' job queues (``environments.extension.JobQueue``) as
    gauges, read when scraped: jobs queued and running (in the store, all replicas), the oldest
    job's age, the queue's bound, and this process's busy workers."""

    def __init__(self, queues: Sequence[JobQueue]) -> None:
        self.queues = queues

    def describe(self) -> Iterator[Metric]:
        # The families without their samples: registering reads no store.
        yield from self._families()

    def _families(self) -> tuple[GaugeMetricFamily, ...]:
        return (
            GaugeMetricFamily(
                "envserver_queue_jobs",
                "Jobs in a family's queue (all replicas sharing its store), by state: queued "
                "(waiting for a worker) or running (held by one).",
                labels=["queue", "state"],
            ),
            GaugeMetricFamily(
                "envserver_queue_oldest_seconds",
                "Age of the oldest job in the queue, queued or running (0 when empty).",
                labels=["queue"],
            ),
            GaugeMetricFamily(
                "envserver_queue_limit",
                "The most jobs the queue takes; more are refused with 429.",
                labels=["queue"],
            ),
            GaugeMetricFamily(
                "envserver_queue_busy_workers",
                "This process's workers of the queue running a job now.",
                labels=["queue"],
            ),
        )

    def collect(self) -> Iterator[Metric]:
        jobs, oldest, limit, busy = self._families()
        for queue in self.queues:
            state = queue.state()
            jobs.add_metric([state.name, "queued"], state.queued)
            jobs.add_metric([state.name, "running"], state.running)
            oldest.add_metric([state.name], state.oldest_s)
            limit.add_metric([state.name], state.limit)
            busy.add_metric([state.name], state.busy)
        yield from (jobs, oldest, limit, busy)


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
        self.rewards = Histogram(
            "envserver_reward",
            "Rewards of scored items (status ok or invalid).",
            ["kind", "target"],
            buckets=REWARD_BUCKETS,
            registry=r,
        )
        self.sketches: dict[tuple[str, str], ResponseSketch] = {}
        self._scored: dict[tuple[str, str], tuple[Any, ResponseSketch]] = {}
        r.register(_SketchCollector(self.sketches))

    def scored(
        self, kind: str, target: str, status: str, reward: float | None, response: str
    ) -> None:
        """One verified item or step: its status, its reward (none for timeout and error), and
        its response in the target's sketch. ``target`` must be a bounded label (see
        ``Service.label``)."""
        self.items.labels(kind, target, status).inc()
        if reward is None:
            return
        key = (kind, target)
        series = self._scored.get(key)
        if series is None:  # the labelled child looked up once, not on every item
            series = self._scored[key] = (self.rewards.labels(kind, target), ResponseSketch())
            self.sketches[key] = series[1]
        series[0].observe(reward)
        series[1].push(response)


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
