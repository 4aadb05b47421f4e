"""The same app as a Ray Serve application, for clusters that already run on Ray (verl, OpenRLHF).

Each replica is a Ray actor that builds the ordinary app (``create_app``) with its own worker
pool and sandbox, behind Serve's HTTP proxies; any replica serves any call because episodes live
in state tokens. The replicas' settings are the ``ENVSERVER_*`` variables of the deployment's
``runtime_env`` (its configuration: a Serve config file's ``runtime_env.env_vars``, or the
deploying process's own variables with ``envserver serve --ray``), so one ``ENVSERVER_SECRET``
reaches every replica on every node.

Placement: a replica asks Ray for as many CPUs as its pool has workers, so the scheduler puts
each new replica on a node with that many CPUs free, and the autoscaler adds replicas when the
requests in flight per replica exceed the target (Serve's measure of queue depth). CPU-heavy
checks and sandbox runs stay in the replica's own pool rather than becoming Ray tasks: that keeps
the per-item hard kill, the warm imports and the sandbox's socket that the pool relies on, and a
replica is the unit Ray places.

Entry points: ``envserver serve --ray`` (``deploy`` below), or Serve's own
``serve run envserver.ray_serve:build`` / ``serve deploy`` with a config file whose application
has ``import_path: envserver.ray_serve:build`` (``build`` reads its ``args``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from ray import serve
from ray.serve import Application, Deployment
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from envserver.app import create_app
from envserver.config import ConfigError, Settings

APP_NAME = "envserver"
log = logging.getLogger("envserver")
# Our own 429 backpressure bounds the work a replica holds; Serve's limit is only a guard well
# above it, so requests are not queued twice.
MAX_ONGOING_REQUESTS = 1024


@dataclass(frozen=True)
class Scaling:
    """How many replicas: fixed (``min_replicas == max_replicas``) or autoscaled between the two
    on ``target_ongoing_requests`` requests in flight per replica."""

    min_replicas: int = 1
    max_replicas: int = 1
    target_ongoing_requests: float = 32.0
    cpus_per_replica: float | None = None  # default: the pool's worker count

    def options(self, settings: Settings) -> dict[str, Any]:
        """The deployment's options: replica count or autoscaling, and each replica's CPUs."""
        cpus = self.cpus_per_replica
        if cpus is None:
            cpus = settings.sized(alone=True).pool_workers
        options: dict[str, Any] = {
            "ray_actor_options": {"num_cpus": cpus},
            "max_ongoing_requests": MAX_ONGOING_REQUESTS,
        }
        if self.min_replicas == self.max_replicas:
            options["num_replicas"] = self.min_replicas
        else:
            options["autoscaling_config"] = {
                "min_replicas": self.min_replicas,
                "max_replicas": self.max_replicas,
                "target_ongoing_requests": self.target_ongoing_requests,
            }
        return options


REPLICA_HEADER = "x-envserver-replica"
"""Names the replica that answered: which one serves what shows in a client's logs."""


class ReplicaHeaderMiddleware:
    """Adds ``REPLICA_HEADER`` to every HTTP response (plain ASGI: no body buffering)."""

    def __init__(self, app: ASGIApp, replica: str) -> None:
        self.app = app
        self.header = (REPLICA_HEADER.encode(), replica.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), self.header]
            await send(message)

        await self.app(scope, receive, send_with_header)


@serve.ingress()
class EnvServerReplica:
    """One replica: the ordinary app, built in the replica's process from its settings."""

    def __init__(self) -> None:
        self._app: FastAPI | None = None

    def __serve_build_asgi_app__(self) -> FastAPI:
        self._app = create_app(Settings())
        replica = serve.get_replica_context().replica_id.unique_id
        self._app.add_middleware(ReplicaHeaderMiddleware, replica=replica)
        return self._app

    def check_health(self) -> None:
        """Serve restarts a replica whose pool workers keep failing to start (what ``/healthz``
        answers 503 for)."""
        if self._app is None or not hasattr(self._app.state, "service"):
            return  # still starting: Serve waits for the constructor and the app's lifespan
        if not self._app.state.service.executor.healthy:
            raise RuntimeError("pool workers keep failing to start")


def server_variables(environ: Mapping[str, str]) -> tuple[dict[str, str], Settings]:
    """The ``ENVSERVER_*`` variables of ``environ`` (the replicas' whole configuration) and the
    settings they make, checked here where an error is seen rather than in every replica. Raises
    ConfigError when they name no shared secret (a key file generated per replica would make
    each replica refuse the others' tokens), pydantic's ValidationError for a bad value."""
    variables = {k: v for k, v in environ.items() if k.startswith("ENVSERVER_")}
    if not variables.get("ENVSERVER_SECRET"):
        raise ConfigError(
            "ENVSERVER_SECRET must be set for Ray Serve: every replica, on every node, signs "
            "and opens state tokens with it"
        )
    fields = {k.removeprefix("ENVSERVER_").lower(): v for k, v in variables.items()}
    # Validated from these variables alone: they are all a replica will have.
    return variables, Settings.model_validate(fields)


def application(environ: Mapping[str, str], scaling: Scaling) -> Application:
    """The Serve application whose replicas run with the ``ENVSERVER_*`` variables of
    ``environ``. Raises as ``server_variables`` does."""
    variables, settings = server_variables(environ)
    options = scaling.options(settings)
    # The variables travel in the deployment's runtime_env: Serve's place for a configuration
    # that every replica, on every node, receives.
    options["ray_actor_options"]["runtime_env"] = {"env_vars": variables}
    deployment: Deployment = serve.deployment(name="EnvServer", **options)(EnvServerReplica)
    return deployment.bind()


def build(args: Mapping[str, Any]) -> Application:
    """The application builder for ``serve run envserver.ray_serve:build [key=value ...]`` and
    Serve config files (``import_path: envserver.ray_serve:build``, ``args: {...}``): args
    ``replicas`` (fixed count) or ``min_replicas``/``max_replicas`` (autoscaled),
    ``target_ongoing_requests`` and ``cpus_per_replica``; settings from ``ENVSERVER_*`` here, or
    from the config file's ``runtime_env.env_vars`` (which Serve gives this process too)."""
    fixed = args.get("replicas")
    low = int(fixed or args.get("min_replicas", "1"))
    scaling = Scaling(
        min_replicas=low,
        max_replicas=int(fixed or args.get("max_replicas", str(low))),
        target_ongoing_requests=float(args.get("target_ongoing_requests", "32")),
        cpus_per_replica=float(args["cpus_per_replica"]) if "cpus_per_replica" in args else None,
    )
    return application(os.environ, scaling)


def deploy(address: str, scaling: Scaling, settings: Settings) -> str:
    """Deploy to the Ray cluster at ``address`` (``auto``: the one this machine belongs to), with
    Serve's HTTP proxies on ``settings.host:settings.port``; returns the URL once every replica is
    ready. The application keeps running in the cluster after this returns (``serve shutdown``
    stops it). Raises ConfigError as ``server_variables`` does."""
    import ray  # noqa: PLC0415 - a client of the cluster only while deploying

    app = application(os.environ, scaling)
    ray.init(address=address, log_to_driver=False)
    try:
        try:
            serve.start(http_options={"host": settings.host, "port": settings.port})
        except (ray.exceptions.RayActorError, TimeoutError) as exc:
            # Serve's controller gives a starting proxy RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S
            # (5 s by default), then kills it and starts another with a longer wait, and
            # serve.start gives up after 60 s: on a busy node it can fail although Serve is up.
            # serve.run below waits again for the proxies that are there now.
            log.warning(
                "Serve's first HTTP proxy did not start in time; waiting for the next: %s", exc
            )
        serve.run(app, name=APP_NAME, route_prefix="/")
    finally:
        ray.shutdown()
    return f"http://{settings.host}:{settings.port}"
