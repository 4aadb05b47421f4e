"""What a verifier is: a named, versioned pure function with an options schema."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from verifiers.score import Score


class NoOptions(BaseModel):
    """Options schema of a check that takes none."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Verifier:
    """A pure check ``(response, reference, options) -> Score``.

    ``reference`` is whatever JSON value the family's references are (a LaTeX answer for math,
    hidden tests for code). ``options`` is validated against ``options_model`` before the call;
    it is a pydantic model because it arrives from the wire and its JSON Schema is published in
    the catalogue. ``timeout_s`` is the default hard limit per item; the server kills the worker
    when it is exceeded. ``example`` is a ``(response, reference)`` pair that scores 1: the
    contract tests check it, and workers run it once at start-up so the first real item is warm.
    """

    name: str
    version: str
    description: str
    check: Callable[[str, Any, Any], Score]
    options_model: type[BaseModel] = NoOptions
    timeout_s: float = 10.0
    example: tuple[str, Any] | None = None

    def __call__(self, response: str, reference: Any, options: BaseModel | None = None) -> Score:
        """Score ``response`` against ``reference``; options default to the model's defaults."""
        return self.check(response, reference, options or self.options_model())
