"""What a task asks for: the reference of an ``sbol.circuit`` item (JSON, never shown).

``check`` selects the function level's test:

- ``function`` (design from a specification): the document's circuit must be of type
  ``circuit`` (and ``size`` where it has one), compute ``truth_table`` over ``inputs`` at
  ``output`` when given, and draw its regulators from ``repressors``;
- ``exact`` (repair, completion, substitution): its signed gene graph must equal ``edges``;
- ``isomorphic`` (gate assignment, topology identification): its gene graph must equal
  ``edges`` after renaming the abstract nodes ``G1``, ``G2``... to distinct repressors from
  ``repressors`` (inputs and the reporter keep their names).

``parts`` is the library the task offers: a design may use other parts unless
``listed_parts_only`` asks for these only. ``required`` are the parts that must be used;
``repressors`` (the offered regulators, activators included), ``at_least_one_of`` (held-out
repressors for out-of-distribution tasks) and ``forbidden`` constrain the regulators.
``activation`` admits stimulation (activators, hybrid promoters); without it every regulation
must be an inhibition. ``feed_forward`` asks a feed-forward loop to be coherent or incoherent.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from verifiers.sbol.design import CircuitType

MAX_PROGRAM_CHARS = 100_000


class CircuitSpec(BaseModel):
    """The reference of one task."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    circuit: CircuitType
    check: Literal["function", "exact", "isomorphic"]
    parts: list[str] = Field(..., min_length=1, description="Library part names allowed.")
    required: list[str] = Field(default_factory=list, description="Parts that must be used.")
    inputs: list[str] = Field(default_factory=list, description="Input promoters, in order.")
    output: str | None = Field(None, description="The reporter CDS whose expression is read.")
    truth_table: list[int] | None = Field(None, description="Output per input row (MSB first).")
    size: int | None = Field(None, ge=1, description="Ring size or cascade length.")
    edges: list[tuple[str, str, int]] | None = Field(
        None, description="The expected gene graph (exact and isomorphic checks)."
    )
    repressors: list[str] | None = Field(None, description="The regulators may only be these.")
    at_least_one_of: list[str] = Field(default_factory=list)
    forbidden: list[str] = Field(default_factory=list)
    distinct: bool = Field(
        False,
        description="Each regulator expressed from one unit only (a task asking for that layout; "
        "by default one unit or several expressing the same regulator are equal).",
    )
    listed_parts_only: bool = Field(False, description="Only the parts in ``parts`` may be used.")
    activation: bool = Field(False, description="Activators and stimulation are admitted.")
    feed_forward: Literal["coherent", "incoherent"] | None = Field(
        None, description="The class of feed-forward loop asked for."
    )
