"""What the family holds per process: its settings and its store (opened by the core through
``EvoFamily.open``, closed by it; see ``environments.extension``)."""

from __future__ import annotations

from dataclasses import dataclass

from environments.evo.settings import EvoSettings
from environments.evo.store import Store


@dataclass(frozen=True)
class EvoResources:
    """The settings the core built and the store at their URL."""

    settings: EvoSettings
    store: Store

    def close(self) -> None:
        """Close the store's connections."""
        self.store.close()
