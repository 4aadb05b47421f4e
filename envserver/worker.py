"""What runs inside the pool's worker processes: the registry's families, called by name.

Each worker builds its registry once, at its start (``attach``), from the settings the server
gave the pool: the same families and plugins as the server's, loaded after the fork. The server
process runs calls cheap enough to skip the pool (``Call.inline``) with its own (``use``).

Arguments and results cross the process boundary by pickle. Options are validated once, by the
server, where the request comes in, and cross as pydantic's own pickle state of the model; the
class is found here by environment or verifier name (a model a family makes at run time has no
importable class to pickle by reference), and the state is put back unchecked.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from multiprocessing import util
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

import sandbox
from environments.base import (
    EnvironmentInputError,
    Expandable,
    Expansion,
    ResetResult,
    SingleTurnScoring,
    StepResult,
)
from environments.renderer import Turn
from envserver.config import Settings
from envserver.registry import Registry, discover
from verifiers.score import Score

log = logging.getLogger("envserver.worker")
R = TypeVar("R", ResetResult, StepResult)
_registry: Registry | None = None
"""This worker's registry, from ``attach``."""


def attach(sandbox_socket: str | None, sandbox_reason: str, settings: Settings) -> None:
    """Every worker's initializer: point ``sandbox.default()`` at the server's sandbox (or, when
    it did not start, at one failing with ``sandbox_reason``: never a sandbox of the worker's
    own), build this worker's registry from ``settings`` and open the families' resources in it
    (closed when the worker exits)."""
    sandbox.use_server(sandbox_socket, sandbox_reason)
    registry = discover(settings.plugins)
    registry.open(settings)
    use(registry)
    # A pool worker ends through multiprocessing, which runs its finalizers but not atexit's.
    util.Finalize(registry, registry.close, exitpriority=0)


def use(registry: Registry | None) -> None:
    """Make ``registry`` (open) the one this process's calls run with: a pool worker's, or the
    server's for its inline calls while it serves (None when it stops)."""
    global _registry  # noqa: PLW0603 - the process's one registry, set where it starts serving
    _registry = registry


def _current() -> Registry:
    if _registry is None:
        raise RuntimeError("no registry serves in this process (worker.attach or worker.use)")
    return _registry


def warm_up() -> None:
    """The warm-up of the pool's first workers: load every family and run each verifier's
    example once, so the first real item does not pay for imports and first-call set-up (a
    verifier's first call may cost hundreds of milliseconds). Environments are not reset here:
    some solve an instance on reset (an exact reference solution), which would delay every
    worker start. Replacement workers skip it (see ``Executor``)."""
    for check in _current().verifiers.values():
        if check.example is not None:
            try:
                check(*check.example)
            except Exception:  # warming is best effort; the real call reports any failure
                log.exception("warming verifier %s failed", check.name)


def sent(options: BaseModel) -> dict[Any, Any]:
    """Validated ``options`` as they cross to a worker: the model's pickle state."""
    return options.__getstate__()


def received(model: type[BaseModel], state: dict[Any, Any]) -> BaseModel:
    """The options ``sent`` gave ``state`` of, as instances of ``model`` (not checked again)."""
    options = model.__new__(model)
    options.__setstate__(state)
    return options


def reset(env_id: str, seed: int, options: dict[Any, Any]) -> ResetResult:
    """``Environment.reset`` of ``env_id``; ``options`` as ``sent`` gives them."""
    env = _current().env(env_id)
    return env.reset(seed, received(env.spec.options_model, options))


def step(env_id: str, state: Any, action: str) -> StepResult:
    """``Environment.step`` of ``env_id``."""
    return _current().env(env_id).step(state, action)


def expand(env_id: str, state: Any, actions: list[str] | None) -> list[Expansion]:
    """Expand ``state`` in environment ``env_id`` (which must be Expandable)."""
    env = _current().env(env_id)
    if not isinstance(env, Expandable):
        raise EnvironmentInputError(f"{env_id} does not support expand")
    return env.expand(state, actions)


@dataclass(frozen=True)
class Drawn(Generic[R]):
    """A reset's or step's result and the context the environment's renderer computed for it
    (None: no renderer, or ``failure`` says why it raised)."""

    result: R
    context: dict[str, Any] | None
    failure: str = ""


def _drawn(env_id: str, result: R, action: str = "") -> Drawn[R]:
    # The page shows the episode in the state just returned: drawing it here, in the call that
    # computed it, spares the page a second pool call (and a second opening of its token).
    renderer = _current().renderers.get(env_id)
    if renderer is None:
        return Drawn(result, None)
    try:
        return Drawn(result, renderer.context(result.state, Turn.after(result, action)))
    except Exception as exc:  # a renderer's bug costs the page its view, never the step
        log.exception("the renderer of %s raised", env_id)
        return Drawn(result, None, f"{type(exc).__name__}: {exc}")


def drawn_reset(env_id: str, seed: int, options: dict[Any, Any]) -> Drawn[ResetResult]:
    """``reset``, and the renderer's context of the episode it starts."""
    return _drawn(env_id, reset(env_id, seed, options))


def drawn_step(env_id: str, state: Any, action: str) -> Drawn[StepResult]:
    """``step``, and the renderer's context of the episode after it."""
    return _drawn(env_id, step(env_id, state, action), action)


def verify(verifier: str, response: str, reference: Any, options: dict[Any, Any]) -> Score:
    """Score ``response`` against ``reference`` with the named verifier."""
    check = _current().verifier(verifier)
    return check(response, reference, received(check.options_model, options))


def score_task(env_id: str, seed: int, options: dict[Any, Any], response: str) -> Score:
    """Score ``response`` for the task ``(env_id, seed, options)`` names."""
    env = _current().env(env_id)
    if not isinstance(env, SingleTurnScoring):
        raise TypeError(f"{env_id} cannot score a single response")
    return env.score_response(seed, received(env.spec.options_model, options), response)


def ping() -> int:
    """A no-op round trip for readiness checks: the worker's pid."""
    return os.getpid()
