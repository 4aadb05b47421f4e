"""The FastAPI application: middleware, routes, and the pool's lifetime."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from fastapi_offline import FastAPIOffline

import envserver
from environments.extension import RESOURCES_STATE
from envserver import stats, worker
from envserver.auth import ApiKeyMiddleware
from envserver.catalogue import build_catalogue
from envserver.config import Settings
from envserver.direct import DirectCalls
from envserver.docs_pages import FAVICON_URL
from envserver.docs_pages import router as docs_pages_router
from envserver.executor import Call, Executor
from envserver.keys import ApiKey, load_api_keys, load_signing_keys
from envserver.limits import BodyLimitMiddleware
from envserver.mcp_server import mount_mcp
from envserver.metrics import Metrics, MetricsMiddleware, QueueCollector
from envserver.openenv import router as openenv_router
from envserver.openrlhf import router as openrlhf_router
from envserver.playground import page_templates, short_links
from envserver.playground import router as playground_router
from envserver.problems import install_problem_handlers, problem_responses
from envserver.registry import Registry, discover
from envserver.routes import router
from envserver.sandbox_host import SandboxHost
from envserver.sandbox_routes import router as sandbox_router
from envserver.service import Service
from envserver.stream import router as stream_router
from envserver.tokens import StateTokens

log = logging.getLogger("envserver")
DESCRIPTION = """A stateless reward service for RL with verifiable rewards.

Episodes live in sealed **state tokens** the client carries but can neither read nor alter;
single-turn tasks are named by **task ids** (`<env>@<version>/<seed>[?option=value]`) so
references never travel. Errors are `application/problem+json`. Statuses: `ok` (scored),
`invalid` (malformed response, reward 0), `timeout` and `error` (no reward: mask the item).
"""


DOCS_ASSETS = "/docs/assets"
"""Where the documentation pages' scripts and styles are served from."""


def _mount_family(app: FastAPI, router: APIRouter) -> None:
    # A family's route lists the error statuses it answers (``environments.extension.answers``);
    # they are documented as problem documents, as the core's routes document theirs.
    for route in router.routes:
        if isinstance(route, APIRoute):
            listed = [status for status, doc in route.responses.items() if not doc]
            route.responses.update(problem_responses(*map(int, listed)))
    app.include_router(router)


@asynccontextmanager
async def _queues_worked(app: FastAPI, registry: Registry, metrics: Metrics) -> AsyncIterator[None]:
    """The families' job queues (a submitted environment's admission, say) worked in this server
    process while the block runs, and shown in /readyz and /metrics. Only server processes work
    them: pool workers open the same resources and never start them. On the way out they stop
    first, so the jobs held here go back to the store while it is open."""
    queues = [
        queue
        for family, extension in registry.extensions.items()
        for queue in extension.queues(registry.resources[family])
    ]
    app.state.queues = queues
    collector = QueueCollector(queues)
    metrics.registry.register(collector)
    started = []
    try:
        for queue in queues:  # a queue that cannot start stops those started before it
            queue.start()
            started.append(queue)
        yield
    finally:
        for queue in started:
            await asyncio.to_thread(queue.stop)
        metrics.registry.unregister(collector)


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app for ``settings`` (from the environment by default). The worker pool starts with
    the app's lifespan and stops with it; it and the sandbox get this process's share of the
    workers when ``server_processes`` share the port."""
    sized = (settings or Settings()).sized(alone=True)
    settings = sized.share()
    # Secrets first: a setting that cannot be used stops the start before anything is loaded.
    tokens = StateTokens(load_signing_keys(settings), max_state_bytes=settings.max_state_bytes)
    api_keys = load_api_keys(settings)
    registry = discover(settings.plugins)
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The sandbox first: verifier workers reach it through its socket from their start.
        sandbox = SandboxHost.start(settings)
        sandbox.serve_this_process()
        # The families' resources (a store), this process's own: opened now, after any fork.
        registry.open(settings)
        setattr(app.state, RESOURCES_STATE, list(registry.resources.values()))
        worker.use(registry)  # the calls this process runs inline, without the pool
        executor = Executor(
            settings.pool_workers,
            max_queue_items=settings.max_queue_items,
            retry_after_s=settings.retry_after_s,
            coalesce_item_s=settings.coalesce_item_ms / 1000,
            initializer=functools.partial(
                worker.attach, sandbox.socket_path, sandbox.reason, settings
            ),
            warm_up=worker.warm_up if settings.warm_up else None,
            preload=registry.modules,
        )
        # A worker takes items once warm (unless settings.warm_up is off): it has imported the
        # families and run each verifier's example (NLP models, parsers, solvers: seconds), so
        # no request pays for that. The server is ready once one worker is.
        await executor.run(
            [Call(worker.ping, (), settings.max_item_timeout_s)]
            * min(settings.pool_workers, settings.max_queue_items)
        )
        app.state.service = Service(
            settings, registry, executor, tokens, metrics, stats.open_recorder(settings, metrics)
        )
        # Each family's digest of its source and data, before the first score is stamped with it.
        await asyncio.to_thread(
            app.state.service.provenance.warm, [*registry.envs, *registry.verifiers]
        )
        app.state.sandbox = sandbox
        metrics.registry.register(sandbox)
        watchdog = asyncio.create_task(executor.watch(), name="pool-watchdog")
        try:
            async with (
                mcp_sessions.run(),
                stats.recording(app.state.service.recorder),
                _queues_worked(app, registry, metrics),
            ):
                yield
        finally:
            watchdog.cancel()
            metrics.registry.unregister(sandbox)
            executor.close()
            worker.use(None)
            registry.close()
            sandbox.close()

    # The docs pages load Swagger UI and ReDoc from files installed with the package, so they
    # work where the service usually runs: a cluster with no way out to a CDN (ReDoc's page is
    # envserver.docs_pages', which also serves the site's icon).
    app = FastAPIOffline(
        title="envserver",
        version=envserver.__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        static_url=DOCS_ASSETS,
        redoc_url=None,
        favicon_url=FAVICON_URL,
        swagger_ui_parameters={"validatorUrl": None},  # no badge fetched from swagger.io
    )
    app.state.catalogue = build_catalogue(registry)
    # The whole server's processes and pool workers, and the machine they were sized for: /readyz.
    app.state.sized, app.state.sizing = sized, sized.capacity()
    for entry in app.state.catalogue.disabled:
        log.warning(
            "%s is not served here: %s; to enable it: %s", entry.name, entry.reason, entry.fix
        )
    app.state.templates = page_templates(registry)
    install_problem_handlers(app)
    app.include_router(router)
    app.include_router(stream_router)
    mcp_sessions = mount_mcp(app)
    app.include_router(openenv_router)
    app.include_router(sandbox_router)
    app.include_router(openrlhf_router)
    app.include_router(docs_pages_router)
    app.include_router(playground_router)
    app.include_router(short_links(registry))
    for family_router in registry.routers():
        _mount_family(app, family_router)
    _add_middleware(app, settings, metrics, api_keys)
    return app


def _add_middleware(
    app: FastAPI, settings: Settings, metrics: Metrics, api_keys: list[ApiKey]
) -> None:
    # Outermost first: count everything, refuse oversized bodies, check keys, then answer the
    # calls every item makes directly (each added goes outside those added before it).
    app.add_middleware(DirectCalls, routes=router.routes)
    app.add_middleware(
        ApiKeyMiddleware,
        keys=api_keys,
        protect_metrics=settings.metrics_require_auth,
    )
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(MetricsMiddleware, metrics=metrics)


def run(settings: Settings | None = None) -> None:
    """Serve with uvicorn on ``settings.host:settings.port``: one process, or
    ``settings.server_processes`` processes accepting on one socket (uvicorn's supervisor binds
    it, starts each process fresh, and replaces any that dies)."""
    import uvicorn  # noqa: PLC0415 - only the serving path needs it

    settings = settings or Settings()
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    log.info("sizing: %s", settings.sizing())
    settings = settings.sized()
    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "access_log": False,
        # Clients and proxies reuse connections; whichever side closes an idle one first must
        # be the client (clients.http expires its own after 4 s), or a request sent just as the
        # server closes is reset.
        "timeout_keep_alive": settings.keep_alive_s,
        # /v1/stream answers a frame over max_body_bytes with 413 (the socket stays up); one
        # far larger is refused by the WebSocket layer, which closes the socket (1009).
        "ws_max_size": 2 * settings.max_body_bytes,
    }
    if settings.server_processes == 1:
        uvicorn.run(create_app(settings), **options)
        return
    # Every process must sign with one key: a key file is generated here, once, before they
    # start, and they read the settings this command resolved from their environment.
    load_signing_keys(settings)
    os.environ.update(settings.environment())
    uvicorn.run(
        f"{__name__}:create_app", factory=True, workers=settings.server_processes, **options
    )
