"""The page a person plays: one turn of an episode as an HTML fragment (``templates/``).

The playground calls ``render`` with what a reset or step answered and wraps the fragment in
its own form (carrying the state token); each admissible command is a submit button whose value
is the command, posted as ``field``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).parent / "templates"


@cache
def _template() -> Any:
    import jinja2  # noqa: PLC0415 - only the page needs it

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    return environment.get_template("page.html.j2")


def render(
    observation: str,
    info: Mapping[str, Any],
    *,
    reward: float | None = None,
    components: Mapping[str, float] | None = None,
    status: str | None = None,
    detail: str = "",
    finished: bool = False,
    field: str = "action",
) -> str:
    """The fragment for one turn: the task, the observation, the admissible commands as
    buttons, and (after a step) the reward and its components. ``status``/``detail`` are the
    step's; an ``invalid`` step shows its detail as a notice. ``finished`` (the step was
    terminated or truncated) hides the buttons, as a won episode does."""
    task = info.get("task")
    finished = finished or bool(info.get("won"))
    return str(
        _template().render(
            task=task,
            observation=observation,
            commands=[] if finished else list(info.get("admissible_commands") or []),
            reward=reward,
            steps=info.get("steps"),
            components=sorted((components or {}).items()),
            notice=detail if status == "invalid" else "",
            won=bool(info.get("won")),
            field=field,
        )
    )
