"""The loaded world: a catalogue, its search index and its goals, configured once per process.

Configuration comes from ``ENVSERVER_WEBSHOP_*`` environment variables (the server's workers
inherit them), so every replica serving the same configuration serves the same shop:

``ENVSERVER_WEBSHOP_PRODUCTS``   synthetic catalogue size (default 10000)
``ENVSERVER_WEBSHOP_SEED``       synthetic catalogue seed (default 0)
``ENVSERVER_WEBSHOP_DATA``       a directory with the real ``items_*.json`` files (default: none)
``ENVSERVER_WEBSHOP_HUMAN_GOALS`` 1 (default) uses ``items_human_ins.json`` goals when present
``ENVSERVER_WEBSHOP_CACHE``      where search indexes are kept (default: ``webshop/`` in the
                                 server's data directory, ``ENVSERVER_DATA_DIR``)

Nothing is written into the installed package: an earlier default kept the index under the
checkout (``<project>/data/webshop``) whatever the server's data directory was.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from pathlib import Path
from typing import Any

from environments.webshop.bm25 import TOP_N, SearchIndex
from environments.webshop.catalogue import Catalogue, Product, SyntheticCatalogue
from environments.webshop.goals import Goal, human_goals, shuffled, split_goals, synthetic_goals
from environments.webshop.loader import FileCatalogue

DATA_DIR = "data"  # the server's default data directory (envserver.config.Settings.data_dir)


@dataclass(frozen=True)
class ShopConfig:
    """What selects the catalogue and where its index lives."""

    products: int = 10_000
    seed: int = 0
    data_dir: Path | None = None
    human_goals: bool = True
    cache_dir: Path = Path(DATA_DIR) / "webshop"

    @classmethod
    def from_environ(cls) -> ShopConfig:
        """The configuration the ``ENVSERVER_WEBSHOP_*`` variables describe."""
        env = os.environ
        data = env.get("ENVSERVER_WEBSHOP_DATA", "").strip()
        return cls(
            products=int(env.get("ENVSERVER_WEBSHOP_PRODUCTS", "10000")),
            seed=int(env.get("ENVSERVER_WEBSHOP_SEED", "0")),
            data_dir=Path(data) if data else None,
            human_goals=env.get("ENVSERVER_WEBSHOP_HUMAN_GOALS", "1") not in ("0", "false", ""),
            cache_dir=Path(
                env.get("ENVSERVER_WEBSHOP_CACHE", "")
                or Path(env.get("ENVSERVER_DATA_DIR", "") or DATA_DIR) / "webshop"
            ),
        )


class Shop:
    """Catalogue, index and goals; the index and goals are built on first use."""

    def __init__(self, config: ShopConfig) -> None:
        self.config = config
        self.catalogue: Catalogue = (
            FileCatalogue(config.data_dir)
            if config.data_dir is not None
            else SyntheticCatalogue(config.products, config.seed)
        )
        self._search = lru_cache(maxsize=2048)(self._search_uncached)

    @cached_property
    def fingerprint(self) -> str:
        """The catalogue's fingerprint and where its goals come from; states carry it (and a
        goal's index in ``goals``) so a token from another shop or goal list is refused."""
        goals = "synthetic" if self._human_instructions is None else "human"
        return f"{self.catalogue.fingerprint}/{goals}-goals"

    @cached_property
    def _human_instructions(self) -> dict[str, list[dict[str, Any]]] | None:
        """The human instructions the goals are made of, or None (synthetic goals)."""
        return self.catalogue.human_instructions() if self.config.human_goals else None

    @cached_property
    def index(self) -> SearchIndex:
        """The persisted BM25 index (built into the cache directory the first time)."""
        return SearchIndex.open(self.catalogue, self.config.cache_dir)

    @cached_property
    def goals(self) -> list[Goal]:
        """Every goal in the original's fixed shuffled order: human goals when the data has them
        and ``human_goals`` is set, else synthetic ones."""
        instructions = self._human_instructions
        if instructions is not None:
            return shuffled(human_goals(self.catalogue.products(), instructions))
        return shuffled(synthetic_goals(self.catalogue.products()))

    def split(self, name: str) -> Sequence[Goal]:
        """The goals of one split."""
        return split_goals(self.goals, name)

    def product(self, asin: str) -> Product | None:
        """The product with this ASIN, or None."""
        return self.catalogue.product(asin)

    def search(self, keywords: Sequence[str]) -> tuple[str, ...]:
        """The top-50 ASINs for ``keywords``, best first; memoised (search is deterministic)."""
        return self._search(tuple(keywords))

    def _search_uncached(self, keywords: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(self.catalogue.asin_at(i) for i in self.index.search(keywords, TOP_N))


@cache
def get_shop(config: ShopConfig | None = None) -> Shop:
    """The process's shop for ``config`` (from the environment by default)."""
    return Shop(config or ShopConfig.from_environ())
