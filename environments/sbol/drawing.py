"""SBOL in the playground (``environments.renderer``): the circuit an answer builds, drawn in SBOL
Visual glyphs (``verifiers.sbol.diagram``).

The step's score keeps the circuit only as text, so the drawing scores the answer once more with
``diagram`` on (in the same worker call, with the sandbox the step used): a page costs two runs
of the program, an API step one. An answer that does not get as far as a circuit (its level 4,
semantics, failed: it did not run, or its parts do not read as typed units) is not run again and
has no drawing; the verdict says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from markupsafe import Markup

from environments.base import JSONValue
from environments.renderer import Turn
from environments.sbol.family import SbolOptions
from environments.single_turn import TaskFamily

TEMPLATES = Path(__file__).parent / "templates"


class CircuitDrawing:
    """The diagram of the circuit an SBOL answer builds."""

    templates = TEMPLATES
    template = "sbol/circuit.html"

    def __init__(self, family: TaskFamily[SbolOptions]) -> None:
        self._family = family

    def context(self, state: JSONValue, turn: Turn) -> dict[str, Any]:
        """Nothing before an answer; else the answer's circuit as an SVG (None when the answer
        does not get as far as a circuit)."""
        if not turn.action or "L4_semantics" not in turn.components:
            return {}  # no answer yet, or no verdict (the sandbox failed: the notice says so)
        if turn.components["L4_semantics"] != 1.0:
            return {"svg": None}
        chosen = {k: v for k, v in state["options"].items() if k in SbolOptions.model_fields}
        task = self._family.generate(int(state["seed"]), SbolOptions.model_validate(chosen))
        verifier = self._family.verifier
        options = verifier.options_model.model_validate({**task.verifier_options, "diagram": True})
        drawn = verifier(turn.action, self._family.reference(task), options).extra.get("svg")
        # The diagram escapes every name it draws (they come from the answer).
        return {"svg": None if drawn is None else Markup(drawn)}  # noqa: S704
