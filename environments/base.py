"""The Environment contract: a pure ``reset``/``step`` over JSON states the client carries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel

from verifiers.base import Unavailable
from verifiers.score import Score

JSONValue = Any
"""A value that ``json.dumps`` accepts: episode states, info and references are all JSON."""

Observation = str | list[dict[str, str]]
"""Plain text, or chat messages ``[{"role": ..., "content": ...}]``."""

EnvKind = Literal["single_turn", "multi_turn"]


class EnvironmentInputError(ValueError):
    """The caller's input cannot be used (bad state content, unknown task); maps to HTTP 400."""


class EpisodeFinished(EnvironmentInputError):
    """``step`` was called on a state whose episode already ended; maps to HTTP 409."""


class EnvironmentUnavailable(RuntimeError):
    """The request is fine but this server cannot serve it, for a reason of its configuration (a
    missing prover binary, unreadable data); maps to HTTP 503 with the reason and the fix."""

    def __init__(self, why: Unavailable) -> None:
        super().__init__(why)
        self.why = why

    def __str__(self) -> str:
        return str(self.why)


class EnvironmentGone(LookupError):
    """The environment was served once and is no longer (retired); its task ids and state
    tokens get this reason; maps to HTTP 410."""


@dataclass(frozen=True)
class EnvSpec:
    """What the catalogue publishes about an environment.

    ``version`` is part of every task id and state token: bump it whenever the same seed would
    produce a different task or a state would be read differently.
    """

    id: str
    version: str
    description: str
    kind: EnvKind
    action_format: str
    observation_format: Literal["text", "chat"]
    options_model: type[BaseModel]
    verifier: str | None = None
    timeout_s: float = 10.0
    max_episode_steps: int | None = None
    actions_key: str | None = None
    """The ``info`` key whose list of strings holds the actions valid now, where there is a
    finite set (what an agent's tool result or a page shows as the choices)."""
    family: str = ""
    """The family that declares the environment. Optional: the catalogue reads it from the
    declarations (the family whose namespace holds the id); one stated here must agree."""


@dataclass(frozen=True)
class ResetResult:
    """The first observation of an episode and the state the client carries to the next step."""

    observation: Observation
    state: JSONValue
    info: dict[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True)
class StepResult:
    """One transition. ``score`` says how the action was judged; its reward is the step's reward."""

    observation: Observation
    score: Score
    terminated: bool
    truncated: bool
    state: JSONValue
    info: dict[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Branch:
    """One sub-goal an action leads to, for AND/OR tree search: all branches of an action must
    be solved. ``terminated`` with ``reward`` set means the branch alone ends the episode."""

    name: str
    observation: Observation
    state: JSONValue
    terminated: bool
    reward: float | None
    info: dict[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Expansion:
    """What one action does to a state, without committing to it: its branches (none when the
    action closes the goal). ``score`` says whether the action could be applied."""

    action: str
    score: Score
    branches: tuple[Branch, ...] = ()


@runtime_checkable
class Environment(Protocol):
    """A stateless environment: every call gets everything it needs and keeps nothing.

    ``reset`` must be a pure function of ``(seed, options)``: the same arguments give a
    byte-identical first observation and state on every machine. ``options`` is always an
    instance of ``spec.options_model``, validated once where the request came in (typed
    ``Any`` here so that each environment can name its own model). ``step`` must be a pure
    function of ``(state, action)``. Both run in worker processes.
    """

    @property
    def spec(self) -> EnvSpec:
        """The environment's catalogue entry."""
        ...

    def reset(self, seed: int, options: Any) -> ResetResult:
        """Start the episode that ``(seed, options)`` names."""
        ...

    def step(self, state: JSONValue, action: str) -> StepResult:
        """Apply ``action``; raises ``EpisodeFinished`` on an ended episode."""
        ...

    def expert_action(self, state: JSONValue) -> str:
        """An action a perfect agent would take in ``state``; used by the contract tests and
        demos, never served over HTTP (it may reveal the reference)."""
        ...


@runtime_checkable
class Expandable(Protocol):
    """An environment whose states can be expanded for tree search (MCTS)."""

    def expand(self, state: JSONValue, actions: Sequence[str] | None = None) -> list[Expansion]:
        """Apply each of ``actions`` (default: every valid one) to ``state`` independently.
        Raises EnvironmentInputError for an action that is not valid there."""
        ...


@runtime_checkable
class CheapReset(Protocol):
    """An environment some of whose resets are cheap: bounded by design (a seeded generation
    with no search, no solver and no input from the caller beyond validated options) and well
    under a millisecond. The server runs those in its own process, skipping the pool hop that
    costs twenty times the work; anything that may hang or grow stays on the pool under its
    hard time limit."""

    def cheap_reset(self, options: Any) -> bool:
        """Whether resetting with ``options`` is cheap in that sense, whatever the seed."""
        ...


@runtime_checkable
class SingleTurnScoring(Protocol):
    """An environment that can score one response for a task without an episode."""

    def score_response(self, seed: int, options: Any, response: str) -> Score:
        """Score ``response`` for the task ``(seed, options)`` names."""
        ...


@runtime_checkable
class DynamicEnvironments(Protocol):
    """Environments a family adds and removes while the server runs (kept in a store, say),
    made from the family's resources by its ``Extension.dynamic`` (``environments.extension``).
    Every process asks it, the server and its workers alike, so what it returns must follow
    from shared state, not from this process."""

    def find(self, env_id: str) -> Environment | None:
        """The environment ``env_id`` if this source serves it now, None if it never knew it;
        raises ``EnvironmentGone`` for one it retired."""
        ...

    def listing(self) -> Sequence[Environment]:
        """Every environment it serves now, for the catalogue."""
        ...
