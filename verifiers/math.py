"""Math answers: extraction and equivalence with HuggingFace ``math-verify``.

``math-verify`` guards its own parsing and comparison with ``SIGALRM`` and, on a timeout, quietly
answers "not equal", which would score a correct answer 0. This verifier asks it to raise instead
and reports status ``timeout``. It must run in a process's main thread; the server's worker
processes do, and the server enforces its own hard limit from outside by killing the worker.

math-verify also evaluates what it parses, so restating a problem ("\\boxed{3 + 4 \\cdot 5}",
"\\binom{10}{3}", "\\int_0^2 x\\,dx") would be "equivalent" to its answer. Unless the reference
itself is written that way, an answer that still holds arithmetic on plain numbers is not a
final answer here: it is ``invalid``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import product
from typing import Any, Literal

import sympy
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify
from math_verify.errors import TimeoutException
from pydantic import Field

from verifiers.base import Verifier
from verifiers.numbers import Options
from verifiers.score import Score

# math-verify's own limits (whole seconds), below the server's hard per-item limit.
_PARSE_TIMEOUT_S = 3
_COMPARE_TIMEOUT_S = 3

# A boxed answer wins over "the answer is ..." and over the last expression in the text.
_RESPONSE_TARGETS = (LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig())
_REFERENCE_TARGETS = (LatexExtractionConfig(), ExprExtractionConfig())


class MathOptions(Options):
    """How a math answer is extracted and compared."""

    extraction: Literal["auto", "boxed"] = Field(
        "auto",
        description="'auto': the last \\boxed{} answer, else a stated final answer, else the last "
        "expression; 'boxed': only the last \\boxed{} answer counts.",
    )
    float_rounding: int = Field(6, ge=0, le=12, description="Decimal places floats are rounded to.")
    allow_unevaluated: bool = Field(
        False,
        description="Accept answers that still contain arithmetic on plain numbers "
        "(3 + 4 \\cdot 5, 2^{10}, \\binom{10}{3}, 10!) when the reference is a plain value. Off by "
        "default: such an answer restates the problem instead of solving it.",
    )


# Commands that math-verify evaluates while parsing, so only the text still shows them.
_EAGER_ARITHMETIC = re.compile(r"\\[dt]?binom|\\choose|[0-9)]\s*!(?!=)")


def _is_number_form(node: sympy.Basic) -> bool:
    # How a plain number is written: n, -x, 1/n, a/b (also "1/2." read as 1/2.0).
    if node.is_Number:
        return True
    if isinstance(node, sympy.Pow):
        return bool(node.exp == -1 and node.base.is_Number)
    if isinstance(node, sympy.Mul) and len(node.args) == 2:
        first, second = node.args
        if first == -1:
            return _is_number_form(second)
        return bool(first.is_Number) and isinstance(second, sympy.Pow) and _is_number_form(second)
    return False


def leftover_arithmetic(answer: Any) -> str | None:
    """The part of a parsed answer (a sympy object or its text) that is still arithmetic on plain
    numbers, e.g. ``3 + 4*5`` or ``10!``; None when the answer is a final value."""
    if isinstance(answer, str):
        match = _EAGER_ARITHMETIC.search(answer)
        return match.group(0) if match else None
    if not isinstance(answer, sympy.Basic):
        return None
    for node in sympy.preorder_traversal(answer):
        if node.is_Atom or node.free_symbols or _is_number_form(node):
            continue
        try:
            value = node.doit()
        except Exception:  # noqa: S112 - what sympy cannot evaluate is not leftover arithmetic
            continue
        if isinstance(value, sympy.Number):
            return str(node)
    return None


def last_boxed(text: str) -> str | None:
    r"""The last ``\boxed{...}`` (or ``\fbox{...}``) in ``text`` with balanced braces, or None."""
    start = max(text.rfind("\\boxed{"), text.rfind("\\fbox{"))
    if start < 0:
        return None
    depth = 0
    for index in range(text.index("{", start), len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return None


@lru_cache(maxsize=4096)
def _parse_reference(reference: str) -> tuple[Any, ...]:
    # A bare reference such as "\frac{1}{2}" or "0.5" is read as one LaTeX expression.
    text = reference if ("$" in reference or "\\boxed" in reference) else f"${reference}$"
    return tuple(
        parse(
            text,
            _REFERENCE_TARGETS,
            fallback_mode="no_fallback",  # a reference sympy cannot read is unusable, not a string
            parsing_timeout=_PARSE_TIMEOUT_S,
            raise_on_error=True,
        )
    )


def _gold(reference: Any) -> tuple[Any, ...] | Score:
    if isinstance(reference, bool) or not isinstance(reference, (str, int, float)):
        return Score.bad_reference("the math reference must be a string or a number")
    try:
        gold = _parse_reference(str(reference))
    except TimeoutException:
        return Score.error("the reference took too long to parse")  # load, maybe: retryable
    except Exception as exc:  # math-verify raises many kinds; all mean an unusable reference
        return Score.bad_reference(f"the reference could not be parsed: {type(exc).__name__}")
    if not gold:
        return Score.bad_reference("the reference could not be parsed")
    if all(isinstance(g, sympy.Basic) and g.has(sympy.nan, sympy.zoo) for g in gold[:1]):
        return Score.bad_reference("the reference is not a finite value")
    return gold


def _answer(response: str, options: MathOptions) -> list[Any] | Score:
    text = last_boxed(response) if options.extraction == "boxed" else response
    if text is None:
        return Score.invalid("no \\boxed{} answer found")
    try:
        predicted: list[Any] = parse(
            text, _RESPONSE_TARGETS, parsing_timeout=_PARSE_TIMEOUT_S, raise_on_error=True
        )
    except TimeoutException:
        return Score.timeout("extracting the answer took too long")
    except Exception:  # an extraction math-verify cannot make is no answer
        predicted = []
    return predicted or Score.invalid("no final answer found")


def _final_value_check(gold: tuple[Any, ...], predicted: list[Any], options: MathOptions) -> Score:
    # Only once the answer is known to be equivalent: a wrong answer needs no such check.
    if not options.allow_unevaluated and not any(map(leftover_arithmetic, gold)):
        leftover = next(filter(None, map(leftover_arithmetic, predicted)), None)
        if leftover is not None:
            return Score.invalid(
                f"the answer is not a final value: it still contains the arithmetic {leftover!r}"
            )
    return Score.ok(1.0, {"correct": 1.0}, "correct")


def check_math(response: str, reference: Any, options: MathOptions) -> Score:
    """1 if the response's final answer is equivalent to ``reference``, else 0.

    Status ``invalid`` when no answer can be extracted, ``timeout`` when math-verify ran out of
    time on every comparison that could have succeeded, ``error`` for an unusable reference.
    """
    gold = _gold(reference)
    if isinstance(gold, Score):
        return gold
    predicted = _answer(response, options)
    if isinstance(predicted, Score):
        return predicted
    timed_out = False
    for gold_item, predicted_item in product(gold, predicted):
        try:
            if verify(
                gold_item,
                predicted_item,
                float_rounding=options.float_rounding,
                timeout_seconds=_COMPARE_TIMEOUT_S,
                raise_on_error=True,
            ):
                return _final_value_check(gold, predicted, options)
        except TimeoutException:
            timed_out = True
        except Exception:  # noqa: S112 - a comparison math-verify cannot make is "not equal"
            continue
    if timed_out:
        return Score.timeout("comparing the answer with the reference took too long")
    answer = predicted[-1] if isinstance(predicted[-1], str) else str(predicted[0])
    return Score.ok(0.0, {"correct": 0.0}, f"the answer {answer[:200]!r} is not correct")


VERIFIER = Verifier(
    name="math",
    version="1",
    description="Final-answer equivalence for math (math-verify): boxed or last-answer "
    "extraction, LaTeX and expression equivalence, numeric tolerance.",
    check=check_math,
    options_model=MathOptions,
    timeout_s=10.0,
    components=("correct",),
    example=("So the answer is $\\boxed{\\frac{1}{2}}$.", "0.5"),
)
