"""How the five levels become a reward: hierarchical weights, binary, curriculum presets.

Level i pays its weight only when levels 1..i all pass (GenCircuit-RL's multiplicative
dependency): R = Σᵢ wᵢ · ∏_{j ≤ i} passⱼ / Σᵢ wᵢ, so a circuit passing every level earns 1.
``binary`` pays 1 only then. The four curriculum stages shift weight from writing code that runs
towards functional correctness, as the paper's four-stage curriculum does; the paper does not
publish its weights, so these are ours (see the family README).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from verifiers.numbers import Options

LEVELS = ("L1_execution", "L2_validity", "L3_structure", "L4_semantics", "L5_function")
TITLES = ("execution", "validity", "structure", "semantics", "function")

Weights = tuple[float, float, float, float, float]
PRESETS: dict[str, Weights] = {
    "uniform": (0.2, 0.2, 0.2, 0.2, 0.2),
    "stage1": (0.40, 0.30, 0.15, 0.10, 0.05),  # code that runs and leaves a valid document
    "stage2": (0.15, 0.20, 0.30, 0.20, 0.15),  # well-formed units from the library
    "stage3": (0.05, 0.10, 0.20, 0.30, 0.35),  # well-typed interactions and the function
    "stage4": (0.00, 0.05, 0.10, 0.25, 0.60),  # functional reasoning
}
Preset = Literal["uniform", "stage1", "stage2", "stage3", "stage4"]


class CircuitOptions(Options):
    """How levels become a reward, the run's limits, and what comes back besides."""

    reward: Literal["hierarchical", "binary"] = Field(
        "hierarchical",
        description="hierarchical: weighted sum over the levels passed in a row from L1; "
        "binary: 1 only when all five levels pass.",
    )
    preset: Preset = Field(
        "uniform",
        description="Level weights: 'uniform' (0.2 each) or a curriculum stage: 'stage1' "
        "(0.40 0.30 0.15 0.10 0.05, code that runs), 'stage2' (0.15 0.20 0.30 0.20 0.15, "
        "structure), 'stage3' (0.05 0.10 0.20 0.30 0.35, semantics), 'stage4' (0 0.05 0.10 0.25 "
        "0.60, function).",
    )
    weights: Weights | None = Field(
        None, description="Custom weights for L1..L5 (non-negative, any scale); overrides preset."
    )
    time_limit_s: float = Field(10.0, gt=0, le=60, description="The program's wall-clock limit.")
    memory_mb: int = Field(1024, ge=256, le=4096, description="The program's address space.")
    diagram: bool = Field(
        False, description="Return an SVG diagram of the candidate's circuit in extra.svg."
    )

    @field_validator("weights")
    @classmethod
    def _weights(cls, weights: Weights | None) -> Weights | None:
        if weights is not None and (min(weights) < 0 or sum(weights) <= 0):
            raise ValueError("weights must be non-negative with a positive sum")
        return weights

    def level_weights(self) -> Weights:
        """The weights in force, normalised to sum to 1."""
        raw = self.weights or PRESETS[self.preset]
        total = sum(raw)
        return tuple(w / total for w in raw)  # type: ignore[return-value]


def combine(passed: int, options: CircuitOptions) -> float:
    """The reward when levels 1..``passed`` pass and the next one (if any) fails."""
    if options.reward == "binary":
        return float(passed == len(LEVELS))
    return round(sum(options.level_weights()[:passed]), 10)


def components(passed: int) -> dict[str, float]:
    """One component per level: 1 passed, 0 failed or not reached."""
    return {name: float(i < passed) for i, name in enumerate(LEVELS)}


def metrics(passed: int) -> dict[str, float]:
    """The count of levels passed in a row from L1."""
    return {"levels_passed": float(passed)}
