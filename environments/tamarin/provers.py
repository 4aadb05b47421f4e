"""Which backend serves a theory, and which theories this server offers.

Configured through the environment (read once per worker process):

- ``ENVSERVER_TAMARIN_BACKEND``: ``auto`` (default), ``interactive``, ``json-api`` or ``replay``.
  ``auto`` takes the research fork ``tamarin-prover-json`` when it is on PATH, else
  ``tamarin-prover`` (or ``$TAMARIN_PROVER``) through its interactive server, else the replay
  of recorded theories.
- ``ENVSERVER_TAMARIN_RECORDINGS``: more recorded real-Tamarin data for the replay backend (files
  or folders, separated by ``:``), added to the recordings that ship in ``data/`` (recordings of
  the same theory merge).
- ``ENVSERVER_TAMARIN_THEORIES``: more ``.spthy`` theories to offer (files or folders), e.g.
  Tamarin's own examples or the paper's case studies; the id of a theory is its file's stem.
"""

from __future__ import annotations

import atexit
import os
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

from environments.tamarin.backend import ProofBackend
from environments.tamarin.model import ProverUnavailable
from environments.tamarin.replay import ReplayBackend
from verifiers.base import Unavailable
from verifiers.tamarin.prover import find_prover, locate_prover
from verifiers.tamarin.theory import Theory, TheoryError, parse_theory

BackendChoice = Literal["auto", "interactive", "json-api", "replay"]
SHIPPED = Path(__file__).with_name("theories")
RECORDINGS = files("environments.tamarin").joinpath("data")
"""The recorded real-Tamarin runs that ship with the package (GPL-3.0 data: data/NOTICE.md)."""
RECORDINGS_ENV = "ENVSERVER_TAMARIN_RECORDINGS"
INSTALL_HINT = "install Tamarin (see environments/tamarin/README.md) or set TAMARIN_PROVER"


def _paths(variable: str) -> list[Path]:
    return [Path(p) for p in os.environ.get(variable, "").split(os.pathsep) if p]


def _theory_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        files.extend(sorted(path.glob("*.spthy")) if path.is_dir() else [path])
    return files


@dataclass
class Provers:
    """The backends of this process, started on first use and stopped at exit."""

    choice: BackendChoice = "auto"
    recordings: list[Traversable] = field(default_factory=list)
    theory_paths: list[Path] = field(default_factory=list)

    @classmethod
    def from_environment(cls) -> Provers:
        """The configuration in ``os.environ``; raises ValueError on an unknown backend."""
        choice = os.environ.get("ENVSERVER_TAMARIN_BACKEND", "auto")
        if choice not in ("auto", "interactive", "json-api", "replay"):
            raise ValueError(f"ENVSERVER_TAMARIN_BACKEND={choice!r} is not a backend")
        return cls(
            choice,  # type: ignore[arg-type] # checked above
            [RECORDINGS, *_paths(RECORDINGS_ENV)],
            [SHIPPED, *_paths("ENVSERVER_TAMARIN_THEORIES")],
        )

    @cached_property
    def replay(self) -> ReplayBackend:
        """The replay backend over the configured recordings (empty when none)."""
        return ReplayBackend(self.recordings)

    @cached_property
    def live(self) -> ProofBackend | None:
        """The backend over a prover binary, if the configuration and the machine allow one."""
        backend: ProofBackend | None = None
        if self.choice in ("auto", "json-api") and find_prover("tamarin-prover-json"):
            from environments.tamarin.jsonapi import JsonApiBackend  # noqa: PLC0415

            backend = JsonApiBackend()
        elif self.choice in ("auto", "interactive") and find_prover():
            from environments.tamarin.interactive import InteractiveBackend  # noqa: PLC0415

            backend = InteractiveBackend()
        if backend is None and self.choice in ("interactive", "json-api"):
            raise ProverUnavailable(f"backend {self.choice} needs a prover binary")
        if backend is not None:
            atexit.register(backend.close)
        return backend

    def unavailable(self) -> Unavailable | None:
        """Why this process can serve no theory at all, and the fix; None when it can serve.

        Cheap (no recording is read, nothing is run: the family's import asks, in the pool's
        fork server): the packaged recordings always serve by replay, so only a backend choice
        that demands a binary the machine lacks leaves nothing to serve.
        """
        if self.choice in ("interactive", "json-api"):
            binary = "tamarin-prover-json" if self.choice == "json-api" else None
            if locate_prover(binary) is None:
                return Unavailable(
                    f"ENVSERVER_TAMARIN_BACKEND={self.choice} needs the "
                    f"{binary or 'tamarin-prover'} binary, which is not on PATH",
                    f"put {binary or 'tamarin-prover (or $TAMARIN_PROVER)'} on PATH, or unset "
                    "ENVSERVER_TAMARIN_BACKEND to replay the packaged recordings",
                )
        return None

    def backend(self, theory: Theory) -> ProofBackend:
        """The backend that serves ``theory``; raises ProverUnavailable (``INSTALL_HINT`` is
        what to do)."""
        live = None if self.choice == "replay" else self.live
        if live is not None:
            return live
        if self.replay.serves(theory):
            return self.replay
        recorded = ", ".join(sorted(self.replay.recorded)) or "none are configured"
        raise ProverUnavailable(
            f"no Tamarin prover on this server, and theory {theory.name} is not one it "
            f"recorded, byte for byte (recorded theories: {recorded}); any other text needs "
            "the prover"
        )

    @cached_property
    def theories(self) -> dict[str, Theory]:
        """The theories on offer by id: recorded ones (replayable anywhere), shipped ones and
        configured ones. A file that is not a theory is skipped, not fatal."""
        found: dict[str, Theory] = dict(self.replay.theories())
        for file in _theory_files(self.theory_paths):
            try:
                found.setdefault(file.stem, parse_theory(file.read_text(), trusted=True))
            except (OSError, UnicodeDecodeError, TheoryError):
                continue
        return found

    @cached_property
    def served(self) -> list[str]:
        """The ids of the theories this process can serve, sorted: all of them with a live
        prover, the recorded ones without (the others' resets answer 503)."""
        served = []
        for theory_id, theory in sorted(self.theories.items()):
            try:
                self.backend(theory)
            except ProverUnavailable:
                continue
            served.append(theory_id)
        return served

    def servable(self) -> list[tuple[str, str]]:
        """``(theory id, lemma)`` pairs this process can serve, in a stable order: every lemma of
        every theory with a live prover, only the recorded lemmas without one."""
        pairs: list[tuple[str, str]] = []
        for theory_id in self.served:
            theory = self.theories[theory_id]
            pairs.extend((theory_id, lemma) for lemma in self.backend(theory).lemmas(theory))
        return pairs


@cache
def provers() -> Provers:
    """This process's provers; raises ValueError on an unknown ENVSERVER_TAMARIN_BACKEND."""
    return Provers.from_environment()


def unavailable() -> Unavailable | None:
    """Why this server can serve no ``tamarin/proof`` episode, and the fix; None when it can."""
    try:
        return provers().unavailable()
    except ValueError as exc:
        return Unavailable(
            str(exc), "set ENVSERVER_TAMARIN_BACKEND to auto, interactive, json-api or replay"
        )
