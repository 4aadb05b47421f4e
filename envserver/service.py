"""The request logic behind the routes: validate, schedule on the pool, shape the results.

Single and batch forms share one path (a single call is a batch of one), so they cannot drift.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from environments.base import (
    CheapReset,
    Environment,
    Expandable,
    Expansion,
    ResetResult,
    StepResult,
)
from environments.task_id import MAX_SEED, MAX_TASK_ID_LENGTH, TaskId, TaskIdError
from envserver import worker
from envserver.auth import CALLER
from envserver.config import Settings
from envserver.digests import Provenance, Stamp
from envserver.executor import Call, Executor, Outcome, PoolUnavailable
from envserver.metrics import Metrics
from envserver.problems import ITEM_KINDS, Problem, problem_for
from envserver.registry import Registry
from envserver.stats import Attempt, Label, Recorder, Task
from envserver.tokens import StateTokens, TokenError
from envserver.wire import (
    BranchReply,
    ExpandRequest,
    ExpandResponse,
    ExpansionReply,
    ProblemKind,
    ResetRequest,
    ResetResponse,
    StepRequest,
    StepResponse,
    VerifyItem,
    VerifyRequest,
    VerifyResponse,
    VerifyResult,
)
from sandbox.pool import Overloaded
from verifiers.base import Verifier
from verifiers.score import Score

log = logging.getLogger("envserver")
REFUSED = "refused"
"""The metrics' status of an item a batch refused (``ITEM_KINDS``): not scored, not failed."""
T = TypeVar("T")
R = TypeVar("R", ResetResult, StepResult)


def _where(index: int | None, *loc: str) -> str:
    return ".".join(([f"items.{index}"] if index is not None else []) + list(loc))


def _validate_options(
    model: type[BaseModel], raw: dict[str, Any], index: int | None, field: str
) -> BaseModel:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        errors = [
            {"loc": [field, *map(str, e["loc"])], "msg": e["msg"], "type": e["type"]}
            for e in exc.errors()
        ]
        first = errors[0]
        raise Problem(
            422,
            f"{_where(index, *first['loc'])}: {first['msg']}",
            kind=ProblemKind.INVALID_OPTIONS,
            extra={"errors": errors},
        ) from None


@dataclass(frozen=True)
class View:
    """A family renderer's view of an episode: its ``template`` and the ``context`` computed
    for it, or (context None) why that failed (``failure``)."""

    template: str
    context: dict[str, Any] | None
    failure: str = ""


class _Planned(NamedTuple):
    """One verify item on its way to the pool: its metrics target, its call, who scores it,
    and its task (environment, seed, options) when it names one (for the statistics)."""

    target: str
    call: Call[Score]
    stamp: Stamp
    task: tuple[Environment, int, BaseModel] | None


@dataclass
class Service:
    """Everything a request needs: settings, families, the pool and the token signer, and the
    recorder of task statistics (None: ``ENVSERVER_STATS`` is off)."""

    settings: Settings
    registry: Registry
    executor: Executor
    tokens: StateTokens
    metrics: Metrics
    recorder: Recorder | None = None
    provenance: Provenance = field(init=False)

    def __post_init__(self) -> None:
        self.provenance = Provenance(self.registry.families)
        self.metrics.registry.register(self.provenance)

    # --- lookups -------------------------------------------------------------------------------

    def env(self, env_id: str) -> Environment:
        """The environment; a 404 problem for an unknown one, 410 for a retired one, 503 for
        a disabled one."""
        try:
            return self.registry.env(env_id)
        except LookupError as exc:
            raise problem_for(exc) or exc from None

    def verifier(self, name: str) -> Verifier:
        """The verifier; a 404 problem for an unknown one, 503 for a disabled one."""
        try:
            return self.registry.verifier(name)
        except LookupError as exc:
            raise problem_for(exc) or exc from None

    def label(self, name: str) -> str:
        """``name`` as a metrics label: an environment or verifier the registry holds (or
        ``mixed``) as is; an environment a family adds while serving (they come and go without
        bound) as its family's ``<family>/*`` (the declaration whose namespace holds it), so
        the series stay bounded."""
        if name in self.registry.envs or name in self.registry.verifiers or name == "mixed":
            return name
        return f"{self.registry.family_of(name) or 'unknown'}/*"

    def _timeout(self, requested: float | None, default: float) -> float:
        return min(requested or default, self.settings.max_item_timeout_s)

    def check_batch(self, size: int) -> None:
        if size > self.settings.max_batch_items:
            raise Problem(
                413,
                f"{size} items in one request; the limit is {self.settings.max_batch_items}",
                kind=ProblemKind.BATCH_TOO_LARGE,
            )

    def _task(self, text: str, index: int | None) -> tuple[Environment, TaskId, BaseModel]:
        try:
            task = TaskId.parse(text)
        except TaskIdError as exc:
            raise problem_for(exc, _where(index, "task_id")) or exc from None
        env = self.env(task.env)
        if task.version != env.spec.version:
            raise Problem(
                404,
                f"{_where(index, 'task_id')}: task {text!r} is for {task.env}@{task.version}; "
                f"this server serves {task.env}@{env.spec.version}",
                kind=ProblemKind.UNKNOWN_TASK,
            )
        try:
            options = env.spec.options_model.model_validate(task.options)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise Problem(
                400,
                f"{_where(index, 'task_id')}: option {'.'.join(map(str, first['loc']))}: "
                f"{first['msg']}",
                kind=ProblemKind.MALFORMED_TASK_ID,
            ) from None
        return env, task, options

    def task_id(self, env: Environment, seed: int, options: BaseModel) -> str | None:
        """The canonical id of the task ``(seed, options)`` names; None when the options are
        too large for an id (a whole theory text, say): no id beats one that cannot be read."""
        text = TaskId.format(
            env.spec.id,
            env.spec.version,
            seed,
            options.model_dump(mode="json", exclude_defaults=True),
        )
        return text if len(text) <= MAX_TASK_ID_LENGTH else None

    def _open(self, token: str, env: Environment, index: int | None) -> tuple[Any, Label | None]:
        try:
            state, label = self.tokens.open_labelled(token, env.spec.id, env.spec.version)
        except TokenError as exc:
            raise problem_for(exc, _where(index, "state")) or exc from None
        return state, (Label.opened(label) if label is not None else None)

    def _issue(self, env: Environment, state: Any, label: Label | None = None) -> str:
        try:
            sealed = label.sealed() if label is not None else None
            return self.tokens.issue(env.spec.id, env.spec.version, state, sealed)
        except (TypeError, ValueError) as exc:  # a family bug: its state is not JSON or too big
            raise Problem(
                500, f"{env.spec.id} produced an unusable state: {exc}", kind=ProblemKind.INTERNAL
            ) from None

    def env_stamp(self, env: Environment) -> Stamp:
        """Who scores ``env``'s tasks and steps, and the digest of its source and data."""
        return self.provenance.of_env(env, self.registry.verifiers.get(env.spec.verifier or ""))

    def _label(self, run: str | None, task_id: str | None) -> Label | None:
        """The statistics label of an episode a reset starts (None: nothing to count)."""
        if self.recorder is None or run is None or task_id is None:
            return None
        return Label(CALLER.get(), run, task_id)

    def _record(self, owner: str, run: str, env: Environment, task: Task, reward: float) -> None:
        if self.recorder is not None:
            self.recorder.record(Attempt(owner, run, env.spec.id, env.spec.version, task, reward))

    async def _run(self, kind: str, target: str, calls: Sequence[Call[T]]) -> list[Outcome[T]]:
        try:
            async with asyncio.timeout(self.settings.request_timeout_s):
                outcomes = await self.executor.run(calls)
        except (Overloaded, PoolUnavailable) as exc:
            if isinstance(exc, Overloaded):
                self.metrics.rejected.inc(len(calls))
            raise problem_for(exc) or exc from None
        except TimeoutError:
            raise Problem(
                504,
                f"the request did not finish within {self.settings.request_timeout_s:g} s",
                kind=ProblemKind.REQUEST_TIMEOUT,
            ) from None
        for outcome in outcomes:
            if outcome.status != "ok":
                self.metrics.worker_failures.labels(outcome.status).inc()
            self.metrics.item_seconds.labels(kind, self.label(target)).observe(outcome.seconds)
        return outcomes

    @staticmethod
    def _refused(outcome: Outcome[Any], batch: bool) -> Problem | None:
        """The problem of an item whose call raised one of ``PROBLEMS``: in a batch, the item's
        own (``ITEM_KINDS``: its episode had ended, its input is refused) is returned for the
        item to carry; any other (the worker no longer finds the environment: a 404 or 410
        like the server's own lookup) is the request's, and raised. A family's bug is logged
        and its item fails with status error."""
        raised = outcome.raised
        if raised is None:
            return None
        problem = problem_for(raised)
        if problem is None:
            log.error("a family raised: %s\n%s", outcome.detail, getattr(raised, "traceback", ""))
            return None
        if batch and problem.kind in ITEM_KINDS:
            return problem
        raise problem

    # --- episodes ------------------------------------------------------------------------------

    def _drawn(self, env_id: str, value: R | worker.Drawn[R]) -> tuple[R, View | None]:
        """A worker's result and, when it was drawn, the renderer's view of it."""
        if not isinstance(value, worker.Drawn):
            return value, None
        renderer = self.registry.renderers.get(env_id)
        if renderer is None:
            return value.result, None
        return value.result, View(renderer.template, value.context, value.failure)

    async def reset(
        self, env_id: str, requests: Sequence[ResetRequest], batch: bool
    ) -> list[ResetResponse]:
        """Reset ``len(requests)`` episodes of ``env_id``."""
        return [reply for reply, _ in await self._reset(env_id, requests, batch, draw=False)]

    async def drawn_reset(
        self, env_id: str, request: ResetRequest
    ) -> tuple[ResetResponse, View | None]:
        """One reset and the view the environment's renderer draws of it (None without one),
        computed in the reset's own worker call: the playground's pages."""
        return (await self._reset(env_id, [request], batch=False, draw=True))[0]

    async def _reset(
        self, env_id: str, requests: Sequence[ResetRequest], batch: bool, draw: bool
    ) -> list[tuple[ResetResponse, View | None]]:
        self.check_batch(len(requests))
        env = self.env(env_id)
        plans: list[tuple[int, BaseModel]] = []
        for index, request in enumerate(requests):
            where = index if batch else None
            if request.task_id is not None:
                task_env, task, options = self._task(request.task_id, where)
                if task_env is not env:
                    raise Problem(
                        400,
                        f"{_where(where, 'task_id')}: the task is {task.env!r}'s, not {env_id!r}'s",
                        kind=ProblemKind.FOREIGN_TASK,
                    )
                plans.append((task.seed, options))
            else:
                seed = request.seed if request.seed is not None else secrets.randbelow(MAX_SEED + 1)
                plans.append(
                    (
                        seed,
                        _validate_options(
                            env.spec.options_model, request.options, where, "options"
                        ),
                    )
                )
        timeout = self._timeout(None, env.spec.timeout_s)
        # A renderer runs on the pool as the environments do, even after a reset cheap enough
        # to run in this process.
        drawn = draw and env_id in self.registry.renderers
        calls = [
            Call(
                worker.drawn_reset if draw else worker.reset,
                (env_id, seed, worker.sent(options)),
                timeout,
                inline=not drawn and isinstance(env, CheapReset) and env.cheap_reset(options),
                cost_key=env_id,
            )
            for seed, options in plans
        ]
        outcomes: list[Outcome[Any]] = await self._run("reset", env_id, calls)
        responses: list[tuple[ResetResponse, View | None]] = []
        for index, ((seed, options), outcome) in enumerate(zip(plans, outcomes, strict=True)):
            refused = self._refused(outcome, batch)
            if refused is not None:
                self.metrics.items.labels("reset", self.label(env_id), REFUSED).inc()
                item = ResetResponse(
                    status="error", detail=refused.detail, problem=refused.document()
                )
                responses.append((item, None))
                continue
            self.metrics.items.labels("reset", self.label(env_id), outcome.status).inc()
            if outcome.value is None:
                responses.append(
                    (ResetResponse(status=outcome.status, detail=outcome.detail), None)
                )
                continue
            result, view = self._drawn(env_id, outcome.value)
            task_id = self.task_id(env, seed, options)
            label = self._label(requests[index].run, task_id)
            reply = ResetResponse(
                observation=result.observation,
                state=self._issue(env, result.state, label),
                task_id=task_id,
                info=result.info,
            )
            responses.append((reply, view))
        return responses

    async def step(
        self, env_id: str, requests: Sequence[StepRequest], batch: bool
    ) -> list[StepResponse]:
        """Step ``len(requests)`` episodes of ``env_id``."""
        return [reply for reply, _ in await self._step(env_id, requests, batch, draw=False)]

    async def drawn_step(
        self, env_id: str, request: StepRequest
    ) -> tuple[StepResponse, View | None]:
        """One step and the view the environment's renderer draws of the episode after it
        (None without one, or when the step failed), computed in the step's own worker call:
        the playground's pages."""
        return (await self._step(env_id, [request], batch=False, draw=True))[0]

    async def _step(
        self, env_id: str, requests: Sequence[StepRequest], batch: bool, draw: bool
    ) -> list[tuple[StepResponse, View | None]]:
        self.check_batch(len(requests))
        env = self.env(env_id)
        opened = [self._open(r.state, env, i if batch else None) for i, r in enumerate(requests)]
        timeout = self._timeout(None, env.spec.timeout_s)
        fn = worker.drawn_step if draw else worker.step
        calls = [
            Call(fn, (env_id, state, r.action), timeout, cost_key=env_id)
            for (state, _), r in zip(opened, requests, strict=True)
        ]
        stamp = self.env_stamp(env)
        outcomes: list[Outcome[Any]] = await self._run("step", env_id, calls)
        responses: list[tuple[StepResponse, View | None]] = []
        for index, (request, outcome) in enumerate(zip(requests, outcomes, strict=True)):
            refused = self._refused(outcome, batch)
            if outcome.value is None:
                status = REFUSED if refused is not None else outcome.status
                self.metrics.scored("step", self.label(env_id), status, None, "")
                failed = StepResponse(
                    status=outcome.status,
                    detail=refused.detail if refused is not None else outcome.detail,
                    state=request.state,
                    scorer=stamp.scorer,
                    digest=stamp.digest,
                    problem=refused.document() if refused is not None else None,
                )
                responses.append((failed, None))
                continue
            result, view = self._drawn(env_id, outcome.value)
            score = result.score
            self.metrics.scored(
                "step", self.label(env_id), score.status, score.reward, request.action
            )
            label = opened[index][1]
            if (
                label is not None
                and score.reward is not None
                and (result.terminated or result.truncated)
            ):
                self._record(label.owner, label.run, env, label.task_id, score.reward)
            reply = StepResponse(
                status=score.status,
                detail=score.detail,
                observation=result.observation,
                reward=score.reward,
                components=score.components,
                metrics=score.metrics,
                terminated=result.terminated,
                truncated=result.truncated,
                state=self._issue(env, result.state, label),
                info=result.info,
                scorer=stamp.scorer,
                digest=stamp.digest,
            )
            responses.append((reply, view))
        return responses

    async def expand(self, env_id: str, request: ExpandRequest) -> ExpandResponse:
        """Expand the goal in ``request.state`` for tree search."""
        env = self.env(env_id)
        if not isinstance(env, Expandable):
            raise Problem(
                400,
                f"{env_id} does not support expand (it is not a tree search environment)",
                kind=ProblemKind.NOT_EXPANDABLE,
            )
        state, label = self._open(request.state, env, None)
        stamp = self.env_stamp(env)
        call = Call(
            worker.expand,
            (env_id, state, request.actions),
            self._timeout(None, env.spec.timeout_s),
            cost_key=env_id,
        )
        outcome: Outcome[list[Expansion]] = (await self._run("expand", env_id, [call]))[0]
        self._refused(outcome, batch=False)
        self.metrics.items.labels("expand", self.label(env_id), outcome.status).inc()
        if outcome.value is None:
            return ExpandResponse(
                status=outcome.status,
                detail=outcome.detail,
                scorer=stamp.scorer,
                digest=stamp.digest,
            )
        return ExpandResponse(
            scorer=stamp.scorer,
            digest=stamp.digest,
            expansions=[
                ExpansionReply(
                    action=expansion.action,
                    status=expansion.score.status,
                    detail=expansion.score.detail,
                    branches=[
                        BranchReply(
                            name=branch.name,
                            observation=branch.observation,
                            state=self._issue(env, branch.state, label),
                            terminated=branch.terminated,
                            reward=branch.reward,
                            info=branch.info,
                        )
                        for branch in expansion.branches
                    ],
                )
                for expansion in outcome.value
            ],
        )

    # --- verification --------------------------------------------------------------------------

    def _verify_call(self, request: VerifyRequest, item: VerifyItem, index: int) -> _Planned:
        if item.task_id is not None:
            env, task, options = self._task(item.task_id, index)
            if env.spec.kind != "single_turn":
                raise Problem(
                    400,
                    f"items.{index}.task_id: {task.env} is a multi-turn environment; "
                    "drive it with reset/step",
                    kind=ProblemKind.NOT_SINGLE_TURN,
                )
            timeout = self._timeout(request.timeout_s, env.spec.timeout_s)
            args: tuple[Any, ...] = (
                task.env,
                task.seed,
                worker.sent(options),
                item.response,
            )
            call = Call(worker.score_task, args, timeout, cost_key=task.env)
            return _Planned(task.env, call, self.env_stamp(env), (env, task.seed, options))
        if request.verifier is None:
            raise Problem(
                422,
                f"items.{index}: an item with a reference needs the request's 'verifier'",
                kind=ProblemKind.VALIDATION_ERROR,
            )
        check = self.verifier(request.verifier)
        options = _validate_options(
            check.options_model, {**request.options, **(item.options or {})}, index, "options"
        )
        args = (check.name, item.response, item.reference, worker.sent(options))
        timeout = self._timeout(request.timeout_s, check.timeout_s)
        call = Call(worker.verify, args, timeout, cost_key=check.name)
        return _Planned(check.name, call, self.provenance.of_verifier(check), None)

    async def verify(self, request: VerifyRequest) -> VerifyResponse:
        """Score every item; results in request order, each with its own status."""
        self.check_batch(len(request.items))
        planned = [self._verify_call(request, item, i) for i, item in enumerate(request.items)]
        target = request.verifier or (
            planned[0].target if len({p.target for p in planned}) == 1 else "mixed"
        )
        calls = [p.call for p in planned]
        outcomes: list[Outcome[Score]] = await self._run("verify", target, calls)
        counted = self.recorder is not None and request.run is not None
        owner = CALLER.get()
        results = []
        for item, plan, outcome in zip(request.items, planned, outcomes, strict=True):
            refused = self._refused(outcome, batch=True)
            score = outcome.value or Score(
                None,
                outcome.status if outcome.status != "ok" else "error",
                detail=refused.detail if refused is not None else outcome.detail,
            )
            status = REFUSED if refused is not None else score.status
            self.metrics.scored(
                "verify", self.label(plan.target), status, score.reward, item.response
            )
            if counted and plan.task is not None and score.reward is not None:
                env, seed, options = plan.task
                self._record(owner, str(request.run), env, (seed, options), score.reward)
            results.append(
                VerifyResult(
                    id=item.id,
                    reward=score.reward,
                    status=score.status,
                    components=score.components,
                    metrics=score.metrics,
                    detail=score.detail,
                    extra=score.extra,
                    latency_ms=round(outcome.seconds * 1000, 3),
                    scorer=plan.stamp.scorer,
                    digest=plan.stamp.digest,
                    problem=refused.document() if refused is not None else None,
                )
            )
        return VerifyResponse(results=results)
