"""The admission pipeline, L1-L5: every stage runs the submitted code in the sandbox, every
rejection names its stage and reason.

L1 execution   static contract (allow-listed imports, no runtime reflection, members present),
               then the probe tasks in two separate sandbox runs: within limits, deterministic
               (within a run and across processes), JSON instances
L2 contract    references score 1; junk, hostile answers (every digit, every small integer,
               a 10,000-digit number, the prompt echoed, the answer hedged with a wrong one)
               and perturbed references score less; other tasks' references mostly less;
               scores in [0, 1], no exception over the secret tasks, levels generate different
               tasks; then the search of the scorer on the secret tasks (``shortcuts``): random
               answers, every length, literals, CrossHair's finds pay nothing too often
L3 review      the configured reviewer (rules by default: format stated, answer not leaked),
               then the form the prompt asks for (working first, words, commas) scores 1
L4 difficulty  no trivial solver earns reward too often on the secret tasks (``shortcuts``);
               pass rates per level from rollouts or a solver endpoint inside the band;
               admitted uncalibrated when neither is supplied (the report says so)
L5 novelty     behavioural fingerprint and normalised code against the admitted pool

The whole pipeline spends at most ``EvoSettings.admission_cpu_s`` of sandbox CPU
(``program.cpu_budget``): a submission that needs more is refused at the stage it reached.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
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
from environments.evo.forms import WORKING, asked_forms, rewritten
from environments.evo.novelty import PoolEntry, duplicate_of, fingerprint
from environments.evo.program import (
    CALL_CPU_S,
    OverBudget,
    ProgramFailure,
    SandboxFailure,
    cpu_budget,
    run_calls,
    run_calls_apart,
    score_call,
    task_call,
)
from environments.evo.review import ModelReviewer, Reviewer, Sample, answer_of, rule_review
from environments.evo.settings import EvoSettings
from environments.evo.shortcuts import (
    Task,
    probe_rng,
    search_scorer,
    search_solvers,
    secret_seeds,
)

PROBE_SEEDS = tuple(range(8))
JUNK = (
    "", "lorem ipsum dolor", "<answer></answer>", "<answer> </answer>",
    "<answer>lorem ipsum</answer>",
)  # fmt: skip
HOSTILE = {
    # What a policy tries when it cannot solve the task; a scorer must give each less than 1
    # (a loose "the answer is in the response" check gives them all 1).
    "every digit": "<answer>0123456789</answer>",
    "every small integer listed": f"<answer>{' '.join(map(str, range(-20, 1001)))}</answer>",
    "every small integer, comma-separated": f"<answer>{', '.join(map(str, range(1001)))}</answer>",
    "a 10,490-digit number (every integer below 2900 inside it)": (
        f"<answer>{''.join(map(str, range(2900)))}</answer>"
    ),
}
PERTURBED_BELOW_ONE = 0.8
"""Share of changed references (and of other tasks' references, where their answer differs)
that must score below 1: a changed answer can stay valid where many answers are right (a
subset-sum with two solutions, an order that satisfies two tasks' constraints)."""
OTHER_TASKS = 2
"""Other tasks of the same level whose references each probe task is scored with."""

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
    endpoint): no verdict on the code. ``pass_rates`` is empty when uncalibrated. ``cpu_s``:
    the sandbox CPU the pipeline spent (not part of the verdict: it varies from run to run)."""

    outcome: Outcome
    reports: tuple[StageReport, ...]
    metadata: Metadata | None = None
    digest: str = ""
    normalised: str = ""
    fingerprint: tuple[str, ...] = ()
    pass_rates: dict[int, float] = field(default_factory=dict)
    cpu_s: float = field(default=0.0, compare=False)

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


def _hedged(right: str, wrong: str) -> dict[str, str]:
    """The right answer offered next to a wrong one: a scorer that accepts any of several
    answers (or any tag) rewards a policy that lists candidates."""
    a, b = answer_of(right), answer_of(wrong)
    return {
        "the answer or a wrong one": f"<answer>{a} or {b}</answer>",
        "a wrong answer or the answer": f"<answer>{b} or {a}</answer>",
        "the answer and a wrong one, comma-separated": f"<answer>{a}, {b}</answer>",
        "the answer between two wrong tags": (
            f"<answer>{b}</answer> <answer>{a}</answer> <answer>{b}</answer>"
        ),
    }


@dataclass(frozen=True)
class _Probe:
    """A response L2 scores for one task, and what it must score: ``kind`` reference (1),
    strict (below 1), share (below 1 in ``PERTURBED_BELOW_ONE`` of cases), hedge (below 1
    when the wrong answer it hedges with, probe ``base``, was read and scored below 1: an
    unreadable one next to the answer is no candidate)."""

    kind: Literal["reference", "strict", "share", "hedge"]
    label: str
    task: int
    response: str
    base: int = -1


def _probes(tasks: list[dict[str, Any]], per_level: int) -> list[_Probe]:
    probes: list[_Probe] = []
    for index, task in enumerate(tasks):
        reference, answer = task["reference"], answer_of(task["reference"])
        probes.append(_Probe("reference", "the reference", index, reference))
        strict = {f"junk {text!r}": text for text in JUNK} | HOSTILE
        strict |= {
            "the prompt echoed": task["prompt"],
            "the prompt echoed as the answer": f"<answer>{task['prompt']}</answer>",
        }
        for label, response in strict.items():
            if answer_of(response) != answer:  # never a probe that is the right answer itself
                probes.append(_Probe("strict", label, index, response))
        for changed in _perturbations(reference):
            base = len(probes)
            probes.append(_Probe("share", "a perturbed reference", index, changed))
            for label, response in _hedged(reference, changed).items():
                probes.append(_Probe("hedge", label, index, response, base))
        level_start = index - index % per_level
        for step in range(1, OTHER_TASKS + 1):
            other = tasks[level_start + (index % per_level + step) % per_level]["reference"]
            if answer_of(other) != answer:
                probes.append(_Probe("share", "another task's reference", index, other))
    return probes


def _l1_execution(source: str) -> tuple[Metadata, list[dict[str, Any]]]:
    try:
        metadata = check_source(source)
    except ContractError as exc:
        raise Rejected("L1", "execution", f"static contract: {exc}") from None
    # One task at the hardest level first, under a short limit: a slow environment costs
    # seconds here, not the probe run's whole budget.
    hardest = metadata.difficulties[-1]
    try:
        (smoke,) = run_calls(source, [task_call(0, hardest)])
    except ProgramFailure as exc:
        raise Rejected("L1", "execution", f"one task at difficulty {hardest}: {exc}") from None
    if smoke.error is not None:
        raise Rejected("L1", "execution", f"seed 0, difficulty {hardest}: {smoke.error}")
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
        if max(one.cpu_s, two.cpu_s) > CALL_CPU_S:  # the driver stops it; read it here too
            raise Rejected(
                "L1", "execution", f"{where}: timeout: one task used "
                f"{max(one.cpu_s, two.cpu_s):.1f} s of CPU (limit {CALL_CPU_S:g} s)"
            )  # fmt: skip
        if not one.value["repeat_same"]:
            raise Rejected("L1", "execution", f"{where}: generate gave two instances in one run")
        if one.value != two.value:
            raise Rejected("L1", "execution", f"{where}: another process generated another task")
    return metadata, [
        {**result.value, "seed": seed, "difficulty": level}
        for (_, (seed, level)), result in zip(calls, first, strict=True)
    ]


def _l2_contract(
    source: str, metadata: Metadata, tasks: list[dict[str, Any]], rng: random.Random
) -> tuple[dict[str, Any], list[Task]]:
    probes = _probes(tasks, len(PROBE_SEEDS))
    calls = [score_call(tasks[p.task]["instance"], p.response) for p in probes]
    seeds = secret_seeds(rng)
    wanted = [(seed, level) for level in metadata.difficulties for seed in seeds]
    many = [task_call(seed, level) for seed, level in wanted]
    try:
        results = run_calls(source, calls + many)
    except ProgramFailure as exc:
        raise Rejected("L2", "contract", f"the contract run failed: {exc}") from None
    scores, generated = results[: len(calls)], results[len(calls) :]
    failed = next((r for r in results if r.error is not None), None)
    if failed is not None:
        raise Rejected("L2", "contract", f"an exception: {failed.error}")
    values: list[float | None] = []
    for result in scores:
        value = result.value
        if value is not None and not 0.0 <= value <= 1.0:
            raise Rejected("L2", "contract", f"a score of {value} is outside [0, 1]")
        values.append(value)
    below = [value is None or value < 1.0 for value in values]
    shares: dict[str, list[bool]] = {}
    for probe, value, less in zip(probes, values, below, strict=True):
        task = tasks[probe.task]
        where = f"seed {task['seed']}, difficulty {task['difficulty']}"
        if probe.kind == "reference" and value != 1.0:
            raise Rejected("L2", "contract", f"a reference response does not score 1 ({where})")
        if probe.kind == "strict" and not less:
            raise Rejected(
                "L2", "contract", f"a junk or hostile response scores 1: {probe.label} "
                f"({where}); the scorer accepts answers that are not the answer"
            )  # fmt: skip
        wrong = values[probe.base] is not None and below[probe.base]  # read, and wrong
        if probe.kind == "hedge" and wrong and not less:
            raise Rejected(
                "L2", "contract", f"a hedged response scores 1: {probe.label} ({where}); the "
                "scorer rewards listing candidates"
            )  # fmt: skip
        if probe.kind == "share":
            shares.setdefault(probe.label, []).append(less)
    for label, flags in shares.items():
        share = sum(flags) / len(flags)
        if share < PERTURBED_BELOW_ONE:
            raise Rejected("L2", "contract", f"only {share:.0%} of {label}s score below 1")
    secret = [
        Task(seed, level, r.value["instance"], r.value["prompt"], r.value["reference"])
        for (seed, level), r in zip(wanted, generated, strict=True)
    ]
    lowest, highest = (
        [task.instance for task in secret if task.difficulty == level]
        for level in (metadata.difficulties[0], metadata.difficulties[-1])
    )
    differ = sum(a != b for a, b in zip(lowest, highest, strict=True)) / len(lowest)
    if differ < 0.8:
        raise Rejected(
            "L2", "contract", f"difficulty levels generate the same task for {1 - differ:.0%} "
            "of seeds: the levels do not differ"
        )  # fmt: skip
    return {
        "scored": len(calls),
        "generated": len(generated),
        **{f"below_one[{label}]": sum(f) / len(f) for label, f in sorted(shares.items())},
    }, secret


def _l2_search(
    source: str, secret: list[Task], rng: random.Random, settings: EvoSettings
) -> dict[str, Any]:
    """The search of the scorer for answers it pays that are not the answer (``shortcuts``)."""
    try:
        found = search_scorer(source, secret, rng, settings.symbolic_cpu_s)
    except ProgramFailure as exc:
        raise Rejected("L2", "contract", f"the search run failed: {exc}") from None
    if found.refusal is not None:
        raise Rejected("L2", "contract", found.refusal)
    return found.facts


def _l3_forms(source: str, metadata: Metadata, tasks: list[dict[str, Any]]) -> str:
    """The reference written the way the prompt asks (with working before it; in words when
    the prompt asks for words...) must score 1: else a solver that obeys the prompt earns 0."""
    wanted: list[tuple[int, str, str]] = []  # (task, form, response)
    for index, task in enumerate(tasks):
        wanted.append((index, "with working before it", WORKING + task["reference"]))
        for asked in asked_forms(task["prompt"], metadata.answer_format):
            wanted += [(index, asked.name, r) for r in rewritten(task["reference"], asked)]
    try:
        results = run_calls(source, [score_call(tasks[i]["instance"], r) for i, _, r in wanted])
    except ProgramFailure as exc:
        raise Rejected("L3", "review", f"the format run failed: {exc}") from None
    accepted: dict[tuple[int, str], bool] = {}
    for (index, name, _), result in zip(wanted, results, strict=True):
        key = (index, name)  # one variant of a form ("forty-two", "forty two") is enough
        accepted[key] = accepted.get(key, False) or (result.error is None and result.value == 1.0)
    for (index, name), ok in accepted.items():
        if not ok:
            task = tasks[index]
            raise Rejected(
                "L3", "review", f"the reference answer in a form the prompt asks for ({name}) "
                f"does not score 1 (seed {task['seed']}, difficulty {task['difficulty']}): the "
                "scorer contradicts the prompt"
            )  # fmt: skip
    return ", ".join(sorted({name for _, name in accepted}))


def _l4_difficulty(
    source: str,
    metadata: Metadata,
    rollouts: list[Rollout],
    settings: EvoSettings,
    *,
    secret: list[Task],
    rng: random.Random,
) -> tuple[str, dict[int, float], dict[str, Any]]:
    try:
        trivial = search_solvers(source, secret, rng)
    except ProgramFailure as exc:
        raise Rejected("L4", "difficulty", f"the trivial solvers' run failed: {exc}") from None
    if trivial.refusal is not None:
        raise Rejected("L4", "difficulty", trivial.refusal)
    if not rollouts and not settings.solver_url:
        detail = "no trivial solver earns reward often; uncalibrated: no rollouts supplied and "
        return detail + "no solver endpoint configured", {}, trivial.facts
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
    return (
        f"no trivial solver earns reward often; pass rates per level {shown} within the band",
        rates,
        trivial.facts,
    )


def admit(
    source: str,
    pool: Iterable[PoolEntry],
    rollouts: list[Rollout] | None = None,
    *,
    settings: EvoSettings,
    reviewer: Reviewer | None = None,
) -> Admission:
    """Run L1-L5 on ``source`` against the admitted ``pool``, within the settings' CPU budget.
    Never raises for what the code does; infrastructure failures (sandbox, endpoints) give
    outcome ``error``."""
    with cpu_budget(settings.admission_cpu_s) as budget:
        admission = _pipeline(source, pool, rollouts, settings, reviewer)
    return replace(admission, cpu_s=budget.spent_s)


def _pipeline(
    source: str,
    pool: Iterable[PoolEntry],
    rollouts: list[Rollout] | None,
    settings: EvoSettings,
    reviewer: Reviewer | None,
) -> Admission:
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
        rng = probe_rng(settings.probe_key(), digest)
    except OSError as exc:
        reports.append(StageReport("L1", "infrastructure", False, f"the probe secret: {exc}"))
        return Admission("error", tuple(reports), metadata, digest)
    try:
        metadata, tasks = _l1_execution(source)
        reports.append(
            StageReport("L1", "execution", True, f"{len(tasks)} probe tasks, deterministic in "
                        "two processes, within limits")
        )  # fmt: skip
        meta = metadata
        secret: list[Task] = []

        def contract() -> tuple[str, dict[str, Any]]:
            facts, drawn = _l2_contract(source, meta, tasks, rng)
            secret.extend(drawn)
            facts |= _l2_search(source, secret, rng, settings)
            detail = (
                "references 1; junk, hostile, hedged and changed answers below 1; the search "
                "found no answer paid that is not the answer"
            )
            return detail, facts

        stage("L2", "contract", contract)
        samples = [Sample(t["prompt"], t["reference"]) for t in tasks]

        def review() -> tuple[str, dict[str, Any]]:
            why = reviewer(source, samples)
            if why is not None:
                raise Rejected("L3", "review", why)
            forms = _l3_forms(source, meta, tasks)
            kind = "model and rules" if settings.reviewer_url else "rules"
            return f"passed the {kind} review", {"forms_scoring_1": forms}

        stage("L3", "review", review)
        rates: dict[int, float] = {}

        def difficulty() -> tuple[str, dict[str, Any]]:
            detail, found, facts = _l4_difficulty(
                source, meta, rollouts or [], settings, secret=secret, rng=rng
            )
            rates.update(found)
            return detail, {**facts, "pass_rates": {str(k): v for k, v in found.items()}}

        stage("L4", "difficulty", difficulty)
        normalised, prints = normalised_digest(source), fingerprint(tasks)

        def novelty() -> tuple[str, dict[str, Any]]:
            why = duplicate_of(normalised, prints, pool)
            if why is not None:
                raise Rejected("L5", "novelty", why)
            return "new in behaviour and code", {"normalised_digest": normalised}

        stage("L5", "novelty", novelty)
    except (Rejected, OverBudget) as refused:
        reports.append(
            refused.report
            if isinstance(refused, Rejected)
            else StageReport(current[0], "cpu budget", False, str(refused))
        )
        return Admission("rejected", tuple(reports), metadata, digest)
    except (SandboxFailure, EndpointFailure) as exc:
        reports.append(StageReport(current[0], "infrastructure", False, str(exc)))
        return Admission("error", tuple(reports), metadata, digest)
    return Admission("admitted", tuple(reports), metadata, digest, normalised, prints, rates)
