"""Golden verdicts: a handful of answers per family, each with the verdict it got (status, reward,
components, metrics) and who gave it (the scorer's ``name@version``), in
``tests/golden/verdicts/<family>.json``.

A verdict may change only with its scorer's version: ``tests/test_golden_verdicts.py`` fails when
a case's verdict differs from the recorded one while its scorer's version is the same, and when
the version changed but the file was not recorded again. Recording (``python -m
tests.golden_verdicts [FAMILY ...]``) keeps the same rule from the other side: it refuses to
record a changed verdict under an unchanged version (bump the version), and a new version that
changes no recorded verdict (add a case that shows what the new version changes), so every
version bump is justified by a verdict that changed. A case without a verdict (just added) is
recorded as it scores. A verdict that is no score (``timeout``, ``error``) is never recorded: a
golden case must score the same on any machine.

A case is scored as the red-team suites' cases are over HTTP (``clients.audit.OverHttp``: a
verifier with a reference, a single-turn task id, or an episode's actions, whose last step's
verdict is recorded) by a live server on loopback, and its scorer is the one the server stamps on
the result: what is checked is what a trainer gets.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clients.audit import OverHttp
from clients.http import EnvServerClient
from envserver.redteam import Case
from envserver.wire import StepResponse, VerifyResult
from tests.conftest import make_server

FOLDER = Path(__file__).parent / "golden" / "verdicts"
UNSCORED = ("timeout", "error")


class Verdict(BaseModel):
    """What scoring a case gave, and who gave it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scorer: str
    status: str
    reward: float | None
    components: dict[str, float] = Field(default_factory=dict)
    metrics: dict[str, float] = Field(default_factory=dict)

    def same(self, other: Verdict) -> bool:
        """Whether the two verdicts agree (the scorer aside)."""
        return self.model_dump(exclude={"scorer"}) == other.model_dump(exclude={"scorer"})


class GoldenCase(BaseModel):
    """An answer and where it is scored (a red-team case's fields: ``envserver.redteam.Case``),
    and its recorded verdict (None until recorded)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    task_id: str | None = None
    verifier: str | None = None
    reference: Any = None
    options: dict[str, Any] | None = None
    env: str | None = None
    seed: int | None = None
    actions: list[str] | None = None
    response: str | None = None
    verdict: Verdict | None = None

    def probe(self) -> Case:
        """The case as the red-team mechanism scores it (it checks the fields go together)."""
        fields = self.model_dump(exclude={"verdict"}, exclude_none=True)
        return Case.model_validate({**fields, "why": "golden", "expect": "below_full"})


class GoldenFile(BaseModel):
    """One family's golden cases."""

    model_config = ConfigDict(extra="forbid")

    family: str
    cases: list[GoldenCase] = Field(min_length=1)


def path_of(family: str) -> Path:
    """Where ``family``'s golden cases are kept."""
    return FOLDER / f"{family}.json"


def load(family: str) -> GoldenFile:
    """``family``'s golden file."""
    return GoldenFile.model_validate_json(path_of(family).read_text(encoding="utf-8"))


def families() -> list[str]:
    """Every family with a golden file."""
    return sorted(path.stem for path in FOLDER.glob("*.json"))


@dataclass
class Scorer:
    """Scores golden cases on the server ``client`` talks to."""

    client: EnvServerClient

    def __post_init__(self) -> None:
        self.target = OverHttp(self.client)

    def unavailable(self, error: Exception) -> str | None:
        """Why ``error`` means the case's scorer is not served there (skip it), or None."""
        return self.target.unavailable(error)

    def verdict(self, case: GoldenCase) -> Verdict:
        """Score ``case`` now."""
        probe = case.probe()
        result: VerifyResult | StepResponse
        if probe.task_id is not None:
            result = self.target.score_task(probe.task_id, str(probe.response))
        elif probe.verifier is not None:
            options = dict(probe.options or {})
            result = self.target.score(
                probe.verifier, probe.reference, options, str(probe.response)
            )
        else:
            assert probe.env is not None and probe.seed is not None and probe.actions
            handle: str | None = self.target.reset(probe.env, probe.seed, dict(probe.options or {}))
            for action in probe.actions:
                handle, result, ended = self.target.step(probe.env, handle, action)
                if ended or result.status in UNSCORED:
                    break
        return Verdict(
            scorer=result.scorer,
            status=result.status,
            reward=result.reward,
            components=result.components,
            metrics=result.metrics,
        )


@contextmanager
def scorer() -> Iterator[Scorer]:
    """A ``Scorer`` on a server of its own, configured as the tests' shared one."""
    with (
        tempfile.TemporaryDirectory() as workdir,
        make_server(Path(workdir)) as server,
        EnvServerClient(server.base_url) as client,
    ):
        yield Scorer(client)


class RecordingRefused(RuntimeError):
    """A golden file would record a change the versions do not account for."""


def record(family: str, judge: Scorer) -> list[str]:
    """Score ``family``'s cases again and write their verdicts; what changed, one line each.
    Raises ``RecordingRefused`` (writing nothing) for a changed verdict under an unchanged
    version, for a new version that changes no recorded verdict, and for a case that does not
    score (timeout, error)."""
    golden = load(family)
    changes: list[str] = []
    bumped: dict[str, str] = {}  # new scorer -> old, for scorers whose version changed
    changed_under: set[str] = set()  # new scorers under which a recorded verdict changed
    for case in golden.cases:
        try:
            now = judge.verdict(case)
        except Exception as exc:
            if judge.unavailable(exc) is None:
                raise
            continue  # not served here: its recorded verdict stays
        if now.status in UNSCORED:
            raise RecordingRefused(f"{family}: {case.name!r} did not score ({now.status})")
        before = case.verdict
        if before is not None and not now.same(before):
            if now.scorer == before.scorer:
                raise RecordingRefused(
                    f"{family}: the verdict of {case.name!r} changed but its scorer is still "
                    f"{now.scorer}: bump the version ({before} -> {now})"
                )
            changed_under.add(now.scorer)
        if before is not None and now.scorer != before.scorer:
            bumped[now.scorer] = before.scorer
        if before is None or now != before:
            changes.append(f"{family}: {case.name}: {before} -> {now}")
        case.verdict = now
    for new, old in bumped.items():
        if new not in changed_under:
            raise RecordingRefused(
                f"{family}: {old} became {new} but no golden verdict changed: add a case that "
                "shows what the new version scores differently"
            )
    path_of(family).write_text(golden.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return changes


def main(argv: Sequence[str]) -> int:
    """Record the named families' golden verdicts (every family's without names)."""
    names = list(argv) or families()
    with scorer() as judge:
        for family in names:
            try:
                changes = record(family, judge)
            except RecordingRefused as refused:
                print(f"refused: {refused}", file=sys.stderr)
                return 1
            print("\n".join(changes) or f"{family}: unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
