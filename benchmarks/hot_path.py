"""Where a step's CPU goes in the server process, part by part, with the pool's coalescing off
(one item per write to a worker: the pool before issue 42) and on, side by side in one process.

The real app (``envserver.app.create_app``, its pool of ``--pool-workers`` workers started by its
lifespan) is driven in process through ASGI, with no HTTP client or socket in front, so what is
timed is the server's own work: the event loop thread's CPU per call (``time.thread_time``),
``--in-flight`` calls at a time. The parts that use the pool are measured in ``--slices``
alternating slices, coalescing off then on (the pool's ``coalesce_item_s`` set to 0 and to
``--coalesce-ms``, same workers), so the machine's load moves both alike; each is the median
of its slices, and the ratio the median of the per-slice-pair ratios. Parts:

- ``GET /healthz``: routing, middleware and a small reply (the framework's floor);
- ``step, whole``: a ``math`` step with a wrong answer through the app (its direct path,
  ``envserver.direct``);
- ``step, FastAPI``: the same step through FastAPI's router and endpoint (sent as
  ``application/vnd.envserver+json``, a JSON type the direct path leaves to FastAPI);
- ``service.step``: the same step called on the service (no routing, no body validation);
- ``pool hop``: the step's call through the pool alone (the loop's side: pickling, the socket
  both ways, the wake-up, unpickling), and ``worker CPU``: the pool workers' CPU per call (from
  ``/proc``) less the step's own work (``env.step`` timed here, ``step's own work``);
- ``body validation``: parsing the body and validating ``StepRequest``;
- ``token open + issue``: the state token opened and the next one sealed;
- ``reply``: ``StepResponse`` built and serialised;
- ``metrics``: what a step records (status, reward, response sketch, latency, request).

    .venv/bin/python -m benchmarks.hot_path [--slices 10] [--calls 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import uvloop

from envserver import worker
from envserver.app import create_app
from envserver.config import Settings
from envserver.executor import Call
from envserver.limits import parse_body
from envserver.wire import StepRequest, StepResponse

WRONG = "\\boxed{-1}"
STEP = "/v1/envs/math/step"
POOLED = ("step, whole", "step, FastAPI", "service.step", "pool hop", "worker CPU")
FASTAPI_JSON = b"application/vnd.envserver+json"


def _scope(method: str, path: str, body: bytes, content_type: bytes) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1"), (b"content-type", content_type)]
    headers.append((b"content-length", str(len(body)).encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
        "state": {},
    }


async def _call(
    app: Any, method: str, path: str, body: bytes = b"", content_type: bytes = b"application/json"
) -> bytes:
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # no disconnect: the call answers first
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(_scope(method, path, body, content_type), receive, send)
    if sent[0]["status"] != 200:
        raise RuntimeError(f"{path}: {sent}")
    reply: bytes = sent[1]["body"]
    return reply


async def _per_call(make: Callable[[], Awaitable[Any]], calls: int, in_flight: int) -> float:
    """The loop thread's CPU per call (µs) of ``calls`` calls, ``in_flight`` at a time."""

    async def client(count: int) -> None:
        for _ in range(count):
            await make()

    await asyncio.gather(*(client(4) for _ in range(in_flight)))  # warm
    each = max(1, calls // in_flight)
    started = time.thread_time()
    await asyncio.gather(*(client(each) for _ in range(in_flight)))
    return (time.thread_time() - started) / (each * in_flight) * 1e6


def _loop(fn: Callable[[], object], calls: int) -> float:
    """CPU per call (µs) of ``fn`` called ``calls`` times in a row."""
    fn()
    started = time.thread_time()
    for _ in range(calls):
        fn()
    return (time.thread_time() - started) / calls * 1e6


def _children_cpu() -> float:
    total = 0.0
    for pid in _descendants(os.getpid()):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _descendants(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():  # a thread's children are listed under it
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *_descendants(child)]
    return found


async def _measure(args: argparse.Namespace) -> tuple[dict[str, float], dict[str, list[float]]]:
    """The parts that do not use the pool, and the slices (off, on, off, on, ...) of those
    that do."""
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp(prefix="envserver-hot-path-")),
        server_processes=1,
        pool_workers=args.pool_workers,
        sandbox_backend="none",
        warm_up=False,
    )
    app = create_app(settings)
    alone: dict[str, float] = {}
    sliced: dict[str, list[float]] = {part: [] for part in POOLED}
    async with app.router.lifespan_context(app):
        service = app.state.service
        executor = service.executor
        reset_body = orjson.dumps({"seed": 7, "options": {"difficulty": "easy"}})
        token = orjson.loads(await _call(app, "POST", "/v1/envs/math/reset", reset_body))["state"]
        body = orjson.dumps({"state": token, "action": WRONG})
        request = StepRequest.model_validate_json(body)
        env = service.env("math")
        state = service.tokens.open(token, env.spec.id, env.spec.version)
        stepped = env.step(state, WRONG)
        score = stepped.score
        metrics = service.metrics
        route = "/v1/envs/{env_id:path}/step"

        def hop() -> Awaitable[object]:
            pending: Awaitable[object] = executor.run(
                [Call(worker.step, ("math", state, WRONG), 30)]
            )
            return pending

        def tokens() -> None:
            service.tokens.open(token, env.spec.id, env.spec.version)
            service.tokens.issue(env.spec.id, env.spec.version, stepped.state)

        def reply() -> None:
            StepResponse(
                status=score.status,
                detail=score.detail,
                observation=stepped.observation,
                reward=score.reward,
                components=score.components,
                terminated=stepped.terminated,
                truncated=stepped.truncated,
                state=token,
                info=stepped.info,
            ).model_dump_json()

        def record() -> None:
            metrics.scored("step", "math", score.status, score.reward, WRONG)
            metrics.item_seconds.labels("step", "math").observe(0.001)
            metrics.requests.labels("POST", route, "200", "anonymous").inc()
            metrics.request_seconds.labels("POST", route).observe(0.001)

        calls, in_flight = args.calls, args.in_flight
        alone["GET /healthz"] = await _per_call(
            lambda: _call(app, "GET", "/healthz"), calls, in_flight
        )
        alone["body validation"] = _loop(
            lambda: StepRequest.model_validate(parse_body(body)), calls
        )
        alone["token open + issue"] = _loop(tokens, calls)
        alone["reply"] = _loop(reply, calls)
        alone["metrics"] = _loop(record, calls)
        on = args.coalesce_ms / 1000
        for _ in range(args.slices):
            for item_s in (0.0, on):
                executor.coalesce_item_s = item_s
                sliced["step, whole"].append(
                    await _per_call(lambda: _call(app, "POST", STEP, body), calls, in_flight)
                )
                sliced["step, FastAPI"].append(
                    await _per_call(
                        lambda: _call(app, "POST", STEP, body, FASTAPI_JSON), calls, in_flight
                    )
                )
                sliced["service.step"].append(
                    await _per_call(
                        lambda: service.step("math", [request], False), calls, in_flight
                    )
                )
                workers_before = _children_cpu()
                sliced["pool hop"].append(await _per_call(hop, calls, in_flight))
                sliced["worker CPU"].append((_children_cpu() - workers_before) / calls * 1e6)
        work = _loop(lambda: env.step(state, WRONG), max(100, calls // 10))
        alone["step's own work"] = work
        sliced["worker CPU"] = [cpu - work for cpu in sliced["worker CPU"]]
        alone["coalesced"] = float(executor.coalesced)
    return alone, sliced


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--slices", type=int, default=10, help="off/on pairs of each pooled part")
    parser.add_argument("--calls", type=int, default=1000, help="calls per part and slice")
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--pool-workers", type=int, default=2)
    parser.add_argument("--coalesce-ms", type=float, default=2.0, help="the 'on' side's limit")
    args = parser.parse_args()
    alone, sliced = uvloop.run(_measure(args))
    print(
        f"server process CPU per call, µs (the loop thread; {args.in_flight} in flight, "
        f"{args.pool_workers} pool workers; pooled parts: medians of {args.slices} slices each "
        f"way, off and on in turn; load average {os.getloadavg()[0]:.1f})"
    )
    print(f"{'part':<22}{'coalescing off':>16}{'on':>8}{'on/off':>8}  on/off per slice")
    for part in (*POOLED, *alone):
        if part in POOLED:
            off, on = sliced[part][0::2], sliced[part][1::2]
            ratios = [b / a for a, b in zip(off, on, strict=True) if a > 0]
            print(
                f"{part:<22}{statistics.median(off):>16.1f}{statistics.median(on):>8.1f}"
                f"{statistics.median(ratios):>8.2f}  " + " ".join(f"{r:.2f}" for r in ratios)
            )
        elif part != "coalesced":
            print(f"{part:<22}{alone[part]:>16.1f}")
    direct = [
        a / b for a, b in zip(sliced["step, whole"], sliced["step, FastAPI"], strict=True) if b
    ]
    print(
        f"direct path / FastAPI, a whole step: {statistics.median(direct):.2f} (median of "
        "slices, both settings)"
    )
    print(f"items coalesced (on): {int(alone['coalesced'])}")


if __name__ == "__main__":
    main()
