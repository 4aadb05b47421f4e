"""Dataset rows as trainers hand them over: columns with gaps.

A column that some rows leave empty reaches a reward function or an agent as ``None`` (the
``datasets`` library, which also gives every row of a struct column every key any row has) or
as ``NaN`` (pandas, parquet read through numpy). A gap is never a value: the adapters treat a
missing reference, seed or task id alike, whichever way it is spelled.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from envserver.wire import VerifyResult

BAD_REFERENCE = "bad_reference"
"""A result's ``extra["failure_kind"]`` when the service could not use the row's reference
(empty, unparsable): a data error no retry fixes (``verifiers.score``'s name, repeated here since
clients import nothing of the server but its wire schemas)."""


def missing(value: Any) -> bool:
    """Whether a dataset cell holds no value: ``None`` or a floating-point ``NaN``."""
    return value is None or (isinstance(value, float | np.floating) and math.isnan(value))


def present_options(options: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A row's ``options`` without the keys the datasets library filled with ``None`` (it gives
    every row every key any row has, so a row that set fewer options carries ``None`` for the
    rest, which the service would refuse as an invalid value)."""
    if options is None or missing(options):
        return None
    return {k: v for k, v in options.items() if not missing(v)}


def bad_reference(result: VerifyResult) -> bool:
    """Whether the service refused the row's reference (rather than failed to score)."""
    return result.extra.get("failure_kind") == BAD_REFERENCE
