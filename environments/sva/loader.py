"""FVEval's NL2SVA sets (``nl2sva_human.csv``, ``nl2sva_machine.csv``) read into served rows.

The sets ship with the package (``data/``, Apache-2.0, xz-compressed); ``ENVSERVER_NL2SVA_DATA``
may name a folder whose files replace them. Every reference is parsed and elaborated in its
testbench by the checker and scanned for tautology; rows that fail are *reported*
(``Dataset.excluded``, with the reason), never served (FVEval ships 11 illegal Machine
references and 2 tautologies, reference §1).
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

from environments.datafiles import COMPRESSIONS, READ_ERRORS, open_text
from verifiers.base import Unavailable
from verifiers.sva.api import CheckOptions, SvaError, is_tautology, parse_assertion

PACKAGED = files("environments.sva").joinpath("data")
"""FVEval's two sets as shipped (``nl2sva_<split>.csv.xz``, licence in ``data/LICENSE``)."""
DATA_ENV = "ENVSERVER_NL2SVA_DATA"
"""A folder whose ``nl2sva_human.csv`` / ``nl2sva_machine.csv`` (plain, ``.gz`` or ``.xz``)
replace the packaged sets; a split it lacks is read from the package."""
Split = Literal["human", "machine"]
SPLITS: tuple[Split, ...] = ("human", "machine")
# Generous: a scan decides what is served, so it must not depend on machine load.
SCAN_OPTIONS = CheckOptions(timeout_s=60.0)

_MACHINE_SIGNALS = tuple(f"sig_{letter}" for letter in "ABCDEFGHIJ")
_QUOTED = re.compile(r"'([A-Za-z_][A-Za-z0-9_$]*)")
csv.field_size_limit(1 << 24)


class DataUnavailable(RuntimeError):
    """The NL2SVA files are not readable."""


@dataclass(frozen=True)
class Row:
    """One served task: FVEval's fields and the signals an answer may use."""

    split: Split
    task_id: str
    design: str
    sentence: str
    reference: str
    testbench: str
    signals: tuple[str, ...] | None
    """The names an answer may use; None: any the testbench declares (Human)."""
    mentioned: tuple[str, ...]
    """The names the sentence quotes (Human) or the free signals (Machine)."""

    @property
    def name(self) -> str:
        """FVEval's task name, ``<design>_<task_id>``."""
        return f"{self.design}_{self.task_id}"


@dataclass(frozen=True)
class Excluded:
    """A row that is not served, and why (``syntax``, ``elaboration``, ``signal``, …,
    ``tautology``, ``undecided``)."""

    name: str
    reason: str
    message: str


@dataclass(frozen=True)
class Dataset:
    """The served rows of one split, in file order, and the rows left out."""

    split: Split
    rows: tuple[Row, ...]
    excluded: tuple[Excluded, ...]


def unavailable() -> Unavailable | None:
    """Why the configured data cannot be served (``ENVSERVER_NL2SVA_DATA`` names no folder), and
    the fix; None when it can. Cheap: nothing is read."""
    value = os.environ.get(DATA_ENV)
    if value and not Path(value).is_dir():
        return Unavailable(
            f"{DATA_ENV}={value} is not a folder",
            f"point {DATA_ENV} at a folder holding nl2sva_human.csv and/or nl2sva_machine.csv, "
            "or unset it to serve the packaged FVEval sets",
        )
    return None


def source(split: Split) -> Traversable:
    """The file ``split`` is read from: the configured folder's if it holds one, else the
    packaged set."""
    value = os.environ.get(DATA_ENV)
    if value:
        for compression in COMPRESSIONS:
            candidate = Path(value) / f"nl2sva_{split}.csv{compression}"
            if candidate.is_file():
                return candidate
    return PACKAGED.joinpath(f"nl2sva_{split}.csv.xz")


def mentioned_signals(split: Split, sentence: str) -> tuple[str, ...]:
    """FVEval's signal list: Machine's ``sig_A``…``sig_J``; the names a Human sentence quotes."""
    if split == "machine":
        return _MACHINE_SIGNALS
    quoted_part = sentence.split("Use the signal", 1)[-1]
    return tuple(dict.fromkeys(_QUOTED.findall(quoted_part)))


def allowed_signals(split: Split, sentence: str) -> tuple[str, ...] | None:
    """The names an answer may use. Machine: ``sig_A``…``sig_J`` (not ``clk``/``reset_``).
    Human: None, i.e. whatever the testbench declares, because 8 of FVEval's 79 references use
    a signal their sentence does not quote (``busy``, ``rd_pop``, …), so the quoted list is a
    hint, not a boundary."""
    return _MACHINE_SIGNALS if split == "machine" else None


def read_rows(path: Traversable, split: Split) -> list[Row]:
    """Every row of one CSV (plain or compressed), unchecked. Raises DataUnavailable if the file
    cannot be read or decompressed."""
    try:
        with open_text(path, newline="") as handle:
            records = list(csv.DictReader(handle))
    except READ_ERRORS as exc:
        raise DataUnavailable(f"cannot read {path}: {exc}") from None
    rows = []
    for record in records:
        sentence = record["prompt"].strip()
        testbench = record["testbench"]
        rows.append(
            Row(
                split=split,
                task_id=record["task_id"],
                design=record["design_name"],
                sentence=sentence,
                reference=record["ref_solution"].strip(),
                testbench=testbench,
                signals=allowed_signals(split, sentence),
                mentioned=mentioned_signals(split, sentence),
            )
        )
    return rows


def screen(row: Row) -> Excluded | None:
    """Why ``row`` must not be served (None: it is fine)."""
    try:
        allowed = set(row.signals) if row.signals is not None else None
        assertion = parse_assertion(row.reference, row.testbench, allowed)
    except SvaError as exc:
        return Excluded(row.name, exc.kind, " ".join(exc.message.split())[:300])
    tautology = is_tautology(assertion, SCAN_OPTIONS)
    if tautology is None:
        return Excluded(row.name, "undecided", "the tautology scan ran out of time")
    if tautology:
        return Excluded(row.name, "tautology", "the reference holds on every trace")
    return None


def load(split: Split, path: Traversable | None = None) -> Dataset:
    """The served rows of ``split`` (from ``path``, default ``source(split)``) and the excluded
    ones with reasons."""
    path = path or source(split)
    served: list[Row] = []
    excluded: list[Excluded] = []
    for row in read_rows(path, split):
        problem = screen(row)
        if problem is None:
            served.append(row)
        else:
            excluded.append(problem)
    return Dataset(split, tuple(served), tuple(excluded))


@cache
def dataset(split: Split) -> Dataset:
    """The configured split, loaded once per process (the scan takes a few seconds)."""
    return load(split)
