"""``CodeTasks``: the code family (seeded programming problems with hidden tests, run in the
sandbox)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, model_validator

from environments.code import render
from environments.code.kinds import KINDS
from environments.code.problem import SIZES, Args, Difficulty, Problem, Size
from environments.code.render import Case, Format, Language
from environments.single_turn import Task, TaskFamily
from verifiers.code import VERIFIER
from verifiers.numbers import Options

FAMILY_ID = "code"
VERSION = "1"
FORMATS: tuple[Format, ...] = ("stdin", "call", "assert")
TIME_LIMIT_S = 2.0  # per test; every reference solution runs in milliseconds
MAX_DRAWS = 200  # per test, to find fresh arguments; far more than any kind needs


class CodeTaskOptions(Options):
    """What selects a code task besides its seed."""

    difficulty: Difficulty = Field(
        "easy",
        description="'easy': 5 tests, short inputs; 'medium': 8 tests, longer inputs; 'hard': "
        "12 tests, inputs of hundreds of elements and 64-bit numbers, more edge cases.",
    )
    format: Literal["stdin", "call", "assert", "any"] = Field(
        "any",
        description="How the hidden tests run the answer: 'stdin' a whole program on standard "
        "input, output compared exactly; 'call' a function called on arguments, return value "
        "compared; 'assert' a function checked by assert statements; 'any' one of the three, "
        "chosen by the seed ('stdin' for C++).",
    )
    language: Language = Field(
        "python",
        description="The language the answer is written in; 'cpp' (C++17) only with the "
        "'stdin' (or 'any') format.",
    )

    @model_validator(mode="after")
    def _cpp_reads_stdin(self) -> CodeTaskOptions:
        if self.language == "cpp" and self.format not in ("stdin", "any"):
            raise ValueError("language 'cpp' needs format 'stdin' (or 'any')")
        return self


@dataclass(frozen=True)
class CodeTask(Task):
    """A task that also holds its trusted solution, for ``expert_response`` (never sent)."""

    solution: str = ""


def draw_cases(problem: Problem, rng: random.Random, size: Size) -> tuple[Case, list[Case]]:
    """The prompt's example (small, not a test) and the hidden tests: the kind's edge cases
    first, then fresh random arguments; expected results from the trusted ``solve``."""
    example_args = problem.random_case(rng, SIZES["easy"])
    example = (example_args, problem.solve(*example_args))
    seen = {repr(example_args)}
    cases: list[Case] = []

    def add(args: Args) -> None:
        seen.add(repr(args))
        cases.append((args, problem.solve(*args)))

    for args in problem.edge_cases[: size.edge_cases]:
        if repr(args) not in seen:
            add(args)
    for _ in range(MAX_DRAWS * size.tests):
        if len(cases) >= size.tests:
            break
        args = problem.random_case(rng, size)
        if repr(args) in seen:
            continue
        last = len(cases) == size.tests - 1
        if last and len({repr(e) for _, e in cases}) == 1 and problem.solve(*args) == cases[0][1]:
            continue  # tests that all expect the same answer would not tell programs apart
        add(args)
    return example, cases


def draw_problem(seed: int, difficulty: Difficulty) -> tuple[str, Problem, Case, list[Case]]:
    """The kind, problem, example and tests that ``(seed, difficulty)`` name. The format and
    language only change how they are shown, so one seed is the same problem in every format."""
    # A str seed is hashed with SHA-512, so it does not depend on PYTHONHASHSEED, and a private
    # generator leaves the global random state alone.
    rng = random.Random(f"{FAMILY_ID}@{VERSION}/{seed}/{difficulty}")
    kind = rng.choice(list(KINDS))
    problem = KINDS[kind](rng)
    example, cases = draw_cases(problem, rng, SIZES[difficulty])
    return kind, problem, example, cases


def resolve_format(seed: int, options: CodeTaskOptions) -> Format:
    """The test format: the one asked for, or for 'any' one drawn from the seed alone."""
    if options.format != "any":
        return options.format
    if options.language == "cpp":
        return "stdin"
    return random.Random(f"{FAMILY_ID}@{VERSION}/{seed}/format").choice(FORMATS)


class CodeTasks(TaskFamily[CodeTaskOptions]):
    """Seeded programming problems with hidden tests (a ``TaskFamily``)."""

    id = FAMILY_ID
    version = VERSION
    description = (
        f"Procedurally generated programming problems ({len(KINDS)} kinds: list and string "
        "processing, brackets, run-length encoding, anagrams, primes, gcd/lcm, binary "
        "search, subarrays, matrices) with hidden tests, in three test formats: a program "
        "on standard input (Python or C++), a Python function called on arguments, or a "
        "Python function checked by assert statements. Scored in the sandbox by the "
        "'code' verifier: the fraction of hidden tests passed."
    )
    verifier = VERIFIER
    action_format = (
        "The solution in a single fenced code block (```python or, for C++ tasks, ```cpp) in "
        "the form the prompt asks for: a whole program that reads standard input, or a Python "
        "function with the given name and signature."
    )

    def generate(self, seed: int, options: CodeTaskOptions) -> CodeTask:
        """The task ``(seed, options)`` names; the same arguments give an identical task in
        every process."""
        kind, problem, example, cases = draw_problem(seed, options.difficulty)
        fmt = resolve_format(seed, options)
        language = options.language
        return CodeTask(
            prompt=render.prompt(problem, fmt, language, example),
            reference={
                "language": language,
                "tests": render.tests(problem, fmt, cases),
                "time_limit_s": TIME_LIMIT_S,
            },
            metadata={
                "kind": kind,
                "difficulty": options.difficulty,
                "format": fmt,
                "language": language,
                "tests": len(cases),
            },
            solution=render.solution(problem, fmt, language),
        )

    def expert_response(self, task: Task) -> str:
        """The trusted reference solution in a fenced block."""
        if not isinstance(task, CodeTask):
            raise TypeError("expert_response needs a task this family generated")
        return f"A direct solution:\n\n{task.solution}\n"
