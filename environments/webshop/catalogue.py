"""Products: the engine's record, and a seeded synthetic catalogue in WebShop's raw schema.

A synthetic product is a pure function of ``(seed, index)``, so a catalogue of any size (the real
one has 1.18 M products) costs no memory until a product is read, and every process regenerates
the same bytes. Products come in small clusters (same brand, type and most attributes) so search
meets near-duplicate distractors, and attributes and option values are shared across products as
on the real site. The generator emits ``items_shuffle`` and ``items_ins_v2`` records and turns them
into ``Product`` through the same conversion the real-data loader uses.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from environments.webshop import vocabulary as vocab
from verifiers.webshop.reward import CATEGORY_SEPARATOR, normalize_color

GENERATOR_VERSION = "1"
CLUSTER_SIZE = 4
_ASIN_MODULUS = 36**8
_ASIN_MULTIPLIER = 2_654_435_761  # coprime with 36: a bijection between indices and ASINs
_ASIN_INVERSE = pow(_ASIN_MULTIPLIER, -1, _ASIN_MODULUS)
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class Product:
    """A product as the original engine holds it after ``load_products``.

    ``price`` is the one price the reward uses: the listed price, or for a range a draw within it
    (the original draws with the unseeded global RNG; here the draw is seeded by the ASIN).
    """

    asin: str
    title: str
    description: str
    bullet_points: tuple[str, ...]
    price_tag: str
    pricing: tuple[float, ...]
    price: float
    product_category: str
    query: str
    category: str
    options: dict[str, list[str]]
    main_image: str
    attributes: tuple[str, ...]
    instruction: str | None
    instruction_attributes: tuple[str, ...]

    def record(self) -> dict[str, Any]:
        """The fields the reward reads, under the original's keys."""
        return {
            "asin": self.asin,
            "name": self.title,
            "Title": self.title,
            "query": self.query,
            "product_category": self.product_category,
            "Attributes": list(self.attributes),
            "BulletPoints": list(self.bullet_points),
            "Description": self.description,
        }

    def search_text(self) -> str:
        """The indexed document, as the original's ``JsonCollection`` builds it: title,
        description, first bullet and ``"name: v1, v2, and name2: ..."`` option text."""
        option_text = ", and ".join(
            f"{name}: {', '.join(values)}" for name, values in self.options.items()
        )
        first_bullet = self.bullet_points[0] if self.bullet_points else ""
        return f"{self.title} {self.description} {first_bullet} {option_text}".lower()


class Catalogue(Protocol):
    """Products by ASIN, in a fixed document order."""

    @property
    def fingerprint(self) -> str:
        """Names the content: search indexes and state tokens are keyed by it."""
        ...

    def __len__(self) -> int: ...

    def product(self, asin: str) -> Product | None:
        """The product with this (upper-case) ASIN, or None."""
        ...

    def products(self) -> Iterator[Product]:
        """Every product in document order (the search index's order)."""
        ...

    def asin_at(self, index: int) -> str:
        """The ASIN of document ``index``."""
        ...

    def human_instructions(self) -> dict[str, list[dict[str, Any]]] | None:
        """``items_human_ins`` content when the catalogue has human goals, else None."""
        ...


def parse_price(pricing: str | None) -> tuple[tuple[float, ...], str]:
    """``load_products``' price parsing: split on ``$``, keep digits and dots, the first two
    values form a range; missing -> ``([100.0], "$100.0")``."""
    if not pricing:
        return (100.0,), "$100.0"
    values = []
    for part in pricing.split("$")[1:]:
        digits = "".join(c for c in part if c.isdigit() or c == ".")
        try:
            values.append(float(digits))
        except ValueError:
            continue
    if not values:
        return (100.0,), "$100.0"
    if len(values) == 1:
        return (values[0],), f"${values[0]}"
    return (values[0], values[1]), f"${values[0]} to ${values[1]}"


def draw_price(asin: str, pricing: tuple[float, ...]) -> float:
    """The reward's price: the only value, or a uniform draw in the range seeded by the ASIN."""
    if len(pricing) == 1:
        return pricing[0]
    return random.Random(f"price/{asin}").uniform(pricing[0], pricing[1])


def to_product(raw: dict[str, Any], ins: dict[str, Any] | None) -> Product | None:
    """One ``items_shuffle`` record (plus its ``items_ins_v2`` entry) as ``load_products`` turns
    it into an engine product; None for the records the original skips (ASIN 'nan' or longer
    than 10 characters)."""
    asin = str(raw.get("asin", "nan"))
    if asin == "nan" or len(asin) > 10:
        return None
    pricing, price_tag = parse_price(raw.get("pricing"))
    options: dict[str, list[str]] = {}
    for name, contents in (raw.get("customization_options") or {}).items():
        if contents is None:
            continue
        options[name.lower()] = [
            str(c["value"]).strip().replace("/", " | ").lower() for c in contents
        ]
    bullets = raw.get("small_description") or []
    bullets = bullets if isinstance(bullets, list) else [bullets]
    ins = ins or {}
    images = raw.get("images") or [""]
    return Product(
        asin=asin,
        title=str(raw.get("name") or ""),
        description=str(raw.get("full_description") or ""),
        bullet_points=tuple(str(b) for b in bullets),
        price_tag=price_tag,
        pricing=pricing,
        price=draw_price(asin, pricing),
        product_category=str(raw.get("product_category") or ""),
        query=str(raw.get("query") or "").lower(),
        category=str(raw.get("category") or ""),
        options=options,
        main_image=str(images[0] or ""),
        attributes=tuple(ins.get("attributes") or ("DUMMY_ATTR",)),
        instruction=ins.get("instruction"),
        instruction_attributes=tuple(ins.get("instruction_attributes") or ()),
    )


def _safe_option(value: str) -> bool:
    # The original's colour normalisation turns "standard" into "tan" and "dark wash" into "ash",
    # so buying exactly the goal's option would score a miss; the generator avoids such values.
    normalized = normalize_color(value)
    return normalized == value or normalized in value.split()


_OPTION_POOLS = {
    group: tuple(v for v in values if _safe_option(v))
    for group, values in vocab.OPTION_VALUES.items()
}


def _brand(rng: random.Random) -> str:
    return "".join(rng.choice(vocab.BRAND_SYLLABLES) for _ in range(rng.choice((2, 2, 3)))).title()


def _base36(number: int) -> str:
    digits = []
    for _ in range(8):
        number, digit = divmod(number, 36)
        digits.append(_DIGITS[digit])
    return "".join(reversed(digits))


class SyntheticCatalogue:
    """``size`` generated products; ``product(asin)`` regenerates one on demand."""

    def __init__(self, size: int = 10_000, seed: int = 0) -> None:
        if not 1 <= size <= _ASIN_MODULUS:
            raise ValueError(f"catalogue size must be in [1, {_ASIN_MODULUS}]")
        self.size = size
        self.seed = seed
        self._cached = lru_cache(maxsize=4096)(self._generate)

    @property
    def fingerprint(self) -> str:
        """``synthetic-g<generator version>-s<seed>-n<size>``."""
        return f"synthetic-g{GENERATOR_VERSION}-s{self.seed}-n{self.size}"

    def __len__(self) -> int:
        return self.size

    def asin_at(self, index: int) -> str:
        """``B0`` and eight base-36 digits: a bijection of the index, so lookups need no table."""
        return "B0" + _base36((index * _ASIN_MULTIPLIER + self.seed) % _ASIN_MODULUS)

    def index_of(self, asin: str) -> int | None:
        """The document index of ``asin``, or None when it names no product here."""
        if len(asin) != 10 or not asin.startswith("B0"):
            return None
        try:
            number = int(asin[2:], 36)
        except ValueError:
            return None
        index = ((number - self.seed) * _ASIN_INVERSE) % _ASIN_MODULUS
        return index if index < self.size and self.asin_at(index) == asin else None

    def product(self, asin: str) -> Product | None:
        """The product with this ASIN (case-insensitive), or None."""
        index = self.index_of(asin.upper())
        return None if index is None else self._cached(index)

    def product_at(self, index: int) -> Product:
        """Document ``index``'s product."""
        return self._cached(index)

    def products(self) -> Iterator[Product]:
        """Every product in index order, generated as it is read."""
        for index in range(self.size):
            yield self._generate(index)

    def human_instructions(self) -> None:
        """Synthetic catalogues have synthetic goals only."""

    def _generate(self, index: int) -> Product:
        raw, ins = self.raw_item(index)
        product = to_product(raw, ins)
        assert product is not None  # generated ASINs are always 10 characters
        return product

    def raw_item(self, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """Product ``index`` as an ``items_shuffle`` record and its ``items_ins_v2`` entry."""
        cluster = random.Random(self.seed * 4_000_000_007 + 2 * (index // CLUSTER_SIZE))
        rng = random.Random(self.seed * 4_000_000_007 + 2 * index + 1)
        kind = cluster.choice(vocab.PRODUCT_TYPES)
        brand = _brand(cluster)
        pool = vocab.ATTRIBUTES[kind.category]
        base_attrs = cluster.sample(pool, cluster.randint(4, 6))
        base_price = cluster.uniform(*kind.price)
        # Siblings in a cluster share brand, type and most attributes: near-duplicate distractors.
        attrs = [a for a in base_attrs if rng.random() > 0.15]
        if rng.random() < 0.5:
            extra = rng.choice(pool)
            if extra not in attrs:
                attrs.append(extra)
        attrs = attrs or base_attrs[:1]
        descriptors = rng.sample(kind.descriptors, 2)
        title_attr = rng.choice(attrs).title() + " " if rng.random() < 0.4 else ""
        title = (
            f"{brand} {descriptors[0]} {title_attr}{kind.noun} {descriptors[1]}, "
            f"{rng.choice(vocab.TITLE_EXTRAS[kind.category])}"
        )
        options: dict[str, list[dict[str, str]]] = {}
        if rng.random() > 0.1:
            for group in kind.options:
                values = _OPTION_POOLS[group]
                chosen = sorted(rng.sample(range(len(values)), rng.randint(2, min(5, len(values)))))
                options[vocab.option_name(group)] = [
                    {"value": values[i], "image": f"https://example.invalid/{group[:3]}{i}.jpg"}
                    for i in chosen
                ]
        if "size" in options and rng.random() < 0.5:
            title += f", {options['size'][0]['value'].title()}"
        price = round(base_price * rng.uniform(0.85, 1.15), 2)
        pricing = (
            f"${price:.2f}"
            if rng.random() > 0.2
            else f"${price:.2f} - ${round(price * rng.uniform(1.1, 1.6), 2):.2f}"
        )
        fill = {
            "noun": kind.noun.lower(),
            "brand": brand,
            "attr": rng.choice(attrs),
            "attr2": rng.choice(pool),
        }
        description = " ".join(
            s.format(**fill) for s in rng.sample(vocab.DESCRIPTION_SENTENCES, rng.randint(2, 4))
        )
        bullets = [
            b.format(ATTR=rng.choice(attrs).upper(), **fill)
            for b in rng.sample(vocab.BULLET_TEMPLATES, rng.randint(3, 5))
        ]
        instruction: str | None = None
        instruction_attrs: list[str] = []
        if rng.random() < 0.55:
            instruction_attrs = rng.sample(attrs, min(len(attrs), rng.choice((1, 2, 2, 3))))
            joined = (
                " and ".join(instruction_attrs)
                if len(instruction_attrs) < 3
                else ", ".join(instruction_attrs[:-1]) + ", and " + instruction_attrs[-1]
            )
            template = rng.choice(vocab.INSTRUCTION_TEMPLATES)
            instruction = template.format(attrs=joined, noun=kind.noun.lower())
        asin = self.asin_at(index)
        raw = {
            "asin": asin,
            "name": title,
            "full_description": description,
            "small_description": bullets,
            "pricing": pricing,
            "images": [f"https://example.invalid/{asin}.jpg"],
            "product_category": f" {CATEGORY_SEPARATOR} ".join(
                (vocab.ROOTS[kind.category], *kind.path)
            ),
            "query": rng.choice(kind.queries),
            "category": kind.category,
            "customization_options": options or None,
        }
        ins = {
            "attributes": attrs,
            "instruction": instruction,
            "instruction_attributes": instruction_attrs,
        }
        return raw, ins
