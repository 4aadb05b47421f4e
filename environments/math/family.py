"""``MathTasks``: the math family (seeded procedural problems with exact answers, scored by
math-verify)."""

from __future__ import annotations

import random

import sympy
from pydantic import Field

from environments.math.kinds import KINDS, Difficulty
from environments.math.problem import Problem
from environments.single_turn import Task, TaskFamily
from verifiers.math import VERIFIER
from verifiers.numbers import Options

FAMILY_ID = "math"
VERSION = "1"
ANSWER_INSTRUCTION = "Put your final answer within \\boxed{}."


def draw_problem(seed: int, difficulty: Difficulty) -> tuple[str, Problem]:
    """The kind name and the problem that ``seed`` names at ``difficulty``."""
    # A str seed is hashed with SHA-512, so it does not depend on PYTHONHASHSEED, and a private
    # generator leaves the global random state alone.
    rng = random.Random(f"{FAMILY_ID}@{VERSION}/{seed}/{difficulty}")
    kind = rng.choice(list(KINDS[difficulty]))
    return kind, KINDS[difficulty][kind](rng)


class MathTaskOptions(Options):
    """What selects a math task besides its seed."""

    difficulty: Difficulty = Field(
        "medium",
        description="'easy': integer arithmetic, fractions, percentages, means; 'medium': linear "
        "equations, gcd/lcm, polynomial values, 2x2 systems, arithmetic series; 'hard': "
        "quadratics, derivatives, definite integrals, counting, modular arithmetic.",
    )


class MathTasks(TaskFamily[MathTaskOptions]):
    """Seeded procedural math problems with exact answers (a ``TaskFamily``)."""

    id = FAMILY_ID
    version = VERSION
    description = (
        "Procedurally generated math problems with exact answers, at three difficulties: "
        "arithmetic, fractions and percentages; equations, systems, series and number "
        "theory; quadratics, calculus, counting and modular arithmetic. The final answer "
        "goes in \\boxed{} and is checked for mathematical equivalence with math-verify."
    )
    verifier = VERIFIER
    action_format = (
        "Text that ends with the final answer in \\boxed{}; any mathematically equivalent form "
        "(fraction, decimal, surd, set of roots) is accepted."
    )

    def generate(self, seed: int, options: MathTaskOptions) -> Task:
        """The task ``(seed, options)`` names; the same arguments give an identical task in
        every process."""
        kind, problem = draw_problem(seed, options.difficulty)
        return Task(
            prompt=f"{problem.statement}\n\n{ANSWER_INSTRUCTION}",
            reference=sympy.latex(problem.answer),
            metadata={"difficulty": options.difficulty, "kind": kind},
        )

    def cheap_generation(self, options: MathTaskOptions) -> bool:
        """Easy and medium tasks are integer and fraction arithmetic on small random numbers
        (p99 under 0.1 ms, no search); hard ones solve quadratics and integrals with sympy,
        whose first calls on a new expression take up to a tenth of a second."""
        return options.difficulty != "hard"

    def expert_response(self, task: Task) -> str:
        """A short response that ends with the reference answer boxed."""
        return (
            f"Working through the problem carefully, the answer is $\\boxed{{{task.reference}}}$."
        )
