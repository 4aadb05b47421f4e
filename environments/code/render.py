"""Prompts and hidden tests: one problem in each of the three test formats.

``stdin`` is the CodeContests style (a whole program, exact output), ``call`` the style of
function-level benchmarks scored by comparing return values, ``assert`` the MBPP/HumanEval style
(test snippets). The prompt states the exact contract the hidden tests hold the answer to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from environments.code.problem import Args, Problem
from environments.code.programs import (
    OUTPUT_FORMATS,
    cpp_program,
    input_format,
    python_function,
    python_program,
    python_signature,
    to_stdin,
    to_stdout,
)
from sandbox.values import encode

Format = Literal["stdin", "call", "assert"]
Language = Literal["python", "cpp"]
Case = tuple[Args, Any]
"""Arguments and the expected result."""

LANGUAGE_NAMES = {"python": "Python 3", "cpp": "C++17"}


def call_text(problem: Problem, args: Args) -> str:
    """``name(arg, ...)`` with the arguments as Python literals."""
    return f"{problem.name}({', '.join(repr(a) for a in args)})"


def assert_text(problem: Problem, case: Case) -> str:
    """One assert test: plain-data literals only, the function called by its name."""
    args, expected = case
    return f"assert {call_text(problem, args)} == {expected!r}"


def _given(problem: Problem) -> str:
    abouts = [p.about for p in problem.params]
    joined = abouts[0] if len(abouts) == 1 else ", ".join(abouts[:-1]) + " and " + abouts[-1]
    return f"You are given {joined}."


def _fence(text: str, language: str = "") -> str:
    # Exact: a sample output that is one empty line shows as one empty line.
    body = text if not text or text.endswith("\n") else text + "\n"
    return f"```{language}\n{body}```"


def prompt(problem: Problem, fmt: Format, language: Language, example: Case) -> str:
    """The task's text: what to compute, the exact I/O contract, an example, the answer form."""
    rules = f" {problem.rules}" if problem.rules else ""
    fence = "cpp" if language == "cpp" else "python"
    if fmt == "stdin":
        args, expected = example
        inputs = "\n".join(f"- {line}" for line in input_format(problem))
        sample_in = to_stdin(problem, args)
        sample_out = to_stdout(problem.returns, expected)
        return (
            f"Write a complete {LANGUAGE_NAMES[language]} program that reads from standard input "
            "and writes to standard output.\n\n"
            f"{_given(problem)} Print {problem.task}.{rules}\n\n"
            f"Input, in this order:\n{inputs}\n\n"
            f"Output: {OUTPUT_FORMATS[problem.returns]}. Print nothing else.\n\n"
            f"Example input:\n{_fence(sample_in)}\n\n"
            f"Example output:\n{_fence(sample_out)}\n\n"
            f"The program is run once per hidden test. Answer with the whole program in a "
            f"single ```{fence} code block."
        )
    head = (
        f"Write a Python function `{python_signature(problem)}`.\n\n"
        f"{_given(problem)} The function returns {problem.task}.{rules}\n\n"
    )
    if fmt == "call":
        args, expected = example
        return (
            head + f"Example: `{call_text(problem, args)}` returns `{expected!r}`.\n\n"
            f"The function `{problem.name}` is called on hidden arguments and its return value "
            "is compared with the expected one; it must not read input or print. Answer with "
            "the function (and any imports or helpers it needs) in a single ```python code "
            "block."
        )
    return (
        head + f"It will be checked with assert statements such as:\n"
        f"{_fence(assert_text(problem, example), 'python')}\n\n"
        f"Answer with the function `{problem.name}` (and any imports or helpers it needs) in a "
        "single ```python code block; do not include tests."
    )


def tests(problem: Problem, fmt: Format, cases: Sequence[Case]) -> dict[str, Any]:
    """The ``tests`` part of the reference, in the ``code`` verifier's format."""
    items: list[dict[str, Any]]
    if fmt == "stdin":
        items = [
            {"stdin": to_stdin(problem, args), "stdout": to_stdout(problem.returns, expected)}
            for args, expected in cases
        ]
        return {"kind": "stdin", "items": items}
    if fmt == "call":
        items = [
            {"args": encode(list(args)), "kwargs": {}, "expected": encode(expected)}
            for args, expected in cases
        ]
    else:
        items = [{"code": assert_text(problem, case)} for case in cases]
    return {"kind": fmt, "entry_point": problem.name, "items": items}


def solution(problem: Problem, fmt: Format, language: Language) -> str:
    """The trusted reference answer, as a fenced block."""
    if language == "cpp":
        return _fence(cpp_program(problem), "cpp")
    source = python_program(problem) if fmt == "stdin" else python_function(problem)
    return _fence(source, "python")
