"""The admission pipeline, L1-L5: every stage runs the submitted code in the sandbox, every
rejection names its stage and reason.

L1 execution   static contract (allow-listed imports, no runtime reflection, members present),
               then the probe tasks in two separate sandbox runs: within limits, deterministic
               (within a run and across processes), JSON instances
L2 contract    references score 1, junk and perturbed references score less, scores in [0, 1],
               no exception over many seeds, difficulty levels generate different tasks
L3 review      the configured reviewer (rules by default: format stated, answer not leaked)
L4 difficulty  pass rates per level from rollouts or a solver endpoint inside the band;
               admitted uncalibrated when neither is supplied (the report says so)
L5 novelty     behavioural fingerprint and normalised code against the admitted pool
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from environments.evo.calibration import Rollout, outside_band, pass_rates, solver_rollouts
from environments.evo.contract import (
    ContractError,
    Metadata,
    check_source,
    code_digest,
    normalised_digest,
)
from environments.evo.endpoints import EndpointFailure
from environments.evo.novelty import PoolEntry, duplicate_of, fingerprint
from environments.evo.program import (
    CALL_LIMIT_S,
    RUN_LIMITS,
    Call,
    CallResult,
    ProgramFailure,
    SandboxFailure,
    run_calls,
    run_calls_apart,
    score_call,
    task_call,
)
from environments.evo.review import ModelReviewer, Reviewer, Sample, answer_of, rule_review
from environments.evo.settings import EvoSettings

PROBE_SEEDS = tuple(range(8))
MANY_SEEDS = tuple(range(100, 124))
JUNK = ("", "lorem ipsum dolor", "<answer></answer>", "<answer>lorem ipsum</answer>")
SMOKE_LIMITS = RUN_LIMITS.model_copy(update={"wall_s": 2 * CALL_LIMIT_S + 1})
PERTURBED_BELOW_ONE = 0.8
"""Share of changed references that must score below 1 (a perturbation can stay valid where
many answers are right, as a subset-sum with two solutions)."""

Stage = Literal["L1", "L2", "L3", "L4", "L5"]
Outcome = Literal["admitted", "rejected", "error"]


@dataclass(frozen=True)
class StageReport:
    """What one stage checked and found; ``passed`` False ends the pipeline there."""

    stage: Stage
    name: str
    passed: bool
    detail: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Admission:
    """The pipeline's verdict. ``error`` means infrastructure failed (the sandbox, an
    endpoint): no verdict on the code. ``pass_rates`` is empty when uncalibrated."""

    outcome: Outcome
    reports: tuple[StageReport, ...]
    metadata: Metadata | None = None
    digest: str = ""
    normalised: str = ""
    fingerprint: tuple[str, ...] = ()
    pass_rates: dict[int, float] = field(default_factory=dict)

    @property
    def stage(self) -> Stage | None:
        """The stage that rejected (or failed), None when admitted."""
        return None if self.outcome == "admitted" else self.reports[-1].stage

    @property
    def reason(self) -> str:
        """Why it was rejected (or failed), "" when admitted."""
        return "" if self.outcome == "admitted" else self.reports[-1].detail


class Rejected(Exception):
    """A stage refused the submission."""

    def __init__(self, stage: Stage, name: str, detail: str) -> None:
        super().__init__(detail)
        self.report = StageReport(stage, name, False, detail)


def _perturbations(response: str) -> list[str]:
    answer = answer_of(response)
    bumped = re.sub(r"-?\d+", lambda m: str(int(m.group()) + 1), answer)
    changed = {f"<answer>{bumped}</answer>", f"<answer>{answer[:-1]}</answer>"}
    return sorted(text for text in changed if answer_of(text) != answer)


def _l1_execution(source: str) -> tuple[Metadata, list[dict[str, Any]]]:
    try:
        metadata = check_source(source)
    except ContractError as exc:
        raise Rejected("L1", "execution", f"static contract: {exc}") from None
    # One task at the hardest level first, under a short limit: a slow environment costs
    # seconds here, not the probe run's whole budget.
    hardest = metadata.difficulties[-1]
    try:
        run_calls(source, [task_call(0, hardest)], SMOKE_LIMITS)
    except ProgramFailure as exc:
        raise Rejected("L1", "execution", f"one task at difficulty {hardest}: {exc}") from None
    calls = [task_call(seed, level) for level in metadata.difficulties for seed in PROBE_SEEDS]
    runs = run_calls_apart(source, [calls, calls])
    for run in runs:
        if isinstance(run, ProgramFailure):
            raise Rejected("L1", "execution", f"the probe run failed: {run}")
    first, second = runs
    assert not isinstance(first, ProgramFailure) and not isinstance(second, ProgramFailure)
    for (_, (seed, level)), one, two in zip(calls, first, second, strict=True):
        where = f"seed {seed}, difficulty {level}"
        if one.error is not None:
            raise Rejected("L1", "execution", f"{where}: {one.error}")
        if max(one.seconds, two.seconds) > CALL_LIMIT_S:
            raise Rejected(
                "L1", "execution", f"{where}: one task took {max(one.seconds, two.seconds):.1f} "
                f"s (limit {CALL_LIMIT_S:g} s)"
            )  # fmt: skip
        if not one.value["repeat_same"]:
            raise Rejected("L1", "execution", f"{where}: generate gave two instances in one run")
        if one.value != two.value:
            raise Rejected("L1", "execution", f"{where}: another process generated another task")
    return metadata, [result.value for result in first]


def _l2_contract(source: str, metadata: Metadata, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    calls: list[Call] = []
    kinds: list[str] = []
    for task in tasks:
        for kind, responses in (
            ("reference", [task["reference"]]),
            ("junk", list(JUNK)),
            ("perturbed", _perturbations(task["reference"])),
        ):
            calls += [score_call(task["instance"], response) for response in responses]
            kinds += [kind] * len(responses)
    many = [task_call(seed, level) for level in metadata.difficulties for seed in MANY_SEEDS]
    try:
        results = run_calls(source, calls + many)
    except ProgramFailure as exc:
        raise Rejected("L2", "contract", f"the contract run failed: {exc}") from None
    scores, generated = results[: len(calls)], results[len(calls) :]
    failed = next((r for r in results if r.error is not None), None)
    if failed is not None:
        raise Rejected("L2", "contract", f"an exception: {failed.error}")
    values: dict[str, list[float | None]] = {"reference": [], "junk": [], "perturbed": []}
    for kind, result in zip(kinds, scores, strict=True):
        value = result.value
        if value is not None and not 0.0 <= value <= 1.0:
            raise Rejected("L2", "contract", f"a score of {value} is outside [0, 1]")
        values[kind].append(value)
    if any(value != 1.0 for value in values["reference"]):
        raise Rejected("L2", "contract", "a reference response does not score 1")
    if any(value is not None and value >= 1.0 for value in values["junk"]):
        raise Rejected("L2", "contract", "a junk response scores 1 (the scorer accepts anything)")
    perturbed = values["perturbed"]
    below = sum(value is None or value < 1.0 for value in perturbed) / max(1, len(perturbed))
    if below < PERTURBED_BELOW_ONE:
        raise Rejected("L2", "contract", f"only {below:.0%} of perturbed references score below 1")
    by_level = _instances_by_level(metadata, generated)
    lowest, highest = by_level[metadata.difficulties[0]], by_level[metadata.difficulties[-1]]
    differ = sum(a != b for a, b in zip(lowest, highest, strict=True)) / len(lowest)
    if differ < 0.8:
        raise Rejected(
            "L2", "contract", f"difficulty levels generate the same task for {1 - differ:.0%} "
            "of seeds: the levels do not differ"
        )  # fmt: skip
    return {"scored": len(calls), "generated": len(generated), "perturbed_below_one": below}


def _instances_by_level(metadata: Metadata, generated: list[CallResult]) -> dict[int, list[Any]]:
    per_level = len(MANY_SEEDS)
    return {
        level: [r.value["instance"] for r in generated[i * per_level : (i + 1) * per_level]]
        for i, level in enumerate(metadata.difficulties)
    }


def _l4_difficulty(
    source: str, metadata: Metadata, rollouts: list[Rollout], settings: EvoSettings
) -> tuple[str, dict[int, float]]:
    if not rollouts and not settings.solver_url:
        return "uncalibrated: no rollouts supplied and no solver endpoint configured", {}
    if not rollouts:
        rollouts = solver_rollouts(
            source, settings.solver_url, settings.model, metadata.difficulties,
            settings.solver_samples,
        )  # fmt: skip
    unknown = {r.difficulty for r in rollouts} - set(metadata.difficulties)
    if unknown:
        raise Rejected("L4", "difficulty", f"rollouts at unknown difficulty levels {unknown}")
    try:
        rates = pass_rates(source, rollouts)
    except (ProgramFailure, ValueError) as exc:
        raise Rejected("L4", "difficulty", f"the rollouts could not be scored: {exc}") from None
    why = outside_band(rates, settings.pass_band)
    if why is not None:
        raise Rejected("L4", "difficulty", why)
    shown = ", ".join(f"{level}: {rate:.0%}" for level, rate in rates.items())
    return f"pass rates per level {shown} within the band", rates


def admit(
    source: str,
    pool: Iterable[PoolEntry],
    rollouts: list[Rollout] | None = None,
    settings: EvoSettings | None = None,
    reviewer: Reviewer | None = None,
) -> Admission:
    """Run L1-L5 on ``source`` against the admitted ``pool``. Never raises for what the code
    does; infrastructure failures (sandbox, endpoints) give outcome ``error``."""
    settings = settings or EvoSettings.from_environ()
    if reviewer is None:
        reviewer = (
            ModelReviewer(settings.reviewer_url, settings.model)
            if settings.reviewer_url
            else rule_review
        )
    reports: list[StageReport] = []
    current: list[Stage] = ["L1"]

    def stage(number: Stage, name: str, run: Callable[[], tuple[str, dict[str, Any]]]) -> None:
        current[0] = number
        detail, facts = run()
        reports.append(StageReport(number, name, True, detail, facts))

    metadata: Metadata | None = None
    digest = code_digest(source)
    try:
        metadata, tasks = _l1_execution(source)
        reports.append(
            StageReport("L1", "execution", True, f"{len(tasks)} probe tasks, deterministic in "
                        "two processes, within limits")
        )  # fmt: skip
        meta = metadata
        stage("L2", "contract", lambda: ("references 1, junk and perturbations below 1",
                                         _l2_contract(source, meta, tasks)))  # fmt: skip
        samples = [Sample(t["prompt"], t["reference"]) for t in tasks]

        def review() -> tuple[str, dict[str, Any]]:
            why = reviewer(source, samples)
            if why is not None:
                raise Rejected("L3", "review", why)
            kind = "model and rules" if settings.reviewer_url else "rules"
            return f"passed the {kind} review", {}

        stage("L3", "review", review)
        rates: dict[int, float] = {}

        def difficulty() -> tuple[str, dict[str, Any]]:
            detail, found = _l4_difficulty(source, meta, rollouts or [], settings)
            rates.update(found)
            return detail, {"pass_rates": {str(k): v for k, v in found.items()}}

        stage("L4", "difficulty", difficulty)
        normalised, prints = normalised_digest(source), fingerprint(tasks)

        def novelty() -> tuple[str, dict[str, Any]]:
            why = duplicate_of(normalised, prints, pool)
            if why is not None:
                raise Rejected("L5", "novelty", why)
            return "new in behaviour and code", {"normalised_digest": normalised}

        stage("L5", "novelty", novelty)
    except Rejected as rejected:
        reports.append(rejected.report)
        return Admission("rejected", tuple(reports), metadata, digest)
    except (SandboxFailure, EndpointFailure) as exc:
        reports.append(StageReport(current[0], "infrastructure", False, str(exc)))
        return Admission("error", tuple(reports), metadata, digest)
    return Admission("admitted", tuple(reports), metadata, digest, normalised, prints, rates)
