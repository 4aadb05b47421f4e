"""ALFWorld in the playground (``environments.renderer``): the task line, the observation, every
admissible command as a button and a box for any other command, and the steps taken.

Everything shown comes from the turn the playground passes (a reset's or step's ``info``), so the
context needs neither the engine nor the game: it is a few dictionary look-ups in the worker.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from environments.alfworld.generator import MAX_STEPS
from environments.base import JSONValue
from environments.renderer import Turn

TEMPLATES = Path(__file__).parent / "templates"


class PageRenderer:
    """The page of an ALFWorld episode."""

    templates = TEMPLATES
    template = "alfworld/page.html"

    def context(self, state: JSONValue, turn: Turn) -> dict[str, Any]:
        """The task, the commands to offer (none once the episode ended), the steps taken."""
        info = turn.info
        commands = [] if turn.ended or info.get("won") else info.get("admissible_commands") or []
        return {
            "task": info.get("task"),
            "commands": [str(command) for command in commands],
            "won": bool(info.get("won")),
            "steps": info.get("steps"),
            "limit": MAX_STEPS,
        }
