"""Shared WebShop test set-up: a small synthetic shop whose index lives in a temporary folder."""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

from environments.webshop.family import WebShopEnv
from environments.webshop.shop import Shop, ShopConfig

TEST_PRODUCTS = 2000


@cache
def small_config() -> ShopConfig:
    """2,000 products, index in a per-process temporary folder (built once, about a second)."""
    return ShopConfig(products=TEST_PRODUCTS, cache_dir=Path(tempfile.mkdtemp(prefix="webshop-")))


@cache
def small_shop() -> Shop:
    """The test shop, loaded once per process."""
    return Shop(small_config())


@cache
def small_env() -> WebShopEnv:
    """The environment over the test shop."""
    return WebShopEnv(small_shop())


def server_env(config: ShopConfig) -> dict[str, str]:
    """The ``ENVSERVER_WEBSHOP_*`` variables that make a server serve ``config``'s shop."""
    return {
        "ENVSERVER_WEBSHOP_PRODUCTS": str(config.products),
        "ENVSERVER_WEBSHOP_SEED": str(config.seed),
        "ENVSERVER_WEBSHOP_CACHE": str(config.cache_dir),
    }
