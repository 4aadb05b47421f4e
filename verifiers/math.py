"""Math answers: extraction and equivalence with HuggingFace ``math-verify``.

``math-verify`` guards its own parsing and comparison with a wall-clock ``SIGALRM`` and, on a
timeout, quietly answers "not equal", which would score a correct answer 0. This verifier limits
them by CPU time instead (``_cpu_limit``: a busy machine must not time out an answer a quiet one
reads in a fraction of the limit) and reports status ``timeout``. What an answer may ask of them
is bounded before they run (``verifiers/math_bounds.py``), so only a fault reaches the limit. It
must run in a process's main thread; the server's worker processes do, and the server enforces
its own hard limit from outside by killing the worker.

math-verify also evaluates what it parses, so restating a problem ("\\boxed{3 + 4 \\cdot 5}",
"\\binom{10}{3}", "\\int_0^2 x\\,dx") would be "equivalent" to its answer. Unless the reference
itself is written that way, an answer that still holds arithmetic on plain numbers is not a
final answer here: it is ``invalid``.

An answer names one value, or it scores 0 (``verifiers/math_hedges.py`` finds the forms):

- Every boxed answer counts, and each must be equivalent to the reference on its own: a policy
  that boxes 3 and then 4 offered two answers. (math-verify itself reads several boxes
  inconsistently: as a set when they are close, as the last one when they are apart.)
- A box is read as LaTeX whole or not at all: where it does not parse (``3 \\star 4``,
  ``3 \\\\ 4``), math-verify's fallback reads its last number or simple fraction, so such a box
  is ``invalid``.
- An unboxed answer is read whole: where math-verify reads it from plain text, its match may be
  a fragment of a larger expression (``2^{\\frac{1}{2}}`` as 1/2, ``x^2 + 3`` as 3), so the whole
  expression around the match is scored as its box would be (``verifiers/math_unboxed.py``).
- Against a reference that is one value, an answer that lists, relates or signs values
  (``3 \\text{ or } 4``, ``x \\ge 4``, ``\\pm 4``, ``x \\in \\{3, 4\\}``) is not that value; against
  a set, tuple or inequality those are how the answer is written, and math-verify compares it.
- Connectives and tentative words (``3 \\lor 4``, ``4 \\text{ (or 3)}``) score 0 unless the
  reference uses them too: math-verify drops them, and would read what is left as the answer.
- An approximation (``\\approx``, or a decimal that is not exactly an exact reference: 0.142857
  for 1/7) scores 0 unless ``accept_decimal_approximations`` is set. A decimal exactly equal to
  the reference (0.5 for 1/2) is not an approximation; a decimal reference (``0.5``) accepts
  what rounds to it, as math-verify does.
"""

from __future__ import annotations

import signal
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from itertools import chain, product
from typing import Any, Literal

import sympy
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify
from math_verify.errors import TimeoutException
from math_verify.parser import ExtractionTarget
from pydantic import Field

from verifiers.base import Verifier
from verifiers.math_bounds import MAX_ANSWER_CHARS, nesting, too_large, unreadable
from verifiers.math_class import AnswerClass, notation
from verifiers.math_hedges import (
    Marker,
    answer_sentence,
    approximated_value,
    boxed_answers,
    exact_decimals,
    is_single_value,
    markers,
    written_as_decimal,
)
from verifiers.math_unboxed import (
    Extraction,
    Refused,
    extract,
    in_a_row,
    statements,
    whole_expression,
)
from verifiers.numbers import Options
from verifiers.score import Score

# Limits on math-verify's reading and comparing, in seconds of this process's CPU time, below
# the server's hard per-item limit (wall clock).
_PARSE_TIMEOUT_S = 3.0
_COMPARE_TIMEOUT_S = 3.0

# A boxed answer wins over "the answer is ..." and over the last expression in the text.
_RESPONSE_TARGETS = (LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig())
# A box is read as LaTeX, whole, or not at all: where its LaTeX does not parse ("3 \\star 4",
# "3 \\lor 4", "3 \\\\ 4"), math-verify's fallbacks read a fraction or a number inside it instead
# ("\\frac{1}{2} \\star 3" as 1/2), which ``_answer`` refuses.
_BOX_TARGETS = (LatexExtractionConfig(boxed_match_priority=0),)
_REFERENCE_TARGETS = (LatexExtractionConfig(), ExprExtractionConfig())
# Each different box is parsed on its own; a response of thousands of them would only spend the
# item's time limit (a timeout, which trainers mask), never earn more.
_MAX_BOXES = 8
# No final answer nests brackets this deep: deeper nesting only spends the item's time in
# math-verify's parsers (3,000 levels ran into its time limit, a timeout, which trainers mask).
_MAX_NESTING = 64
_NO_ANSWER = "no final answer found"


class MathOptions(Options):
    """How a math answer is extracted and compared."""

    extraction: Literal["auto", "boxed"] = Field(
        "auto",
        description="'auto': the \\boxed{} answers, else a stated final answer, else the last "
        "expression; 'boxed': only \\boxed{} answers count. Either way every boxed answer must "
        "be equivalent to the reference.",
    )
    float_rounding: int = Field(
        6,
        ge=0,
        le=12,
        description="Decimal places floats are rounded to where approximations are accepted.",
    )
    allow_unevaluated: bool = Field(
        False,
        description="Accept answers that still contain arithmetic on plain numbers, functions "
        "of them and constants (3 + 4 \\cdot 5, 2^{10}, \\binom{10}{3}, 10!, \\sqrt{16}, "
        "\\frac{72\\pi}{\\pi}) when the reference is a plain value. Off by default: such an "
        "answer restates the problem instead of solving it. Never accepted either way: a symbol "
        "the reference lacks, calculus the reference lacks (integrals, sums, products, limits, "
        "derivatives), and work past the verifier's bounds.",
    )
    accept_decimal_approximations: bool = Field(
        False,
        description="Accept a rounded decimal (0.142857 for 1/7, 1.414214 for \\sqrt{2}) or an "
        "answer marked \\approx for an exact reference. Off by default: an exact reference asks "
        "for the exact value. A decimal exactly equal to the reference (0.5 for 1/2) is always "
        "accepted, and a decimal reference (0.5) accepts what rounds to it either way.",
    )


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
    """The part of a parsed answer that is still arithmetic on plain numbers, e.g. ``3 + 4*5``
    or ``10!``; None when the answer is a final value. (Notation evaluated while it is read,
    ``\\binom{10}{3}`` read as 120, shows only in the text: ``math_class.notation``.)"""
    if not isinstance(answer, sympy.Basic):
        return None
    for node in sympy.preorder_traversal(answer):
        if node.is_Atom or _is_number_form(node):
            continue
        if isinstance(node, (sympy.Add, sympy.Mul)):
            # Read unevaluated, "3 + 4 + \\sqrt{2}" is one sum of three terms and
            # "1 \\cdot 2\\sqrt{3}" one product of three factors: two numbers added or multiplied
            # are arithmetic, whatever else is beside them. (In a product, a leading -1 is a sign
            # and a number's inverse is a fraction bar: 2 \\cdot \\frac{\\sqrt{2}}{3} is fine.)
            if isinstance(node, sympy.Add):
                numbers = [arg for arg in node.args if _is_number_form(arg)]
            else:
                numbers = [arg for arg in node.args if arg.is_Number]
                numbers = numbers[1:] if numbers and numbers[0] == -1 else numbers
            if len(numbers) > 1:
                return str(node.func(*numbers, evaluate=False))
        if node.free_symbols:
            continue
        try:
            value = node.doit()
        except Exception:  # noqa: S112 - what sympy cannot evaluate is not leftover arithmetic
            continue
        if isinstance(value, sympy.Number):
            return str(node)
    return None


@contextmanager
def _cpu_limit(seconds: float) -> Iterator[None]:
    """Raise math-verify's ``TimeoutException`` once this process has spent ``seconds`` of CPU
    time inside the block (user time: ``ITIMER_VIRTUAL``). math-verify's own alarm counts the
    wall clock, which a loaded machine stretches: 0.6 s of parsing took 2.7 s beside other
    jobs. Like any signal, it cannot stop one long operation in C until that returns."""

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutException(f"more than {seconds:g} s of CPU time")

    previous = signal.signal(signal.SIGVTALRM, expired)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)


@lru_cache(maxsize=4096)
def _parse_reference(reference: str) -> tuple[Any, ...]:
    # A bare reference such as "\frac{1}{2}" or "0.5" is read as one LaTeX expression.
    text = reference if ("$" in reference or "\\boxed" in reference) else f"${reference}$"
    with _cpu_limit(_PARSE_TIMEOUT_S):
        return tuple(
            parse(
                text,
                _REFERENCE_TARGETS,
                fallback_mode="no_fallback",  # a reference sympy cannot read is unusable
                parsing_timeout=None,  # _cpu_limit instead
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


@dataclass(frozen=True)
class _Reference:
    """What a reference allows an answer besides its value."""

    text: str
    single: bool  # one value: an answer may not list, relate or sign values
    plain: bool  # no arithmetic on plain numbers: an answer must be a final value too
    exact: bool  # not a decimal: a decimal answer must equal it exactly
    markers: frozenset[str]  # the markers it uses itself, which an answer may use too
    answer_class: AnswerClass  # the symbols and operators an answer may be written with


@lru_cache(maxsize=4096)
def _reference_facts(reference: str) -> _Reference:
    gold = _parse_reference(reference)
    return _Reference(
        text=reference,
        single=is_single_value(gold[0]),
        plain=not notation(reference) and not any(map(leftover_arithmetic, gold)),
        exact=not written_as_decimal(reference),
        markers=frozenset(markers(reference)),
        answer_class=AnswerClass.of(gold[:1], reference, names=True),
    )


_MARKER_DETAILS: dict[Marker, str] = {
    "alternatives": "the answer offers alternatives ({!r}) where the question has one value",
    "hedge": "the answer hedges ({!r})",
    "approximation": "the answer is an approximation ({!r}); the option "
    "accept_decimal_approximations accepts one",
}


def _hedged(text: str, reference: _Reference, options: MathOptions) -> Score | None:
    for kind, shown in markers(text).items():
        allowed = (
            kind in reference.markers
            or (kind == "alternatives" and not reference.single)
            or (kind == "approximation" and options.accept_decimal_approximations)
        )
        if not allowed:
            return Score.ok(0.0, {"correct": 0.0}, _MARKER_DETAILS[kind].format(shown[:40]))
    return None


def _extract(
    text: str, targets: tuple[ExtractionTarget, ...], reference: _Reference | None = None
) -> Extraction | Score | None:
    """math-verify's answer in ``text`` with where it read it; None when there is none, a
    ``timeout`` Score when reading took too long. With ``reference``, each candidate's text is
    bounded before it is parsed (``math_bounds.unreadable``), and so is the text parsed in all."""
    admit = None if reference is None else partial(unreadable, reference=reference.text)
    budget = None if reference is None else MAX_ANSWER_CHARS
    try:
        with _cpu_limit(_PARSE_TIMEOUT_S):
            found = extract(text, targets, admit, budget)
    except TimeoutException:
        return Score.timeout("extracting the answer took too long")
    except Exception:  # an extraction math-verify cannot make is no answer
        return None
    if isinstance(found, Refused):
        return Score.invalid(found.reason)
    return found


def _answer(text: str) -> list[Any] | Score:
    """A box's answer, read by math-verify as LaTeX whole: where the whole does not parse,
    math-verify's fallbacks read a fraction or a number inside it, which is no answer."""
    found = _extract(text, _BOX_TARGETS)
    if isinstance(found, Score):
        return found
    if found is None or found.kinds != {"latexBoxed"}:
        return Score.invalid("the answer is not readable LaTeX as a whole")
    return [found.value, found.shown] if found.shown else [found.value]


def _final_value_check(predicted: list[Any], reference: _Reference, options: MathOptions) -> Score:
    # Only once the answer is known to be equivalent: a wrong answer needs no such check.
    if not options.allow_unevaluated and reference.plain:
        leftover = next(filter(None, map(leftover_arithmetic, predicted)), None)
        if leftover is not None:
            return Score.invalid(
                f"the answer is not a final value: it still contains the arithmetic {leftover!r}"
            )
    return Score.ok(1.0, {"correct": 1.0}, "correct")


def _approximates(gold: Any, predicted: Any, reference: _Reference, options: MathOptions) -> bool:
    """Whether an answer math-verify found equivalent holds a decimal that is only close to an
    exact reference (0.142857 for 1/7): read exactly, it must still be equivalent."""
    if options.accept_decimal_approximations or not reference.exact:
        return False
    exact = exact_decimals(predicted)
    return exact is not None and not verify(gold, exact, timeout_seconds=None, raise_on_error=True)


def _screen(own_text: str, reference: _Reference, options: MathOptions) -> Score | None:
    # Read before parsing: cheap, and math-verify would normalise these forms away.
    hedged = _hedged(own_text, reference, options)
    if hedged is not None:
        return hedged
    refused = unreadable(own_text, reference.text)
    return None if refused is None else Score.invalid(refused)


def _outside(parsed: Any, text: str, reference: _Reference, options: MathOptions) -> str | None:
    """Why an answer is not evaluated at all: more work than any final answer needs, or not in
    the reference's answer class (``verifiers/math_class.py``); None when it is compared."""
    bound = too_large(parsed)
    if bound is not None:
        return f"the answer is too large to evaluate: {bound}"
    evaluated = reference.plain and not options.allow_unevaluated
    refused = reference.answer_class.refuses(AnswerClass.of([parsed], text), evaluated=evaluated)
    return None if refused is None else f"the answer is not a final value: {refused}"


def _compare(
    gold: tuple[Any, ...],
    predicted: list[Any],
    text: str,
    reference: _Reference,
    options: MathOptions,
) -> Score:
    """Compare a parsed answer (math-verify's parses of it), written as ``text``."""
    answer = predicted[-1] if isinstance(predicted[-1], str) else str(predicted[0])
    wrong = Score.ok(0.0, {"correct": 0.0}, f"the answer {answer[:200]!r} is not correct")
    parsed = predicted[0]
    if reference.single and isinstance(parsed, sympy.Basic) and not is_single_value(parsed):
        # math-verify would compare one part of it ("3 = 4" as 4)
        return replace(wrong, detail=f"the answer {answer[:200]!r} is not a single value")
    outside = _outside(parsed, text, reference, options)
    if outside is not None:
        return Score.invalid(outside)
    timed_out = False
    for gold_item, predicted_item in product(gold, predicted):
        try:
            with _cpu_limit(_COMPARE_TIMEOUT_S):
                if not verify(
                    gold_item,
                    predicted_item,
                    float_rounding=options.float_rounding,
                    timeout_seconds=None,  # _cpu_limit instead
                    raise_on_error=True,
                ):
                    continue
                if _approximates(gold_item, predicted_item, reference, options):
                    return replace(
                        wrong,
                        detail=f"the answer {answer[:200]!r} is a decimal approximation of an "
                        "exact value; the option accept_decimal_approximations accepts one",
                    )
                return _final_value_check(predicted, reference, options)
        except TimeoutException:
            timed_out = True
        except Exception:  # noqa: S112 - a comparison math-verify cannot make is "not equal"
            continue
    if timed_out:
        return Score.timeout("comparing the answer with the reference took too long")
    return wrong


def _check_answer(
    text: str,
    own_text: str | None,
    gold: tuple[Any, ...],
    reference: _Reference,
    options: MathOptions,
) -> Score:
    """Score one answer: ``text`` is what math-verify extracts it from (a box, or the whole
    response), ``own_text`` the answer's own text when known (a box's content)."""
    if own_text is None:
        return _check_unboxed(text, gold, reference, options)
    screened = _screen(own_text, reference, options)
    if screened is not None:
        return screened
    if options.accept_decimal_approximations:
        text = f"\\boxed{{{approximated_value(own_text)}}}"  # "\\approx 4" gives 4
    predicted = _answer(text)
    if isinstance(predicted, Score):
        return predicted
    return _compare(gold, predicted, own_text, reference, options)


def _check_unboxed(
    response: str, gold: tuple[Any, ...], reference: _Reference, options: MathOptions
) -> Score:
    # Every statement of the answer ("The answer is 3. The answer is 4.", two "Final answer:"
    # lines) is an answer, as every box is: math-verify reads the last.
    stated = statements(response, _MAX_BOXES)
    if len(stated) > _MAX_BOXES:
        return Score.invalid(f"more than {_MAX_BOXES} statements of the answer")
    if len(stated) > 1:
        scored = (_check_statement(said, gold, reference, options) for said in stated)
        return _every((score for score in scored if score is not None), "stated answer")
    return _check_statement(response, gold, reference, options) or Score.invalid(_NO_ANSWER)


def _check_statement(
    response: str, gold: tuple[Any, ...], reference: _Reference, options: MathOptions
) -> Score | None:
    """Score the one answer in ``response`` (a whole response, or one statement of the
    answer); None when it holds none."""
    found = _extract(response, _RESPONSE_TARGETS, reference)
    if found is None or isinstance(found, Score):
        return found
    several = _several(response, found, gold, reference, options)
    if several is not None:
        return several
    # Read from plain text, math-verify's match may be a fragment of a larger expression
    # ("2^{\\frac{1}{2}}" read as 1/2): the whole expression is the answer, read as its box
    # would be, or the answer is not readable.
    whole = whole_expression(response, found.spans) if found.bare else None
    answer = found.shown if whole is None else whole
    # An unboxed answer: the rest of its sentence is part of it ("3, or maybe 4").
    sentence = answer_sentence(response, answer)
    hedged = None if sentence is None else _hedged(sentence, reference, options)
    if hedged is not None:
        return hedged
    if whole is not None:
        return _check_answer(f"\\boxed{{{whole}}}", whole, gold, reference, options)
    # Delimited math ("$...$") is read as a box's content is: its own text is screened too
    # (math-verify cut "$4\\text{ cm} + 1\\text{ cm}$" to 4 before this parse).
    own = response[found.spans[0][0] : found.spans[-1][1]]
    screened = _screen(own, reference, options)
    if screened is not None:
        return screened
    predicted = [found.value, found.shown] if found.shown else [found.value]
    return _compare(gold, predicted, own, reference, options)


def _several(
    response: str,
    found: Extraction,
    gold: tuple[Any, ...],
    reference: _Reference,
    options: MathOptions,
) -> Score | None:
    """The score of several answers math-verify read as one, or None where it read one:
    answers in a row ("$391$ $392$", of which it read the last) must each be right, as boxes
    must; and a list of sets is several candidates: it reads "$-3$, $2$" (or "and", "or") as the
    set of its parts, and so "$\\{2\\}$, $\\{-3, 2\\}$" as the union of two candidate sets."""
    row = in_a_row(response, found.spans)
    if len(row) > _MAX_BOXES:
        return Score.invalid(f"more than {_MAX_BOXES} answers in a row")
    if row:
        scores = (
            _check_answer(f"\\boxed{{{item}}}", item, gold, reference, options) for item in row
        )
        return _every(scores, "answer in a row")
    if len(found.spans) < 2 or found.bare:
        return None
    for start, end in found.spans:
        part = _answer(f"\\boxed{{{response[start:end]}}}")
        if isinstance(part, list) and isinstance(part[0], sympy.Set):
            shown = response[start:end][:40]
            detail = f"the answer lists sets ({shown!r}): several candidates"
            return Score.ok(0.0, {"correct": 0.0}, detail)
    return None


def _every(scores: Iterable[Score], what: str) -> Score:
    """The score of several answers, each of which must be right on its own: a wrong one
    decides, whatever the others say; else an unreadable one makes the response invalid, and a
    timeout leaves it unscored. (Lazy: a wrong answer stops the scoring of the rest.)"""
    seen = []
    for score in scores:
        if score.status == "ok" and score.reward == 0.0:
            return replace(score, detail=f"{score.detail} (every {what} must be right)")
        seen.append(score)
    if not seen:
        return Score.invalid(_NO_ANSWER)
    return next((s for s in seen if s.status == "invalid"), None) or next(
        (s for s in seen if s.status != "ok"), seen[0]
    )


def _check_boxes(
    response: str,
    boxes: list[str],
    gold: tuple[Any, ...],
    reference: _Reference,
    options: MathOptions,
) -> Score:
    """Every box must be right on its own, and so must every statement of the answer outside a
    box's sentence ("\\boxed{6}. Final answer: -6" offers two answers) (``_every``)."""
    stated = statements(response, _MAX_BOXES)
    if len(boxes) + len(stated) > _MAX_BOXES:
        return Score.invalid(f"more than {_MAX_BOXES} different boxed or stated answers")
    scores = chain(
        (_check_answer(f"\\boxed{{{box}}}", box, gold, reference, options) for box in boxes),
        (_check_statement(said, gold, reference, options) for said in stated),
    )
    answers = (score for score in scores if score is not None)
    if len(boxes) + len(stated) == 1:
        return next(answers)
    return _every(answers, "boxed or stated answer" if stated else "boxed answer")


def check_math(response: str, reference: Any, options: MathOptions) -> Score:
    """1 if the response's final answer is equivalent to ``reference``, else 0.

    Every boxed answer must be equivalent on its own; without a box (``extraction="auto"``),
    math-verify's reading of the whole response is the answer. Status ``invalid`` when no answer
    can be extracted, ``timeout`` when math-verify ran out of time on every comparison that could
    have succeeded, ``error`` for an unusable reference.
    """
    gold = _gold(reference)
    if isinstance(gold, Score):
        return gold
    facts = _reference_facts(str(reference))
    if nesting(response) > _MAX_NESTING:
        return Score.invalid(f"the response nests brackets more than {_MAX_NESTING} levels deep")
    boxes = list(dict.fromkeys(boxed_answers(response)))  # a repeated box is one answer
    if len(boxes) > _MAX_BOXES:
        return Score.invalid(f"more than {_MAX_BOXES} different boxed answers")
    if boxes:
        return _check_boxes(response, boxes, gold, facts, options)
    if options.extraction == "boxed":
        return Score.invalid("no \\boxed{} answer found")
    return _check_answer(response, None, gold, facts, options)


VERIFIER = Verifier(
    name="math",
    version="2",  # 2 (issue 38): the answer class, evaluation bounds, several answers
    description="Final-answer equivalence for math (math-verify): boxed or last-answer "
    "extraction, LaTeX and expression equivalence, numeric tolerance.",
    check=check_math,
    options_model=MathOptions,
    timeout_s=10.0,
    components=("correct",),
    example=("So the answer is $\\boxed{\\frac{1}{2}}$.", "0.5"),
)
