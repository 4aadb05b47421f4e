"""The real WebShop data files, fed to the same engine as the synthetic catalogue.

A directory holding ``items_shuffle.json`` (or ``items_shuffle_1000.json``), ``items_ins_v2.json``
(or ``items_ins_v2_1000.json``) and optionally ``items_human_ins.json``, as ``setup.sh``
downloads them. The products are held in memory, as the original holds them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from environments.webshop.catalogue import Product, to_product


def _first(directory: Path, names: tuple[str, ...]) -> Path | None:
    return next((directory / n for n in names if (directory / n).is_file()), None)


class FileCatalogue:
    """Products from the original's JSON files; duplicate ASINs keep the first record."""

    def __init__(self, directory: Path, num_products: int | None = None) -> None:
        items = _first(directory, ("items_shuffle.json", "items_shuffle_1000.json"))
        if items is None:
            raise FileNotFoundError(f"no items_shuffle*.json in {directory}")
        ins_path = _first(directory, ("items_ins_v2.json", "items_ins_v2_1000.json"))
        human_path = _first(directory, ("items_human_ins.json",))
        raw_items: list[dict[str, Any]] = json.loads(items.read_text())
        instructions: dict[str, Any] = json.loads(ins_path.read_text()) if ins_path else {}
        self._human: dict[str, list[dict[str, Any]]] | None = (
            json.loads(human_path.read_text()) if human_path else None
        )
        self._products: dict[str, Product] = {}
        for raw in raw_items[:num_products]:
            product = to_product(raw, instructions.get(str(raw.get("asin"))))
            if product is not None and product.asin not in self._products:
                self._products[product.asin] = product
        self._order = list(self._products)
        digest = hashlib.sha256()
        for path in (items, ins_path, human_path):
            if path is not None:
                stat = path.stat()
                digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
        digest.update(str(num_products).encode())
        self._fingerprint = f"files-{digest.hexdigest()[:16]}"

    @property
    def fingerprint(self) -> str:
        """A digest of the files' names, sizes and modification times."""
        return self._fingerprint

    def __len__(self) -> int:
        return len(self._order)

    def product(self, asin: str) -> Product | None:
        """The product with this ASIN (case-insensitive), or None."""
        return self._products.get(asin.upper())

    def products(self) -> Iterator[Product]:
        """Products in file order."""
        return iter(self._products.values())

    def asin_at(self, index: int) -> str:
        """The ASIN of document ``index``."""
        return self._order[index]

    def human_instructions(self) -> dict[str, list[dict[str, Any]]] | None:
        """``items_human_ins.json`` when present."""
        return self._human
