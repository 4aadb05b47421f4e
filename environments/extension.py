"""The one way a family extends the service beyond its environments: its declaration's contents
carry an ``Extension`` (``Contents(extension=...)``, see ``environments.family``), and the core
does the rest.

- **settings**: ``settings_model`` (a ``FamilySettings``, which reads the family's own
  ``ENVSERVER_<FAMILY>_*`` variables); the core builds it with its own ``data_dir``.
- **resources** (a store, a connection pool): ``open`` makes them from the settings in each
  process that serves (the server's lifespan, each pool worker's start: after any fork, never at
  import); the core calls their ``close`` when the process stops serving.
- **dynamic environments**: ``dynamic(resources)``, environments that come and go while the
  server runs (``DynamicEnvironments``).
- **routes**: ``routers()``, FastAPI routers mounted next to the core's; a route reaches the
  resources through the dependency ``injected(Type)``, and lists the error statuses it answers
  with ``answers(...)`` (the core documents them as problem documents).
- **job queues**: ``queues(resources)``, long jobs a route enqueues in the family's store and
  workers take from it (EvoEnv's admissions, ``JobQueue``); the core starts them in each server
  process once it serves (never in pool workers), stops them before the resources close, and
  shows their ``state()`` in ``/readyz`` and ``/metrics``.

The family holds no state of its own between calls: whatever lives as long as a process lives
in its resources, which the core owns.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from fastapi import APIRouter, Request
from pydantic_settings import BaseSettings, SettingsConfigDict

from environments.base import DynamicEnvironments

RESOURCES_STATE = "family_resources"
"""The attribute of ``app.state`` under which the core keeps the opened resources (a list)."""


class FamilySettings(BaseSettings):
    """The base of a family's settings. ``data_dir`` is the server's (the core passes it); the
    family's own fields come from ``ENVSERVER_<FAMILY>_<FIELD>`` (set ``env_prefix``)."""

    model_config = SettingsConfigDict(frozen=True, extra="ignore")

    data_dir: Path


class Resources(Protocol):
    """What a family opens per process; ``close`` releases it (engines, connections)."""

    def close(self) -> None:
        """Release what was opened."""
        ...


@dataclass(frozen=True)
class QueueState:
    """What a job queue holds now, for ``/readyz`` and ``/metrics``: ``queued`` jobs wait for a
    worker and ``running`` ones are held by one (on any replica sharing the store), the oldest
    of them ``oldest_s`` old; the queue takes at most ``limit`` (429 beyond); ``workers`` of this
    process take jobs from it, ``busy`` of them now. ``problem`` says why the queue could not be
    read (the store is down), with the counts then 0."""

    name: str
    queued: int
    running: int
    oldest_s: float
    limit: int
    workers: int
    busy: int
    problem: str = ""


class JobQueue(Protocol):
    """A family's queue of long jobs (see the module docstring). ``start`` and ``stop`` are
    called once each, in a server process; ``state`` from any thread, at any time."""

    def start(self) -> None:
        """Start taking jobs (threads; never at import or at ``open``)."""
        ...

    def stop(self) -> None:
        """Stop taking jobs and hand back those held, so that another worker takes them."""
        ...

    def state(self) -> QueueState:
        """What the queue holds now; never raises (``problem`` says what failed)."""
        ...


SettingsT = TypeVar("SettingsT", bound=FamilySettings)
ResourcesT = TypeVar("ResourcesT", bound=Resources)


class Extension(ABC, Generic[SettingsT, ResourcesT]):
    """A family's extension of the service (see the module's docstring)."""

    settings_model: type[SettingsT]

    @abstractmethod
    def open(self, settings: SettingsT) -> ResourcesT:
        """This process's resources, from the settings the core built."""

    def dynamic(self, resources: ResourcesT) -> DynamicEnvironments | None:
        """The environments the family adds and removes while serving (none by default)."""
        del resources
        return None

    def routers(self) -> Sequence[APIRouter]:
        """The family's HTTP routes (none by default)."""
        return ()

    def queues(self, resources: ResourcesT) -> Sequence[JobQueue]:
        """The family's job queues, worked in each server process (none by default)."""
        del resources
        return ()


R = TypeVar("R")


def injected(kind: type[R]) -> Callable[[Request], R]:
    """A FastAPI dependency giving a route this process's opened resources of type ``kind``;
    a route of a family whose resources are not open here fails with a ``RuntimeError`` that
    names the type (a bug of the app's set-up, answered as a 500)."""

    def resources(request: Request) -> R:
        opened: list[Any] = getattr(request.app.state, RESOURCES_STATE, [])
        for item in opened:
            if isinstance(item, kind):
                return item
        held = ", ".join(type(item).__name__ for item in opened) or "none"
        raise RuntimeError(
            f"no {kind.__name__} is open in this process (the resources open: {held}); the "
            "core opens a family's resources where it serves (Registry.open)"
        )

    return resources


def answers(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """A family route's ``responses``: the error statuses it answers (the core fills in their
    problem-document schema when it mounts the route)."""
    return {status: {} for status in statuses}
