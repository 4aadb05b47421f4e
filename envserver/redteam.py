"""Red-team suites: each family's declared hacks (and equivalent forms that must keep scoring),
loaded from ``redteam.toml`` and judged here; ``envserver audit`` runs them.

Where a family's suite lives is part of its declaration (``Family.suite``): a family that is a
package (``environments/<family>/``, or a plugin package) keeps it at
``<package folder>/redteam.toml``; a family that is one module (a plugin ``x/y.py``, the guide's
examples) keeps it beside the module as ``y.redteam.toml``. Reading the declarations loads no
family, so the client-side ``envserver audit --url`` stays light.

A suite is a list of ``[[case]]`` tables (see ``Case``). Each case is scored either in this process
through a registry (``InProcess``) or by a live server (``clients.audit.OverHttp``, which
imports nothing from here); both answer the same ``Target`` calls, and ``run`` judges the answers
against the case's ``expect`` in one place. A case whose environment or verifier this server
cannot serve (a missing prover binary, a missing extra) is skipped with the reason, not failed.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from environments.family import owner

if TYPE_CHECKING:
    from environments.family import Family
    from envserver.registry import Registry

Expect = Literal["zero", "invalid", "full", "below_full", "no_win"]
Verdict = Literal["pass", "fail", "skip"]
NO_REWARD = ("timeout", "error")


class Case(BaseModel):
    """One ``[[case]]``: what is scored (exactly one of ``task_id``, ``verifier`` with
    ``reference``, or ``env`` with ``seed`` and ``actions``), the answer, and what must happen."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="Unique within the file.")
    why: str = Field(min_length=1, description="Why this outcome is the right one.")
    task_id: str | None = None
    verifier: str | None = None
    reference: Any = None
    options: dict[str, Any] | None = None
    env: str | None = None
    seed: int | None = Field(None, ge=0)
    actions: list[str] | None = Field(None, min_length=1)
    response: str | None = None
    expect: Expect

    @model_validator(mode="after")
    def _one_target(self) -> Case:
        targets = [f for f in ("task_id", "verifier", "env") if getattr(self, f) is not None]
        if len(targets) != 1:
            raise ValueError("give exactly one of task_id, verifier or env")
        given = self.model_fields_set
        allowed = {
            "task_id": {"response"},
            "verifier": {"response", "reference", "options"},
            "env": {"seed", "actions", "options"},
        }[targets[0]]
        needed = allowed - {"options"}
        stray = given & {"response", "reference", "options", "seed", "actions"} - allowed
        if stray:
            raise ValueError(f"{', '.join(sorted(stray))} do not go with {targets[0]}")
        if missing := needed - given:
            raise ValueError(f"{targets[0]} needs {', '.join(sorted(missing))}")
        multi_turn = targets[0] == "env"
        if multi_turn and self.expect in ("zero", "invalid"):
            raise ValueError("a multi-turn case expects no_win, full or below_full")
        if not multi_turn and self.expect == "no_win":
            raise ValueError("no_win is for multi-turn cases (env, seed, actions)")
        return self

    @property
    def target(self) -> str:
        """The environment or verifier the case scores with (a task id's environment)."""
        if self.task_id is not None:
            return self.task_id.split("@", maxsplit=1)[0]
        return str(self.verifier if self.verifier is not None else self.env)


class _SuiteFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    case: list[dict[str, Any]] = Field(min_length=1)


class SuiteError(ValueError):
    """A suite that cannot be used: the message names the file and, where one is at fault, the
    case."""


@dataclass(frozen=True)
class Suite:
    """A family's cases, from ``path``."""

    family: str
    path: Path
    cases: tuple[Case, ...]


def load_suite(family: str, path: Path) -> Suite:
    """The suite in ``path``; ``SuiteError`` naming the file (and case) when it is malformed."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read it as TOML: {exc}") from None
    try:
        tables = _SuiteFile.model_validate(raw).case
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "the file"
        raise SuiteError(f"{path}: {where}: {first['msg']} (a list of [[case]] tables)") from None
    cases: list[Case] = []
    for index, table in enumerate(tables, start=1):
        label = f"case {index}" + (f" ({table['name']!r})" if "name" in table else "")
        try:
            case = Case.model_validate(table)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(map(str, first["loc"]))
            message = first["msg"].removeprefix("Value error, ")
            raise SuiteError(f"{path}: {label}: {field + ': ' if field else ''}{message}") from None
        if any(case.name == seen.name for seen in cases):
            raise SuiteError(f"{path}: {label}: the name is used twice")
        cases.append(case)
    return Suite(family, path, tuple(cases))


def load_suites(found: Iterable[Family]) -> tuple[list[Suite], list[Family]]:
    """The suites of the families ``found`` (their declarations: ``envserver.families``) that
    ship one, and the families that ship none."""
    suites, without = [], []
    for family in found:
        if family.suite is not None and family.suite.is_file():
            suites.append(load_suite(family.name, family.suite))
        else:
            without.append(family)
    return suites, without


def select(
    suites: Iterable[Suite], wanted: str | None, families: Sequence[Family] = ()
) -> list[Suite]:
    """The suites to run for ``--env wanted``: the family named so whole, else the cases that
    score with that environment or verifier, or with anything of that family (the one of
    ``families`` whose namespace holds the case's target); every suite when ``wanted`` is None."""
    if wanted is None:
        return list(suites)

    def chosen_by(target: str) -> bool:
        family = owner(families, target)
        return wanted in (target, None if family is None else family.name)

    chosen = []
    for suite in suites:
        if suite.family == wanted:
            chosen.append(suite)
            continue
        cases = tuple(case for case in suite.cases if chosen_by(case.target))
        if cases:
            chosen.append(Suite(suite.family, suite.path, cases))
    return chosen


# --- scoring and judging ---------------------------------------------------------------------


@dataclass(frozen=True)
class Got:
    """What scoring a case gave: the item's (or the episode's last step's) status and reward,
    and for an episode whether it ended with reward 1 and after how many steps."""

    status: str
    reward: float | None
    detail: str = ""
    won: bool = False
    steps: int = 0


class Scored(Protocol):
    """What a target answers for an item or a step: a score's status, reward and detail (a
    verifier's ``Score``, or the wire's result of a verify item or a step)."""

    @property
    def status(self) -> str: ...

    @property
    def reward(self) -> float | None: ...

    @property
    def detail(self) -> str: ...


class Target(Protocol):
    """Where cases are scored. A call raises when the case cannot be scored there: a skip when
    ``unavailable`` gives the exception a reason, a failure otherwise."""

    def disabled(self) -> dict[str, str]:
        """What cannot be served there, by family, environment or verifier name: the reason."""
        ...

    def unavailable(self, error: Exception) -> str | None:
        """Why ``error`` means that the target cannot serve the case's environment or verifier
        (it is disabled there); None when ``error`` is a failure."""
        ...

    def score_task(self, task_id: str, response: str) -> Scored: ...

    def score(
        self, verifier: str, reference: Any, options: dict[str, Any], response: str
    ) -> Scored: ...

    def reset(self, env: str, seed: int, options: dict[str, Any]) -> Any:
        """Start the episode; returns the handle ``step`` takes (a state or a state token)."""
        ...

    def step(self, env: str, handle: Any, action: str) -> tuple[Any, Scored, bool]:
        """The next handle, the step's score, and whether the episode ended."""
        ...


@dataclass(frozen=True)
class CaseResult:
    """A case's verdict: ``pass``, ``fail`` (``got`` is not what it expects) or ``skip``."""

    family: str
    case: Case
    verdict: Verdict
    got: Got | None
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "case": self.case.name,
            "target": self.case.target,
            "expect": self.case.expect,
            "verdict": self.verdict,
            "status": None if self.got is None else self.got.status,
            "reward": None if self.got is None else self.got.reward,
            "detail": self.detail,
        }


def meets(expect: Expect, got: Got) -> bool:
    """Whether ``got`` is what ``expect`` asks. An item or step with no reward (timeout, error)
    meets nothing: an audit that could not score has not shown the hack fails."""
    if got.status in NO_REWARD or got.reward is None:
        return False
    if expect == "zero":
        return got.reward == 0.0
    if expect == "invalid":
        return got.status == "invalid"
    if expect == "full":
        return got.status == "ok" and got.reward == 1.0 and (got.steps == 0 or got.won)
    if expect == "below_full":
        return got.reward < 1.0
    return not got.won  # no_win


class Scorable(Protocol):
    """What ``score_case`` scores: a red-team case, or a probe of the search
    (``environments.search.Probe``): the same target fields."""

    @property
    def task_id(self) -> str | None: ...
    @property
    def verifier(self) -> str | None: ...
    @property
    def reference(self) -> Any: ...
    @property
    def options(self) -> Mapping[str, Any] | None: ...
    @property
    def env(self) -> str | None: ...
    @property
    def seed(self) -> int | None: ...
    @property
    def actions(self) -> Sequence[str] | None: ...
    @property
    def response(self) -> str | None: ...


def _episode(target: Target, case: Scorable) -> Got:
    assert case.env is not None and case.seed is not None and case.actions is not None
    handle = target.reset(case.env, case.seed, dict(case.options or {}))
    got = Got("ok", 0.0)
    for index, action in enumerate(case.actions, start=1):
        handle, score, ended = target.step(case.env, handle, action)
        got = Got(score.status, score.reward, score.detail, ended and score.reward == 1.0, index)
        if ended or score.status in NO_REWARD:
            break
    return got


def score_case(target: Target, case: Scorable) -> Got:
    """Score ``case`` (a red-team case or a search's probe) on ``target``."""
    if case.task_id is not None:
        return _got(target.score_task(case.task_id, str(case.response)))
    if case.verifier is not None:
        reference, options = case.reference, dict(case.options or {})
        return _got(target.score(case.verifier, reference, options, str(case.response)))
    return _episode(target, case)


def run_case(target: Target, family: str, case: Case) -> CaseResult:
    """Score and judge one case; a skip or an exception becomes its verdict, never escapes."""
    try:
        got = score_case(target, case)
    except Exception as exc:
        why = target.unavailable(exc)
        if why is not None:
            return CaseResult(family, case, "skip", None, why)
        # The case could not be scored: that is the audit's finding.
        return CaseResult(family, case, "fail", None, f"{type(exc).__name__}: {exc}")
    verdict: Verdict = "pass" if meets(case.expect, got) else "fail"
    return CaseResult(family, case, verdict, got, got.detail)


def run(target: Target, suites: Iterable[Suite]) -> list[CaseResult]:
    """Every case of ``suites`` on ``target``, in file order; a whole family the target has
    disabled (it could not load: a missing extra) is skipped with the reason."""
    disabled = target.disabled()
    results = []
    for suite in suites:
        for case in suite.cases:
            if suite.family in disabled:
                why = f"{suite.family} is not available there: {disabled[suite.family]}"
                results.append(CaseResult(suite.family, case, "skip", None, why))
            else:
                results.append(run_case(target, suite.family, case))
    return results


class InProcess:
    """Cases scored in this process through ``registry``, resolved as the service resolves them
    (task ids parsed, versions and options checked); no per-item time limit is enforced here
    beyond each family's own (a sandbox run's limits, say)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def disabled(self) -> dict[str, str]:
        return {str(name): str(why) for name, why in self.registry.disabled.items()}

    def unavailable(self, error: Exception) -> str | None:
        from environments.base import EnvironmentUnavailable  # noqa: PLC0415
        from envserver.registry import Disabled  # noqa: PLC0415  (the server side, loaded here)

        # What a server answers 503 for (a disabled family, or an episode its configuration
        # cannot serve: a theory only a prover could play) is skipped, as over HTTP.
        return str(error.why) if isinstance(error, Disabled | EnvironmentUnavailable) else None

    def score_task(self, task_id: str, response: str) -> Scored:
        from environments.base import SingleTurnScoring  # noqa: PLC0415
        from environments.task_id import TaskId  # noqa: PLC0415

        task = TaskId.parse(task_id)
        env = self.registry.env(task.env)
        if task.version != env.spec.version:
            raise ValueError(f"{task_id} is for version {task.version}, not {env.spec.version}")
        options = env.spec.options_model.model_validate(task.options)
        if not isinstance(env, SingleTurnScoring):
            raise ValueError(f"{task.env} is multi-turn: a task id case needs a single-turn env")
        return env.score_response(task.seed, options, response)

    def score(
        self, verifier: str, reference: Any, options: dict[str, Any], response: str
    ) -> Scored:
        check = self.registry.verifier(verifier)
        return check(response, reference, check.options_model.model_validate(options))

    def reset(self, env: str, seed: int, options: dict[str, Any]) -> Any:
        found = self.registry.env(env)
        return found.reset(seed, found.spec.options_model.model_validate(options)).state

    def step(self, env: str, handle: Any, action: str) -> tuple[Any, Scored, bool]:
        result = self.registry.env(env).step(handle, action)
        return result.state, result.score, bool(result.terminated or result.truncated)


def _got(score: Scored) -> Got:
    return Got(score.status, score.reward, score.detail)
