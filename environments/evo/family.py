"""``EvoFamily``: the family's extension of the service (``environments.extension``): its
settings, its store opened in each serving process, the environments the store serves, its
routes, and the admission queue the core works in each server process."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter

from environments.base import DynamicEnvironments
from environments.evo.jobs import AdmissionQueue
from environments.evo.resources import EvoResources
from environments.evo.routes import router
from environments.evo.served import EvoPool
from environments.evo.settings import EvoSettings
from environments.evo.store import open_store
from environments.extension import Extension, JobQueue


class EvoFamily(Extension[EvoSettings, EvoResources]):
    """``evo/construct`` and the admitted ``evo/<name>`` from the store; ``/v1/evo/*``."""

    settings_model = EvoSettings

    def open(self, settings: EvoSettings) -> EvoResources:
        """The store at the settings' URL (made, and the seeds planted, on first open), and its
        admission queue (not started)."""
        store = open_store(settings.store_url)
        return EvoResources(settings, store, AdmissionQueue(store, settings))

    def dynamic(self, resources: EvoResources) -> DynamicEnvironments:
        """``evo/construct`` and the admitted environments, read from the store."""
        return EvoPool(resources)

    def routers(self) -> Sequence[APIRouter]:
        """Submissions, the admitted pool, retire and restore."""
        return (router,)

    def queues(self, resources: EvoResources) -> Sequence[JobQueue]:
        """The admission queue."""
        return (resources.admissions,)
