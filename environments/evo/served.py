"""Admitted environments served as ``evo/<name>`` through the generic single-turn adapter, their
code running in the sandbox's warm workers, and ``evo/construct``; the store is the one source of
truth, so every replica and every worker process serves the same ones.

Each lookup reads the store's generation (one primary-key read, bumped by every admission,
retirement and restore) and re-reads the environments only when it moved: a process that
answered ``admitted`` has committed first, so from then on every process, the server's and its
pool workers', on every replica, serves the new environment (a cache trusted for a while let a
pool worker answer "unknown environment" right after ``admitted``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, Field, create_model

from environments.base import Environment, EnvironmentGone
from environments.evo.construct import Construct
from environments.evo.program import (
    CallResult,
    ProgramFailure,
    SandboxFailure,
    run_calls,
    score_call,
    task_call,
)
from environments.evo.resources import EvoResources
from environments.evo.review import several_answers
from environments.evo.store import StoredEnv
from environments.single_turn import SingleTurnEnvironment, Task, TaskFamily
from verifiers.base import Verifier
from verifiers.numbers import Options
from verifiers.score import Score

PREFIX = "evo/"


class _DifficultyOptions(Options):
    """An admitted environment's options: its difficulty (each environment's own model checks
    it against its levels)."""

    difficulty: int


def _score(source: str) -> Callable[[str, Any, Any], Score]:
    def check(response: str, reference: Any, options: Any) -> Score:
        del options
        if several_answers(response):
            # A scorer that reads the last tag would pay "<answer>4</answer> <answer>5</answer>"
            # where 5 is right: a response names one answer or none (issue 38).
            return Score.invalid("several answers: the <answer> tags hold different answers")
        try:
            result = run_calls(source, [score_call(reference["instance"], response)])[0]
        except SandboxFailure as exc:
            return Score.error(f"the sandbox failed: {exc}")
        except ProgramFailure as exc:
            failed = Score.timeout if exc.status == "timeout" else Score.error
            return failed(f"the environment's score failed: {exc}")
        return _scored(result)

    return check


def _scored(result: CallResult) -> Score:
    """What one ``score`` call gave, as a score."""
    if result.error is not None:
        return Score.error(f"the environment's score raised: {result.error}")
    if result.value is None:
        return Score.invalid("no answer could be read (<answer>...</answer>)")
    value = float(result.value)
    if not 0.0 <= value <= 1.0:
        return Score.error(f"the environment scored {value}, outside [0, 1]")
    return Score.ok(value, detail="" if value >= 1.0 else "not accepted")


class EvoTasks(TaskFamily[_DifficultyOptions]):
    """One admitted environment as a task family: tasks and scores from its code."""

    def __init__(self, stored: StoredEnv) -> None:
        levels = stored.difficulties
        self.stored = stored
        self.id = PREFIX + stored.name
        self.version = str(stored.version)
        self.description = stored.description
        self.action_format = stored.answer_format

        def admitted_level(level: int) -> int:
            if level not in levels:
                raise ValueError(f"difficulty must be one of {list(levels)}")
            return level

        # A plain int checked against the levels: task ids carry options as text ("2").
        self.options_model = create_model(
            f"Evo_{stored.name}_Options",
            __base__=_DifficultyOptions,
            difficulty=(
                Annotated[int, AfterValidator(admitted_level)],
                Field(
                    levels[0],
                    description=f"Difficulty level, one of {list(levels)}.",
                    json_schema_extra={"enum": list(levels)},
                ),
            ),
        )
        self.verifier = Verifier(
            name=self.id,
            version=self.version,
            description=f"The admitted environment's own score, run in the sandbox ({self.id}).",
            check=_score(stored.source),
            timeout_s=30.0,
        )

    def generate(self, seed: int, options: _DifficultyOptions) -> Task:
        """The task from the environment's ``generate``, ``prompt`` and ``reference``, made in
        the sandbox; raises RuntimeError when it cannot be made (served as ``error``)."""
        try:
            result = run_calls(self.stored.source, [task_call(seed, options.difficulty)])[0]
        except (SandboxFailure, ProgramFailure) as exc:
            raise RuntimeError(f"{self.id}: the task could not be generated: {exc}") from None
        if result.error is not None:
            raise RuntimeError(f"{self.id}: generate raised: {result.error}")
        task = result.value
        return Task(
            prompt=str(task["prompt"]),
            reference={"instance": task["instance"], "response": task["reference"]},
            metadata={"difficulty": options.difficulty},
        )

    def expert_response(self, task: Task) -> str:
        """The environment's reference response."""
        return str(task.reference["response"])


class EvoPool:
    """``DynamicEnvironments`` over the store: ``evo/construct``, and the admitted, unretired
    environments by name."""

    def __init__(self, resources: EvoResources) -> None:
        self._store = resources.store
        self._construct = Construct(resources)
        self._lock = threading.Lock()
        self._generation: int | None = None
        self._latest: dict[str, StoredEnv] = {}
        self._served: dict[tuple[str, int, str], Environment] = {}

    def _fresh(self) -> dict[str, StoredEnv]:
        store = self._store
        # The generation first: what is read after it is at least that new (a change committed
        # in between only makes the next call read again).
        generation = store.generation()
        with self._lock:
            if generation != self._generation:
                self._latest = {env.name: env for env in store.envs(include_retired=True)}
                self._generation = generation
            return self._latest

    def _served_env(self, stored: StoredEnv) -> Environment:
        key = (stored.name, stored.version, stored.digest)
        with self._lock:
            if key not in self._served:
                self._served[key] = SingleTurnEnvironment(EvoTasks(stored))
            return self._served[key]

    def find(self, env_id: str) -> Environment | None:
        """``evo/construct``, or ``evo/<name>`` if admitted; raises ``EnvironmentGone`` when
        retired."""
        if env_id == self._construct.spec.id:
            return self._construct
        if not env_id.startswith(PREFIX):
            return None
        stored = self._fresh().get(env_id.removeprefix(PREFIX))
        if stored is None:
            return None
        if stored.retired:
            raise EnvironmentGone(
                f"{env_id} (version {stored.version}) was retired; POST "
                f"/v1/evo/envs/{stored.name}/restore serves it again"
            )
        return self._served_env(stored)

    def listing(self) -> Sequence[Environment]:
        """``evo/construct`` and every admitted environment not retired."""
        admitted = [self._served_env(s) for s in self._fresh().values() if not s.retired]
        return [self._construct, *admitted]
