"""Plain Python values as JSON, with the types JSON lacks tagged: the only way values cross
between sandboxed code and the trusted side.

Encoding accepts exact built-in types only (a subclass could lie through ``__eq__`` or
``__repr__``); decoding builds fresh built-in objects from JSON, which has no references, so a
hostile payload cannot make a structure bigger than its own text. Both walk with a node budget.

Tags: ``{"$t": [...]}`` tuple, ``{"$s": [...]}`` set, ``{"$fs": [...]}`` frozenset,
``{"$b": "<base64>"}`` bytes, ``{"$f": "nan" | "inf" | "-inf"}`` non-finite float,
``{"$c": [re, im]}`` complex, ``{"$d": [[k, v], ...]}`` dict with non-string keys.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable
from typing import Any

MAX_NODES = 100_000
_SCALARS = (type(None), bool, int, str)
_NON_FINITE = ("nan", "inf", "-inf")


class NotPlainData(ValueError):
    """The value is not plain data, or the payload is malformed."""


class _Budget:
    def __init__(self, nodes: int) -> None:
        self.left, self.nodes = nodes, nodes

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise NotPlainData(f"the value has more than {self.nodes} parts")


def _float(value: float) -> Any:
    if math.isfinite(value):
        return value
    return {"$f": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def encode(value: Any, max_nodes: int = MAX_NODES) -> Any:
    """``value`` as a JSON-ready structure; raises ``NotPlainData`` for anything else."""
    budget = _Budget(max_nodes)

    def walk(item: Any) -> Any:
        budget.spend()
        kind = type(item)
        if kind in _SCALARS:
            return item
        encoder = _ENCODERS.get(kind)
        if encoder is None:
            raise NotPlainData(f"a value of type {kind.__name__} is not plain data")
        return encoder(item, walk)

    return _guarded(walk, value)


def _guarded(walk: Callable[[Any], Any], item: Any) -> Any:
    try:
        return walk(item)
    except RecursionError:
        raise NotPlainData("the value is nested too deeply") from None


def _dict(item: dict[Any, Any], walk: Callable[[Any], Any]) -> Any:
    if all(type(k) is str and not k.startswith("$") for k in item):
        return {k: walk(v) for k, v in item.items()}
    return {"$d": [[walk(k), walk(v)] for k, v in item.items()]}


_ENCODERS: dict[type, Callable[[Any, Callable[[Any], Any]], Any]] = {
    float: lambda item, _: _float(item),
    list: lambda item, walk: [walk(x) for x in item],
    tuple: lambda item, walk: {"$t": [walk(x) for x in item]},
    set: lambda item, walk: {"$s": [walk(x) for x in item]},
    frozenset: lambda item, walk: {"$fs": [walk(x) for x in item]},
    bytes: lambda item, _: {"$b": base64.b64encode(item).decode()},
    complex: lambda item, _: {"$c": [_float(item.real), _float(item.imag)]},
    dict: _dict,
}


def _number(item: Any) -> float:
    if type(item) in (int, float):
        return float(item)
    if isinstance(item, dict) and set(item) == {"$f"} and item["$f"] in _NON_FINITE:
        return float(item["$f"])
    raise NotPlainData(f"malformed number: {str(item)[:80]}")


def _complex(inner: Any, _: Callable[[Any], Any]) -> complex:
    real, imag = inner
    return complex(_number(real), _number(imag))


_DECODERS: dict[str, Callable[[Any, Callable[[Any], Any]], Any]] = {
    "$t": lambda inner, walk: tuple(walk(x) for x in inner),
    "$s": lambda inner, walk: {walk(x) for x in inner},
    "$fs": lambda inner, walk: frozenset(walk(x) for x in inner),
    "$b": lambda inner, _: base64.b64decode(inner, validate=True),
    "$f": lambda inner, _: _number({"$f": inner}),
    "$c": _complex,
    "$d": lambda inner, walk: {walk(k): walk(v) for k, v in inner},
}


def decode(data: Any, max_nodes: int = MAX_NODES) -> Any:
    """The value ``encode`` produced; raises ``NotPlainData`` on a malformed payload."""
    budget = _Budget(max_nodes)

    def walk(item: Any) -> Any:
        budget.spend()
        kind = type(item)
        if kind in _SCALARS or kind is float:
            return item
        if kind is list:
            return [walk(x) for x in item]
        if kind is not dict:
            raise NotPlainData(f"malformed value of type {kind.__name__}")
        if len(item) == 1 and next(iter(item)) in _DECODERS:
            ((tag, inner),) = item.items()
            try:
                return _DECODERS[tag](inner, walk)
            except NotPlainData:
                raise
            except (TypeError, ValueError, binascii.Error) as exc:  # unhashable, bad shape
                raise NotPlainData(f"malformed {tag} value: {exc}") from None
        if any(key.startswith("$") for key in item):
            raise NotPlainData(f"unknown tag in {sorted(item)[:3]}")
        return {key: walk(value) for key, value in item.items()}

    return _guarded(walk, data)
