"""Golden verdicts (``tests/golden_verdicts.py``): every family's recorded answers score exactly as
recorded while their scorer's version is the recorded one; a verdict that changes needs a new
version, and a new version needs a recording in which a verdict changed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clients.http import EnvServerClient
from envserver.families import declared
from tests import golden_verdicts
from tests.golden_verdicts import GoldenCase, RecordingRefused, Scorer, Verdict, load, record

MIN_CASES = 3


@pytest.fixture(scope="module")
def judge(base_url: str) -> Iterator[Scorer]:
    with EnvServerClient(base_url) as client:
        yield Scorer(client)


CASES = [
    (family, case.name) for family in golden_verdicts.families() for case in load(family).cases
]


def test_every_family_has_golden_cases() -> None:
    families = {family.name for family in declared()}
    assert set(golden_verdicts.families()) == families, (
        "every declared family keeps golden verdicts in tests/golden/verdicts/<family>.json"
    )
    for family in families:
        assert len(load(family).cases) >= MIN_CASES, family


@pytest.mark.parametrize(("family", "name"), CASES, ids=[f"{f}: {n}" for f, n in CASES])
def test_a_verdict_changes_only_with_its_scorer_version(
    judge: Scorer, family: str, name: str
) -> None:
    case = next(case for case in load(family).cases if case.name == name)
    recorded = case.verdict
    assert recorded is not None, f"no verdict: python -m tests.golden_verdicts {family}"
    try:
        now = judge.verdict(case)
    except Exception as exc:
        why = judge.unavailable(exc)
        if why is None:
            raise
        pytest.skip(f"{recorded.scorer} cannot score here: {why}")
    if now.scorer != recorded.scorer:
        pytest.fail(
            f"recorded under {recorded.scorer}, scored by {now.scorer} now: record the golden "
            f"verdicts again (python -m tests.golden_verdicts {family})"
        )
    assert now == recorded, (
        f"the verdict changed while the scorer is still {now.scorer}: bump its version (and "
        f"record again) if the change is meant, else it is a regression"
    )


# --- the recorder's rules, on a golden file of one math case ------------------------------------

EXPERT = GoldenCase(name="expert", verifier="math", reference="42", response="\\boxed{42}")


@pytest.fixture
def one_case(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(golden_verdicts, "FOLDER", tmp_path)
    return tmp_path / "math.json"


def _write(path: Path, verdict: Verdict | None) -> None:
    case = EXPERT.model_copy(update={"verdict": verdict})
    golden = golden_verdicts.GoldenFile(family="math", cases=[case])
    path.write_text(golden.model_dump_json(indent=2))


def test_a_new_case_is_recorded_as_it_scores(judge: Scorer, one_case: Path) -> None:
    _write(one_case, None)
    (change,) = record("math", judge)
    verdict = load("math").cases[0].verdict
    assert verdict is not None and (verdict.status, verdict.reward) == ("ok", 1.0)
    assert verdict.scorer.startswith("math@") and "expert" in change
    assert record("math", judge) == []  # recorded: nothing changes


def test_a_changed_verdict_under_the_same_version_is_refused(judge: Scorer, one_case: Path) -> None:
    now = judge.verdict(EXPERT)
    _write(one_case, now.model_copy(update={"reward": 0.0, "components": {"correct": 0.0}}))
    before = one_case.read_text()
    with pytest.raises(RecordingRefused, match=f"still {now.scorer}: bump the version"):
        record("math", judge)
    assert one_case.read_text() == before


def test_a_new_version_that_changes_no_verdict_is_refused(judge: Scorer, one_case: Path) -> None:
    now = judge.verdict(EXPERT)
    _write(one_case, now.model_copy(update={"scorer": "math@0"}))
    with pytest.raises(RecordingRefused, match="no golden verdict changed"):
        record("math", judge)


def test_a_new_version_that_changes_a_verdict_is_recorded(judge: Scorer, one_case: Path) -> None:
    now = judge.verdict(EXPERT)
    _write(one_case, now.model_copy(update={"scorer": "math@0", "reward": 0.0}))
    (change,) = record("math", judge)
    assert "math@0" in change and load("math").cases[0].verdict == now


def test_a_case_that_does_not_score_is_refused(judge: Scorer, one_case: Path) -> None:
    # A reference math cannot read is the data's fault: status error, never a golden verdict.
    case = EXPERT.model_copy(update={"reference": ""})
    golden = golden_verdicts.GoldenFile(family="math", cases=[case])
    one_case.write_text(golden.model_dump_json())
    with pytest.raises(RecordingRefused, match="did not score"):
        record("math", judge)
