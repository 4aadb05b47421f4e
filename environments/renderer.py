"""How a family shows its episodes to a person in the playground (``/play``).

Without a renderer the playground shows an episode as plain text (or chat messages) and a box
for the action. A family that wants more (buttons for the actions it lists, a store page, a
diagram, a verdict a person can read) lists ``renderers={env_id: renderer}`` in its contents
(``environments.family.Contents``). ``ListedActions`` is the renderer of a family whose ``info``
lists the actions a step can take (under the key its ``EnvSpec.actions_key`` names: the
registry checks that the two agree). A renderer is a Jinja2 template plus a ``context``
function:

- ``context(state, turn)`` runs in the worker process that ran the reset or step, right after
  it and in the same call (where the family's engine and data live): ``state`` is the state the
  reset or step returned, ``turn`` the reply and the action taken. It returns the values the
  template reads (JSON values, dataclasses, ``markupsafe.Markup`` for markup the family built
  and escaped itself) and must not change anything. An exception leaves the page with the plain
  view; the call's time limit covers the step and the context together.
- The template is rendered by the server with autoescape on, as ``view`` (the context),
  ``turn`` (the reply shown) and ``env`` (the catalogue entry). It is included inside the
  playground's page, so it holds no ``<form>`` of its own: it makes buttons and text boxes with
  the playground's macros, ``{% import "play/controls.html" as controls with context %}``:
  ``controls.action(action, label)`` is a button that sends ``action``;
  ``controls.text_action(compose, label, ...)`` is a text box and button that send ``compose``
  with ``{}`` replaced by the text typed (Enter in the box sends it too).
- ``templates`` is the family's template folder (package data). Template names start with a
  folder named for the family (``webshop/store.html``), as every family's folder is searched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from environments.base import JSONValue, Observation, ResetResult, StepResult

TEMPLATES = Path(__file__).parent / "templates"
"""The templates of the renderers this module provides."""


@dataclass(frozen=True)
class Turn:
    """The reply the page shows: the reset's (``reward`` None, ``action`` "") or the last
    step's, with the action that step took."""

    observation: Observation | None
    info: dict[str, JSONValue] = field(default_factory=dict)
    status: str = "ok"
    detail: str = ""
    reward: float | None = None
    components: dict[str, float] = field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    action: str = ""
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def ended(self) -> bool:
        """Whether the episode is over (terminated or truncated)."""
        return self.terminated or self.truncated

    @classmethod
    def after(cls, result: ResetResult | StepResult, action: str = "") -> Turn:
        """The turn ``result`` is: a reset's, or the step's that took ``action``."""
        if isinstance(result, ResetResult):
            return cls(result.observation, result.info)
        score = result.score
        return cls(
            result.observation,
            result.info,
            score.status,
            score.detail,
            score.reward,
            score.components,
            result.terminated,
            result.truncated,
            action,
            score.metrics,
        )


@runtime_checkable
class Renderer(Protocol):
    """A family's view of its episodes in the playground."""

    @property
    def templates(self) -> Path:
        """The folder holding the family's templates."""
        ...

    @property
    def template(self) -> str:
        """The template that shows one turn, e.g. ``"webshop/store.html"``."""
        ...

    def context(self, state: JSONValue, turn: Turn) -> dict[str, Any]:
        """The values ``template`` reads as ``view``, for the episode in ``state`` after
        ``turn``. Runs in a worker; raises ``EnvironmentInputError`` for a state it cannot
        read."""
        ...


@dataclass(frozen=True)
class ListedActions:
    """The plain view with a button for each action ``info[key]`` lists (at most ``limit``;
    none once the episode ended), for a family that lists the actions a step can take."""

    key: str
    limit: int = 500
    templates: Path = TEMPLATES
    template: str = "listed/actions.html"

    def context(self, state: JSONValue, turn: Turn) -> dict[str, Any]:
        """The actions to offer as buttons."""
        listed = turn.info.get(self.key)
        if turn.ended or not isinstance(listed, list):
            return {"actions": []}
        return {"actions": [str(action) for action in listed[: self.limit]]}
