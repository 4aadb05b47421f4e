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
    EnvironmentGone,
    EnvironmentInputError,
    EnvironmentUnavailable,
    EpisodeFinished,
    Expandable,
    Expansion,
    ResetResult,
    SingleTurnScoring,
    StepResult,
)
from environments.task_id import MAX_SEED, MAX_TASK_ID_LENGTH, TaskId, TaskIdError
from envserver import worker
from envserver.auth import CALLER
from envserver.config import Settings
from envserver.digests import Provenance, Stamp
from envserver.executor import Call, Executor, Outcome, Overloaded, PoolUnavailable
from envserver.metrics import Metrics
from envserver.problems import Problem
from envserver.registry import Disabled, Registry, UnknownEnvironment, UnknownVerifier
from envserver.stats import Attempt, Label, Recorder, Task
from envserver.tokens import StateTokens, TokenError
from envserver.wire import (
    BranchReply,
    ExpandRequest,
    ExpandResponse,
    ExpansionReply,
    ResetRequest,
    ResetResponse,
    StepRequest,
    StepResponse,
    VerifyItem,
    VerifyRequest,
    VerifyResponse,
    VerifyResult,
)
from verifiers.base import Unavailable, Verifier
from verifiers.score import Score

log = logging.getLogger("envserver")
T = TypeVar("T")
R = TypeVar("R", ResetResult, StepResult)


def _where(index: int | None, *loc: str) -> str:
    return ".".join(([f"items.{index}"] if index is not None else []) + list(loc))


def unavailable_problem(detail: str, why: Unavailable) -> Problem:
    """503 for what this server cannot serve because of its configuration: not the caller's
    fault, and not worth retrying until the fix (also given as ``fix``) is applied."""
    return Problem(
        503, detail, kind="environment-unavailable", extra={"reason": why.reason, "fix": why.fix}
    )


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
            kind="invalid-options",
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
        """The environment; a 404 problem for an unknown one, 503 for a disabled one."""
        try:
            return self.registry.env(env_id)
        except Disabled as exc:
            raise unavailable_problem(str(exc), exc.why) from None
        except UnknownEnvironment as exc:
            raise Problem(404, str(exc), kind="unknown-environment") from None
        except EnvironmentGone as exc:
            raise Problem(410, str(exc), kind="environment-gone") from None

    def verifier(self, name: str) -> Verifier:
        """The verifier; a 404 problem for an unknown one, 503 for a disabled one."""
        try:
            return self.registry.verifier(name)
        except Disabled as exc:
            raise unavailable_problem(str(exc), exc.why) from None
        except UnknownVerifier as exc:
            raise Problem(404, str(exc), kind="unknown-verifier") from None

    def label(self, name: str) -> str:
        """``name`` as a metrics label: an environment or verifier the registry holds (or
        ``mixed``) as is; an environment a family adds while serving (``<family>/<name>``: they
        come and go without bound) as its family's ``<family>/*``, so the series stay bounded."""
        if name in self.registry.envs or name in self.registry.verifiers or name == "mixed":
            return name
        return f"{name.split('/', maxsplit=1)[0]}/*"

    def _timeout(self, requested: float | None, default: float) -> float:
        return min(requested or default, self.settings.max_item_timeout_s)

    def check_batch(self, size: int) -> None:
        if size > self.settings.max_batch_items:
            raise Problem(
                413,
                f"{size} items in one request; the limit is {self.settings.max_batch_items}",
                kind="batch-too-large",
            )

    def _task(self, text: str, index: int | None) -> tuple[Environment, TaskId, BaseModel]:
        try:
            task = TaskId.parse(text)
        except TaskIdError as exc:
            raise Problem(
                400, f"{_where(index, 'task_id')}: {exc}", kind="malformed-task-id"
            ) from None
        env = self.env(task.env)
        if task.version != env.spec.version:
            raise Problem(
                404,
                f"{_where(index, 'task_id')}: task {text!r} is for {task.env}@{task.version}; "
                f"this server serves {task.env}@{env.spec.version}",
                kind="unknown-task",
            )
        try:
            options = env.spec.options_model.model_validate(task.options)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise Problem(
                400,
                f"{_where(index, 'task_id')}: option {'.'.join(map(str, first['loc']))}: "
                f"{first['msg']}",
                kind="malformed-task-id",
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
            raise Problem(
                403 if exc.forbidden else 400,
                f"{_where(index, 'state')}: {exc.detail}",
                kind=exc.kind,
            ) from None
        return state, (Label.opened(label) if label is not None else None)

    def _issue(self, env: Environment, state: Any, label: Label | None = None) -> str:
        try:
            sealed = label.sealed() if label is not None else None
            return self.tokens.issue(env.spec.id, env.spec.version, state, sealed)
        except (TypeError, ValueError) as exc:  # a family bug: its state is not JSON or too big
            raise Problem(500, f"{env.spec.id} produced an unusable state: {exc}") from None

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
        except Overloaded as exc:
            self.metrics.rejected.inc(len(calls))
            raise Problem(
                429,
                f"the server is busy ({exc}); retry later",
                kind="overloaded",
                headers={"Retry-After": str(exc.retry_after_s)},
            ) from None
        except PoolUnavailable as exc:
            raise Problem(
                503,
                f"no pool worker can run the work now ({exc}); retry shortly",
                kind="unavailable",
                headers={"Retry-After": str(exc.retry_after_s)},
            ) from None
        except TimeoutError:
            raise Problem(
                504,
                f"the request did not finish within {self.settings.request_timeout_s:g} s",
                kind="request-timeout",
            ) from None
        for outcome in outcomes:
            if outcome.status != "ok":
                self.metrics.worker_failures.labels(outcome.status).inc()
            self.metrics.item_seconds.labels(kind, self.label(target)).observe(outcome.seconds)
        return outcomes

    @staticmethod
    def _client_error(outcome: Outcome[Any], index: int | None) -> None:
        # Exceptions that mean the caller's input was unusable are request errors, not items.
        if isinstance(outcome.raised, EpisodeFinished):
            raise Problem(
                409, f"{_where(index, 'state')}: {outcome.raised}", kind="episode-finished"
            )
        if isinstance(outcome.raised, EnvironmentInputError):
            raise Problem(400, f"{_where(index)}: {outcome.raised}".lstrip(": "), kind="bad-input")
        # The server found the environment, the worker did not (or no longer): the request
        # names what is not served there, a 404 or 410 like the server's own lookup, never an
        # item with status error and no state.
        if isinstance(outcome.raised, UnknownEnvironment):
            raise Problem(404, str(outcome.raised), kind="unknown-environment")
        if isinstance(outcome.raised, EnvironmentGone):
            raise Problem(410, str(outcome.raised), kind="environment-gone")
        if isinstance(outcome.raised, EnvironmentUnavailable):
            raise unavailable_problem(
                f"{_where(index)}: {outcome.raised}".lstrip(": "), outcome.raised.why
            )
        if outcome.raised is not None:
            log.error(
                "a family raised: %s\n%s",
                outcome.detail,
                getattr(outcome.raised, "traceback", ""),
            )

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
                        kind="foreign-task",
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
            self._client_error(outcome, index if batch else None)
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
            self._client_error(outcome, index if batch else None)
            if outcome.value is None:
                self.metrics.scored("step", self.label(env_id), outcome.status, None, "")
                failed = StepResponse(
                    status=outcome.status,
                    detail=outcome.detail,
                    state=request.state,
                    scorer=stamp.scorer,
                    digest=stamp.digest,
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
                kind="not-expandable",
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
        self._client_error(outcome, None)
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
            if not isinstance(env, SingleTurnScoring):
                raise Problem(
                    400,
                    f"items.{index}.task_id: {task.env} is a multi-turn environment; "
                    "drive it with reset/step",
                    kind="not-single-turn",
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
                kind="validation-error",
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
        for index, (item, plan, outcome) in enumerate(
            zip(request.items, planned, outcomes, strict=True)
        ):
            self._client_error(outcome, index)
            score = outcome.value or Score(
                None, outcome.status if outcome.status != "ok" else "error", detail=outcome.detail
            )
            self.metrics.scored(
                "verify", self.label(plan.target), score.status, score.reward, item.response
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
                    detail=score.detail,
                    extra=score.extra,
                    latency_ms=round(outcome.seconds * 1000, 3),
                    scorer=plan.stamp.scorer,
                    digest=plan.stamp.digest,
                )
            )
        return VerifyResponse(results=results)
