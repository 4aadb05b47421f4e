"""The generic adapter that turns a task family (generator + verifier) into an environment.

A single-turn family writes no environment class: it provides a ``TaskFamily`` and gets reset,
step, task-id scoring and the ``max_attempts`` multi-turn option from ``SingleTurnEnvironment``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, Generic, Literal, TypeVar, cast

from pydantic import BaseModel, Field, ValidationError, create_model

from environments.base import (
    EnvironmentInputError,
    EnvSpec,
    EpisodeFinished,
    JSONValue,
    Observation,
    ResetResult,
    StepResult,
)
from verifiers.base import Verifier
from verifiers.numbers import Options
from verifiers.score import Score

MAX_ATTEMPTS_LIMIT = 20
OptionsT = TypeVar("OptionsT", bound=BaseModel)


@dataclass(frozen=True)
class Task:
    """One generated task. ``reference`` stays on the server; ``metadata`` may be shown;
    ``verifier_options`` are how this task's responses are checked (the verifier's defaults
    where empty)."""

    prompt: Observation
    reference: JSONValue
    metadata: dict[str, JSONValue] = field(default_factory=dict)
    verifier_options: dict[str, JSONValue] = field(default_factory=dict)


class TaskFamily(ABC, Generic[OptionsT]):
    """What a single-turn family provides: its catalogue entry as plain class attributes, and a
    pure generator (``benchmarks/plugins/letters.py`` is a whole family in one small file).
    ``TaskFamily[MathTaskOptions]`` names the options model once: ``options_model`` is read
    from it (a family whose model is made at run time sets ``options_model`` itself).

    ``id`` is the environment id (``math``, ``opt/knapsack``); ``version`` is part of every task
    id: bump it whenever a seed would generate a different task; ``description`` is one
    paragraph for the catalogue; ``options_model`` holds what selects a task besides its seed
    (difficulty and the like); ``verifier`` scores responses against ``Task.reference``;
    ``action_format`` tells the policy what to answer; ``observation_format`` is ``text`` or
    ``chat``. The options every method gets were validated once, where the request came in.
    """

    id: str
    version: str
    description: str
    options_model: type[OptionsT]
    verifier: Verifier
    action_format: str
    observation_format: Literal["text", "chat"] = "text"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in cls.__dict__.get("__orig_bases__", ()):
            for model in getattr(base, "__args__", ()):
                if isinstance(model, type) and issubclass(model, BaseModel):
                    cls.options_model = cast(Any, model)

    @abstractmethod
    def generate(self, seed: int, options: OptionsT) -> Task:
        """The task that ``(seed, options)`` names; the same arguments give an identical task
        in every process."""

    @abstractmethod
    def expert_response(self, task: Task) -> str:
        """A response that earns the full reward."""

    def reference(self, task: Task) -> JSONValue:
        """What responses to ``task`` are scored against: ``task.reference`` itself, unless the
        family completes it here (an exact optimum that takes seconds to prove), so that
        ``generate``, and with it every reset, stays cheap and the cost is paid only when a
        score needs it. The family caches what it computes here."""
        return task.reference

    def cheap_generation(self, options: OptionsT) -> bool:
        """Whether ``generate`` with ``options`` is cheap for every seed: bounded by design and
        well under a millisecond (see ``environments.base.CheapReset``). Only then does the
        server generate in its own process instead of on the pool; say so only when it holds."""
        return False


class _AttemptOptions(Options):
    max_attempts: int = Field(
        1,
        ge=1,
        le=MAX_ATTEMPTS_LIMIT,
        description="Attempts per episode. Above 1 a wrong answer gets feedback and the episode "
        "continues; the episode ends at the first fully correct answer.",
    )


@cache
def with_attempts(model: type[OptionsT]) -> type[OptionsT]:
    """``model`` with ``max_attempts``: a subclass, so that its instances are the family's
    options as they are, passed on without another validation."""
    return cast(
        type[OptionsT],
        create_model(f"{model.__name__}WithAttempts", __base__=(model, _AttemptOptions)),
    )


class SingleTurnEnvironment(Generic[OptionsT]):
    """A ``TaskFamily`` served as an environment (satisfies ``Environment`` and
    ``SingleTurnScoring``)."""

    def __init__(self, family: TaskFamily[OptionsT]) -> None:
        self._family = family
        options_model = with_attempts(family.options_model)
        self._spec = EnvSpec(
            id=family.id,
            version=family.version,
            description=family.description,
            kind="single_turn",
            action_format=family.action_format,
            observation_format=family.observation_format,
            options_model=options_model,
            verifier=family.verifier.name,
            timeout_s=family.verifier.timeout_s,
        )
        # Regenerating a task is deterministic, so a worker may keep recent ones.
        self._task = lru_cache(maxsize=4096)(self._generate)

    @property
    def spec(self) -> EnvSpec:
        """The catalogue entry."""
        return self._spec

    def _generate(self, seed: int, options: OptionsT) -> Task:
        return self._family.generate(seed, options)

    def _options_from_state(self, state: JSONValue) -> tuple[int, OptionsT, int]:
        # A step's one validation of its options: they come back as JSON in the state.
        try:
            seed = int(state["seed"])
            options = cast(OptionsT, self._spec.options_model.model_validate(state["options"]))
            attempt = int(state["attempt"])
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            raise EnvironmentInputError(f"not a state of {self._spec.id}: {exc}") from None
        if state.get("done"):
            raise EpisodeFinished("this episode has ended; reset to start a new one")
        return seed, options, attempt

    def _score(self, task: Task, response: str) -> Score:
        verifier = self._family.verifier
        reference = self._family.reference(task)
        return verifier(response, reference, verifier.options_model(**task.verifier_options))

    def cheap_reset(self, options: OptionsT) -> bool:
        """A reset is a generation: cheap when the family says its generation is."""
        return self._family.cheap_generation(options)

    def reset(self, seed: int, options: OptionsT) -> ResetResult:
        """The task's prompt; the state records the task and the attempts used."""
        task = self._task(seed, options)
        state = {"seed": seed, "options": options.model_dump(mode="json"), "attempt": 0}
        return ResetResult(task.prompt, state, {"metadata": dict(task.metadata)})

    def step(self, state: JSONValue, action: str) -> StepResult:
        """Score the answer; with attempts left, a wrong answer gets feedback and continues."""
        seed, options, attempt = self._options_from_state(state)
        task = self._task(seed, options)
        score = self._score(task, action)
        max_attempts: int = getattr(options, "max_attempts", 1)
        if score.status in ("timeout", "error"):
            # Infrastructure failed: the attempt is not consumed and the state does not move.
            info = {
                "metadata": dict(task.metadata),
                "attempt": attempt,
                "max_attempts": max_attempts,
            }
            return StepResult("", score, False, False, state, info)
        attempt += 1
        solved = score.reward is not None and score.reward >= 1.0
        done = solved or attempt >= max_attempts
        next_state = {**state, "attempt": attempt, "done": done}
        if done:
            observation = ""
        else:
            reason = score.detail or "the answer is not correct"
            observation = (
                f"Attempt {attempt} of {max_attempts} was not accepted: {reason}. Try again."
            )
        info = {"metadata": dict(task.metadata), "attempt": attempt, "max_attempts": max_attempts}
        return StepResult(observation, score, done, False, next_state, info)

    def expert_action(self, state: JSONValue) -> str:
        """The family's reference response for the state's task."""
        seed, options, _ = self._options_from_state(state)
        return self._family.expert_response(self._task(seed, options))

    def score_response(self, seed: int, options: OptionsT, response: str) -> Score:
        """Score one response for a task without an episode (``/v1/verify`` by task id)."""
        return self._score(self._task(seed, options), response)
