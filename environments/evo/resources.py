"""What the family holds per process: its settings, its store and the admission queue over it
(opened by the core through ``EvoFamily.open``, closed by it; the queue's workers are started
by the core in server processes only; see ``environments.extension``)."""

from __future__ import annotations

from dataclasses import dataclass

from environments.evo.jobs import AdmissionQueue
from environments.evo.settings import EvoSettings
from environments.evo.store import Store


@dataclass(frozen=True)
class EvoResources:
    """The settings the core built, the store at their URL, and its admission queue."""

    settings: EvoSettings
    store: Store
    admissions: AdmissionQueue

    def close(self) -> None:
        """Close the store's connections."""
        self.store.close()
