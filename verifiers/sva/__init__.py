"""SystemVerilog Assertion equivalence: the ``sva.nl2sva`` verifier.

It compares a candidate assertion with a reference one through the design-free property
equivalence checker of this package (pyslang front end, Z3 over lasso-shaped traces; see
``api.py``), as FVEval's JasperGold PEC does: ``G candidate`` against ``G reference`` over free
signals. The reward (documented in ``environments/sva/README.md``):

- 0, status ``invalid``: no assertion, a syntax or elaboration error, a signal the task does not
  allow, or a construct the checker does not support (the compiler's message in ``detail``);
- 1: equivalent;
- ``partial_credit`` (0.4 by default, FVEval's ``func_relaxed``): one direction of implication
  holds, unless it holds only vacuously: a weaker candidate that is always true or never
  triggered (while the reference is not), or a stronger one that is not a meaningful
  strengthening (``api.judge_strengthening``: unsatisfiable, failing wherever the reference is
  exercised, or demanding something of inputs the reference leaves free): then 0, since such
  answers are implied by, or imply, nearly every reference; and unless it is several answers
  at once (``hedges.py``: guesses joined by ``and`` or ``or``, one part of which already
  stands in that relation to the reference on its own): then 0 too, component ``hedge``;
- 0: neither direction holds;
- None, status ``timeout``: the solver ran out of time (trainers mask it).

The candidate is a model's answer (its assertion statement, a fenced block or the text) or a bare
property, so the same verifier compares any two properties (a second name, ``sva.equivalence``,
ran the very same check and is gone: one check, one name). The metric ``reference_tautology``
says whether the reference holds on every trace (such a task cannot tell answers apart).

``disable iff`` is dropped from both sides as FVEval does (option ``ignore_disable_iff``) only
when the candidate has none or the reference's very condition; otherwise both are honoured.

Counterexample traces go to ``Score.extra`` only, never to ``detail`` (which may reach a prompt).
"""

from __future__ import annotations

import re
from dataclasses import asdict
from functools import lru_cache
from typing import Any

# The optional ``sva`` extra: importing them here makes a missing extra disable this family
# (and the environments that import it) with a clear message, instead of failing later.
import pyslang  # noqa: F401
import z3  # noqa: F401
from pydantic import Field

from verifiers.base import Verifier
from verifiers.numbers import Options
from verifiers.score import Score, gate
from verifiers.sva.api import (
    Assertion,
    CheckOptions,
    CheckResult,
    SvaError,
    check_equivalence,
    is_tautology,
    is_vacuous,
    judge_strengthening,
    judge_weakening,
    parse_assertion,
)
from verifiers.sva.hedges import MAX_PARTS

VERSION = "2"  # 2: no verdict past the checked horizon (issue 38); several assertions refused
PARTIAL_CREDIT = 0.4
"""Reward for one-way implication (FVEval's ``func_relaxed``), within §4.6's 0.3-0.5 range."""
MAX_RESPONSE_CHARS = 20_000
"""Longer answers are not an assertion; refusing them early bounds parse time."""
_DETAIL_CHARS = 400

_LABEL = re.compile(r"^[A-Za-z_]\w*\s*:\s*(?=assert\b)")
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)", re.DOTALL)
_STATEMENT = re.compile(r"(?:\b[A-Za-z_]\w*\s*:\s*)?\bassert\s+property\s*(?=\()")


class SvaOptions(Options):
    """How a pair is judged."""

    unmarked_strong: bool = Field(
        True,
        description="Read a sequence used as a property without strong()/weak() as strong "
        "(FVEval/JasperGold's reading) instead of weak (IEEE 1800).",
    )
    timeout_s: float = Field(
        5.0, gt=0, le=60, description="Solver time limit of one check; past it: timeout."
    )
    partial_credit: float = Field(
        PARTIAL_CREDIT,
        ge=0,
        le=1,
        description="Reward when only one direction of implication holds.",
    )
    ignore_disable_iff: bool = Field(
        True,
        description="Compare the properties without their 'disable iff', as FVEval strips the "
        "text before its PEC, when the answer has none or the reference's very condition (a "
        "condition only the answer has is always honoured); false: honour each side's "
        "condition as IEEE 1800 does (an attempt during which it holds neither fails nor "
        "counts), which changes verdicts when the reset can stay asserted.",
    )
    vcd: bool = Field(False, description="Also return each counterexample as a VCD text.")


def extract_assertion(response: str) -> str:
    """The assertion in a model's answer: its ``assert property (...)`` statement, in a fenced
    code block or in the text, else the first fenced block, else the whole text (a bare
    property). Raises SvaError when there is nothing, and when the answer holds several
    different statements, in blocks or in the text: two assertions offered for one are
    several answers (the same statement repeated, say in the text and in a block, is one)."""
    # Comments go first: an assertion that is commented out is not part of the answer.
    blocks = [_uncomment(body) for _, body in _FENCE.findall(response)]
    prose = _uncomment(_FENCE.sub(" ", response))
    statements: dict[str, str] = {}
    for source in (*blocks, prose):
        for match in _STATEMENT.finditer(source):
            text = source[match.start() : _statement_end(source, match.end())]
            text = _LABEL.sub("", text.strip(), count=1)  # the label names it; not read
            statements.setdefault(" ".join(text.split()), text)
    if len(statements) > 1:
        raise SvaError(
            "several",
            f"the answer holds {len(statements)} different assertions; give exactly one",
        )
    text = next(iter(statements.values()), (blocks[0] if blocks else prose).strip())
    if not text:
        raise SvaError("syntax", "no assertion found in the response")
    return text


def _uncomment(text: str) -> str:
    """``text`` with its SystemVerilog comments blanked (an unclosed ``/*`` runs to the end)."""
    return _COMMENT.sub(" ", text)


def _statement_end(text: str, start: int) -> int:
    # The ';' that closes the statement: the first one outside parentheses.
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == ";" and depth <= 0:
            return index + 1
    return len(text)


def _context(reference: Any) -> tuple[str, str | None, tuple[str, ...] | None, tuple[Any, ...]]:
    """``(assertion, testbench, allowed signals, widths)`` of a reference; raises ValueError."""
    if isinstance(reference, str):
        return reference, None, None, ()
    if not isinstance(reference, dict):
        raise ValueError("the reference must be an assertion text or an object")
    text = reference.get("assertion", reference.get("property"))
    testbench = reference.get("testbench")
    signals = reference.get("signals")
    widths = reference.get("widths") or {}
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the reference has no 'assertion' text")
    if testbench is not None and not isinstance(testbench, str):
        raise ValueError("'testbench' must be SystemVerilog text or null")
    if signals is not None and not (
        isinstance(signals, list) and all(isinstance(s, str) for s in signals)
    ):
        raise ValueError("'signals' must be a list of names or null")
    if not isinstance(widths, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and 0 < v <= 4096 for k, v in widths.items()
    ):
        raise ValueError("'widths' must map signal names to widths in 1..4096")
    return (
        text,
        testbench,
        tuple(signals) if signals is not None else None,
        tuple(sorted(widths.items())),
    )


def _parse(
    text: str, testbench: str | None, signals: tuple[str, ...] | None, widths: tuple[Any, ...]
) -> Assertion:
    return parse_assertion(
        text,
        testbench,
        set(signals) if signals is not None else None,
        dict(widths) if widths else None,
    )


# References repeat across a batch and an epoch: parse and scan each once per worker.
_parse_reference = lru_cache(maxsize=1024)(_parse)


@lru_cache(maxsize=1024)
def _reference_guards(
    reference: Assertion, options: CheckOptions
) -> tuple[bool | None, bool | None]:
    tautology = is_tautology(reference, options)
    vacuous = True if tautology else is_vacuous(reference, options)
    return tautology, vacuous


def _short(message: str) -> str:
    message = " ".join(message.split())
    return message if len(message) <= _DETAIL_CHARS else message[: _DETAIL_CHARS - 1] + "…"


def _evidence(result: CheckResult, widths: dict[str, int], vcd: bool) -> dict[str, Any]:
    traces = []
    for trace in result.counterexamples:
        entry: dict[str, Any] = asdict(trace)
        if vcd:
            entry["vcd"] = trace.to_vcd(widths)
        traces.append(entry)
    return {"verdict": result.verdict, "seconds": result.seconds, "counterexamples": traces}


def score_pair(response: str, reference: Any, options: SvaOptions) -> Score:
    """Judge the assertion in ``response`` (``extract_assertion``) against ``reference`` (see
    the module docstring): the answer must be an assertion of the task's signals (component
    ``syntax``), which gates the judgement of what it claims."""
    try:
        ref_text, testbench, signals, widths = _context(reference)
        ref = _parse_reference(ref_text, testbench, signals, widths)
    except (ValueError, RecursionError) as exc:
        # A reference the checker cannot read is the task's fault, never the answer's.
        return Score.bad_reference(f"bad reference: {_short(str(exc))}")
    if len(response) > MAX_RESPONSE_CHARS:
        return Score.invalid(f"the answer is longer than {MAX_RESPONSE_CHARS} characters")
    try:
        candidate = _parse(extract_assertion(response), testbench, signals, widths)
    except SvaError as exc:
        return Score.invalid(f"{exc.kind}: {_short(exc.message)}", {"syntax": 0.0})
    except RecursionError:
        return Score.invalid("too_large: the candidate is nested too deeply", {"syntax": 0.0})
    return gate(Score.ok(1.0, {"syntax": 1.0}), lambda: _judge(candidate, ref, options))


def _judge(candidate: Assertion, ref: Assertion, options: SvaOptions) -> Score:
    """What an answer that parses earns against the reference."""
    check = CheckOptions(
        unmarked_strong=options.unmarked_strong,
        timeout_s=options.timeout_s,
        ignore_disable_iff=options.ignore_disable_iff and _same_disable(candidate, ref),
    )
    try:
        result = check_equivalence(candidate, ref, check)
    except SvaError as exc:
        # Raised for pairs the checker cannot compare (an unsupported construct, different
        # clocks): the candidate cannot be judged, so it earns nothing.
        return Score.invalid(f"{exc.kind}: {_short(exc.message)}")
    if result.verdict == "unknown":
        return Score.timeout(f"the equivalence check ran out of time ({options.timeout_s} s)")

    ref_tautology, ref_vacuous = _reference_guards(ref, check)
    components = {
        "equivalent": float(result.verdict == "equivalent"),
        "a_implies_b": float(result.verdict in ("equivalent", "a_implies_b")),
        "b_implies_a": float(result.verdict in ("equivalent", "b_implies_a")),
        "vacuous": 0.0,
        "hedge": 0.0,
    }
    # Not part of any reward: whether this task can tell answers apart at all.
    metrics = {"reference_tautology": float(bool(ref_tautology))}
    widths_of = {s.name: s.width for s in candidate.signals}
    extra = _evidence(result, widths_of, options.vcd)
    notes = [" ".join(_VERDICTS[result.verdict].split())]
    if ref_tautology:
        notes.append("note: the reference is a tautology, so this task cannot tell answers apart")
    if result.verdict == "equivalent":
        return Score.ok(1.0, components, "; ".join(notes), extra, metrics)
    reward = 0.0
    if result.verdict == "b_implies_a":
        vacuous = is_vacuous(candidate, check)
        if vacuous is None:
            return Score.timeout("the vacuity check ran out of time")
        if vacuous and not ref_vacuous:
            components["vacuous"] = 1.0
            notes = ["the answer is vacuous (always true or never triggered): no credit"]
        else:
            # Several guesses joined by "or": the reference implies it through one of them.
            weakening = judge_weakening(candidate, ref, check)
            if weakening == "unknown":
                return Score.timeout("the hedge check ran out of time")
            if weakening == "hedge":
                components["hedge"] = 1.0
                notes = [_HEDGE]
            else:
                reward = options.partial_credit
    elif result.verdict == "a_implies_b":
        # An answer implies the reference vacuously when it holds on no trace, or only on
        # traces where the reference is never exercised: stronger, but not a strengthening.
        strength = judge_strengthening(candidate, ref, check)
        if strength == "unknown":
            return Score.timeout("the strengthening check ran out of time")
        if strength == "meaningful" or (strength == "blocks_trigger" and ref_vacuous):
            reward = options.partial_credit
        elif strength == "hedge":
            components["hedge"] = 1.0
            notes = [_HEDGE]
        else:
            components["vacuous"] = 1.0
            notes = [_HOLLOW[strength]]
    return Score.ok(reward, components, "; ".join(notes), extra, metrics)


def _same_disable(candidate: Assertion, reference: Assertion) -> bool:
    """Whether FVEval's dropping of ``disable iff`` is harmless for this pair: the answer has
    none (dropping the reference's only strengthens the reference), or the very same one. A
    condition only the answer has, or a different one, could switch the answer off (``disable
    iff (1'b1)``), so such a pair is judged with both conditions honoured."""
    return candidate.disable_iff is None or candidate.disable_iff == reference.disable_iff


_HOLLOW = {
    "unsatisfiable": "the answer holds on no trace at all, so it implies the reference only "
    "vacuously: no credit",
    "blocks_trigger": "the answer fails on every trace where the reference's condition "
    "fires (with its reset off), so it implies the reference only vacuously: no credit",
    "constrains_inputs": "the answer restricts signals the reference only reacts to (it "
    "fails on inputs the reference allows), so it implies the reference by forbidding "
    "behaviour, not by checking more: no credit",
}

_HEDGE = (
    "the answer joins several claims and one part of it alone already stands in the same "
    "relation to the reference (the rest is surplus guessing), or it has more than "
    f"{MAX_PARTS} parts: several answers at once earn no credit"
)

_VERDICTS = {
    "equivalent": "the answer is equivalent to the reference",
    "a_implies_b": "the answer is stronger than the reference (it implies the reference, "
    "not conversely)",
    "b_implies_a": "the answer is weaker than the reference (the reference implies it, "
    "not conversely)",
    "different": "the answer is not equivalent to the reference in either direction",
}

_EXAMPLE_REFERENCE = {
    "assertion": "assert property(@(posedge clk) sig_A |=> sig_B);",
    "testbench": None,
    "signals": ["sig_A", "sig_B"],
    "widths": {"sig_A": 1, "sig_B": 1},
}


COMPONENTS = (
    "syntax",
    "equivalent",
    "a_implies_b",
    "b_implies_a",
    "vacuous",
    "hedge",
)
"""The parts of an SVA score (an unreadable answer carries ``syntax`` only)."""
METRICS = ("reference_tautology",)
"""What an SVA score records beside the reward."""

NL2SVA = Verifier(
    name="sva.nl2sva",
    version=VERSION,
    description="NL2SVA answers: the assertion in a model's answer (a ```systemverilog block or "
    "the text) against the reference assertion, by design-free property equivalence over "
    "lasso traces (pyslang + Z3). Reward 1 equivalent, partial credit for one-way "
    "implication, 0 otherwise; invalid for syntax/elaboration/signal errors; vacuous "
    "answers (always true, or stronger only by holding on no trace, forbidding the "
    "reference's trigger or fixing its free inputs) earn 0. The response may also be a bare "
    "property, so any two properties compare: the verdict (equivalent, a_implies_b, "
    "b_implies_a, different) and lasso counterexamples are in extra. "
    "Reference: {assertion, testbench, signals, widths}.",
    check=score_pair,
    options_model=SvaOptions,
    timeout_s=30.0,
    components=COMPONENTS,
    metrics=METRICS,
    example=(
        "```systemverilog\nassert property(@(posedge clk)\n    sig_A |-> ##1 sig_B\n);\n```",
        _EXAMPLE_REFERENCE,
    ),
)

VERIFIERS = (NL2SVA,)

__all__ = [
    "NL2SVA",
    "VERIFIERS",
    "SvaOptions",
    "extract_assertion",
    "score_pair",
]
