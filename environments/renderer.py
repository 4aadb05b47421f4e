"""How a family shows its episodes to a person in the playground (``/play``).

Without a renderer the playground shows an episode as plain text (or chat messages) with the
actions ``info`` lists as buttons. A family that needs more (a store page, a diagram) exports
``RENDERERS = {env_id: renderer}`` from its package; the registry finds it there. A renderer is
a Jinja2 template plus a ``context`` function:

- ``context(state, turn)`` runs in a worker process (where the family's engine and data live)
  and returns the values the template reads (JSON values, dataclasses, ``markupsafe.Markup``
  for markup the family built and escaped itself). It must not change anything.
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

from environments.base import JSONValue, Observation


@dataclass(frozen=True)
class Turn:
    """The reply the page shows: the reset's (``reward`` None) or the last step's."""

    observation: Observation | None
    info: dict[str, JSONValue] = field(default_factory=dict)
    status: str = "ok"
    detail: str = ""
    reward: float | None = None
    components: dict[str, float] = field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False

    @property
    def ended(self) -> bool:
        """Whether the episode is over (terminated or truncated)."""
        return self.terminated or self.truncated


@runtime_checkable
class Renderer(Protocol):
    """A family's view of its episodes in the playground."""

    templates: Path
    """The folder holding the family's templates."""

    template: str
    """The template that shows one turn, e.g. ``"webshop/store.html"``."""

    def context(self, state: JSONValue, turn: Turn) -> dict[str, Any]:
        """The values ``template`` reads as ``view``, for the episode in ``state`` after
        ``turn``. Runs in a worker; raises ``EnvironmentInputError`` for a state it cannot
        read."""
        ...
