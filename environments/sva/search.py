"""The sva family's search space (``envserver audit --search --env sva``; see
``environments.search``).

Seeds: the reference of a random generated task and of a random NL2SVA-Machine and -Human row,
each answered by its reference (deserves 1), and the red-team suite's must-pay cases. Decoys: the
reference's one-token mutants (``mutants.py``) that the judge finds not equivalent. Moves: the
generic text moves plus three of the family's own classes:

- ``horizon``: a difference that shows only late. A disjunct that holds only after many cycles
  (``$past(x, 50)``, ``x ##70 y``) beside the reference (several answers: deserves 0), and a
  delay, ``$past`` depth, repetition or range stretched to just within or just past the checked
  horizon, or an unbounded eventuality made bounded (``##[0:N]``; judged);
- ``vacuity``: answers that say nothing: ``1'b1``, ``1'b0``, the reference and its negation
  joined (a tautology, a contradiction), an antecedent that never fires, a consequent that is
  always true, and ``disable iff`` conditions that switch the answer off (``1'b1``, the trigger,
  ``$past`` of the trigger): each deserves 0 unless the judge finds it equivalent to the
  reference (a condition that never holds changes nothing);
- ``rewrite``: equivalent forms of the reference that must keep full reward (``|=>`` for
  ``|-> ##1``, ``s_eventually`` for ``strong(##[0:$] ...)``, a label, a duplicated conjunct, a
  condition that never holds): what the rules cost, counted as ``refused`` where they pay less.

The judge (``deserves``) decides independently of the verifier under test: a lasso check at a
longer bound than the service's (twice what the pair needs, at least ``JUDGE_K``), with no
horizon refusal and no proof step, then the best the rules allow for the verdict (1
equivalent, the partial credit one-way unless the answer is always true or never holds, 0
otherwise). None where it cannot tell in ``JUDGE_TIMEOUT_S`` or the pair needs more than
``JUDGE_K_MAX`` cycles.
"""

from __future__ import annotations

import random
import re
import time
import tomllib
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import z3

from environments.base import EnvironmentUnavailable
from environments.mutators import text_moves
from environments.search import Move, Mutant, Probe, SearchSpace
from environments.sva.family import DatasetOptions, GeneratedFamily, Nl2SvaDataset
from environments.sva.generator import GeneratedOptions
from environments.sva.mutants import mutants
from environments.sva.prompt import fenced
from environments.task_id import TaskId
from verifiers.sva import SvaOptions, extract_assertion
from verifiers.sva.api import Assertion, CheckOptions, SvaError, parse_assertion
from verifiers.sva.horizon import measure
from verifiers.sva.lasso import Timeout, mk_not, to_z3
from verifiers.sva.solver import K_LIMIT, check, disables, encode, ir_of, needed, solver, widths

JUDGE_K = K_LIMIT
"""The judge's shortest lasso: the longest the service checks (a pair that needs k gets 2k)."""
JUDGE_K_MAX = 192
"""Pairs that need more are not judged (None)."""
JUDGE_TIMEOUT_S = 10.0

_REDTEAM = Path(__file__).with_name("redteam.toml")
_PROPERTY = re.compile(r"\(\s*@\s*\(\s*posedge\s+\w+\s*\)(.*)\)\s*;\s*$", re.DOTALL)
_DISABLE = re.compile(r"^\s*disable\s+iff\s*\(")
_DELAY = re.compile(r"##(\d+)\b")
_RANGE = re.compile(r"##\[(\d+):(\d+)\]")
_PAST = re.compile(r"\$past\(([^(),]+),\s*(\d+)\)")
_REPEAT = re.compile(r"\[\*(\d+)\]")
_EVENTUALLY = re.compile(r"s_eventually\s*(\(?)")
_UNBOUNDED = re.compile(r"##\[(\d+):\$\]")
_IMPLICATION = re.compile(r"\|->|\|=>")
_NAME = re.compile(r"(?<![\w$'])[A-Za-z_]\w*")
_KEYWORDS = frozenset((
    "and", "or", "not", "strong", "weak", "s_eventually", "eventually", "until", "s_until",
    "until_with", "s_until_with", "always", "s_always", "nexttime", "s_nexttime", "disable",
    "iff", "intersect", "throughout", "within", "first_match", "implies", "if", "else",
    "posedge", "clk",
))  # fmt: skip


# --- seeds ------------------------------------------------------------------------------------


def _seeds(rng: random.Random) -> Iterator[Mutant]:
    level = rng.choice(("easy", "medium", "hard"))
    generated = f"sva/generated@1/{rng.randrange(10**6)}"
    ids = [generated if level == "easy" else f"{generated}?level={level}"]
    for split in ("machine", "human"):
        ids.append(f"sva/nl2sva-{split}@1/{rng.randrange(10**4)}")
    for task_id in ids:
        try:
            reference = _reference(task_id)
        except EnvironmentUnavailable:  # the FVEval sets when their data cannot be read
            continue
        yield Mutant(Probe(fenced(reference["assertion"]), task_id=task_id), 1.0)
    must_pay = _must_pay()
    if must_pay:
        yield Mutant(rng.choice(must_pay), 1.0)


@lru_cache(maxsize=1)
def _must_pay() -> tuple[Probe, ...]:
    """The red-team suite's cases that must earn full reward."""
    cases = tomllib.loads(_REDTEAM.read_text())["case"]
    return tuple(
        Probe(
            case["response"],
            task_id=case.get("task_id"),
            verifier=case.get("verifier"),
            reference=case.get("reference"),
            options=case.get("options", {}),
            origin=f"redteam: {case['name']}",
        )
        for case in cases
        if case["expect"] == "full"
    )


@lru_cache(maxsize=4096)
def _reference(task_id: str) -> dict[str, Any]:
    """The reference of a task id (built as the server builds it; read-only)."""
    parsed = TaskId.parse(task_id)
    if parsed.env == "sva/generated":
        gen = GeneratedOptions.model_validate(parsed.options)
        task = GeneratedFamily().generate(parsed.seed, gen)
    else:
        split = parsed.env.removeprefix("sva/nl2sva-")
        if split not in ("human", "machine"):
            raise ValueError(f"not an sva task: {task_id}")
        family = Nl2SvaDataset(split)  # type: ignore[arg-type]
        task = family.generate(parsed.seed, DatasetOptions())
    reference: dict[str, Any] = task.reference
    return reference


def _where(probe: Probe) -> tuple[dict[str, Any], SvaOptions]:
    """The reference object and the options a probe is scored with."""
    if probe.task_id is not None:
        return _reference(probe.task_id), SvaOptions()
    reference = probe.reference
    if isinstance(reference, str):
        reference = {"assertion": reference}
    return dict(reference), SvaOptions.model_validate(dict(probe.options))


# --- the reference's text and its pieces -----------------------------------------------------


def _body(assertion: str) -> str | None:
    """The property of ``assert property (@(posedge clk) ...);``, ``disable iff`` included."""
    match = _PROPERTY.search(assertion)
    return None if match is None else match[1].strip()


def _split_disable(body: str) -> tuple[str, str]:
    """(``disable iff (c) `` or "", the property after it)."""
    match = _DISABLE.match(body)
    if match is None:
        return "", body
    depth, i = 1, match.end()
    while i < len(body) and depth:
        depth += {"(": 1, ")": -1}.get(body[i], 0)
        i += 1
    return body[:i] + " ", body[i:].strip()


def _assertion(prop: str) -> str:
    return fenced(f"assert property (@(posedge clk) {prop});")


def _parts(probe: Probe) -> tuple[str, str, list[str]] | None:
    """(disable prefix, property, signal names) of the probe's answer, None when it has none."""
    try:
        body = _body(extract_assertion(probe.response))
    except SvaError:
        return None
    if body is None:
        return None
    disable, prop = _split_disable(body)
    return disable, prop, sorted(set(_NAME.findall(prop)) - _KEYWORDS)


# --- moves ------------------------------------------------------------------------------------


def _decoys(probe: Probe, rng: random.Random) -> Sequence[str]:
    parts = _parts(probe)
    if parts is None:
        return ()
    disable, prop, _ = parts
    return [_assertion(disable + text) for _, text in mutants(prop)]


def _horizon(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    probe, parts = parent.probe, _parts(parent.probe)
    if parts is None or not parts[2]:
        return
    disable, prop, signals = parts
    x = rng.choice(signals)
    y = rng.choice(signals)
    late = rng.choice(
        (
            f"$past({x}, {rng.randrange(K_LIMIT // 2, 3 * K_LIMIT)})",
            f"{x} ##{rng.randrange(K_LIMIT // 2, 2 * K_LIMIT)} {y}",
            f"{x} ##1 {y}[*{rng.randrange(K_LIMIT // 2, 2 * K_LIMIT)}]",
        )
    )
    # The reference beside a guess that can only hold late: several answers.
    yield Mutant(probe.answer(_assertion(f"{disable}({prop}) or ({late})"), "horizon.late"), 0.0)
    # Stretch one bound to around the checked horizon (the judge decides).
    stretch = rng.choice((K_LIMIT // 4, K_LIMIT // 2 - 2, K_LIMIT // 2, K_LIMIT))
    forms: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
        (_DELAY, lambda m: f"##{int(m[1]) + stretch}"),
        (_RANGE, lambda m: f"##[{m[1]}:{int(m[2]) + stretch}]"),
        (_PAST, lambda m: f"$past({m[1]}, {int(m[2]) + stretch})"),
        (_REPEAT, lambda m: f"[*{int(m[1]) + stretch}]"),
        (_UNBOUNDED, lambda m: f"##[{m[1]}:{int(m[1]) + stretch}]"),
        (_EVENTUALLY, lambda m: f"##[0:{stretch}] {m[1]}"),
    ]
    for pattern, change in forms:
        hits = list(pattern.finditer(prop))
        if hits:
            m = rng.choice(hits)
            changed = prop[: m.start()] + change(m) + prop[m.end() :]
            yield Mutant(probe.answer(_assertion(disable + changed), "horizon.stretch"), None)


def _vacuity(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    probe, parts = parent.probe, _parts(parent.probe)
    if parts is None:
        return
    disable, prop, signals = parts
    x = rng.choice(signals) if signals else "1'b1"
    # (condition, property): a form that says nothing whatever the reference (deserves 0),
    # or a new disable iff condition (judged: one that never holds changes nothing).
    forms: list[tuple[str | None, str]] = [
        (None, "1'b1"),
        (None, "1'b0"),
        (None, f"({prop}) or not ({prop})"),
        (None, f"({prop}) and not ({prop})"),
        (None, f"({x} && !{x}) |-> ({prop})"),
        ("1'b1", prop),
        (x, prop),
        (f"$past({x})", prop),
    ]
    sides = _IMPLICATION.split(prop, maxsplit=1)
    if len(sides) == 2:
        ante = sides[0].strip()
        forms += [
            (None, f"{ante} |-> 1'b1"),
            (None, f"({ante}) && !({ante}) |-> {sides[1].strip()}"),
            (ante, prop),
            (f"$past({ante})", prop),
        ]
    condition, form = rng.choice(forms)
    prefix = disable if condition is None else f"disable iff ({condition}) "
    settled = 0.0 if condition is None else None
    yield Mutant(probe.answer(_assertion(prefix + form), "vacuity"), settled)


_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\|=>"), "|-> ##1"),
    (re.compile(r"\|->\s*##1\b"), "|=>"),
    (re.compile(r"s_eventually\s*\(([^()]*)\)"), r"strong(##[0:$] (\1))"),
    (re.compile(r"strong\s*\(\s*##\[0:\$\]\s*([^()]*)\)"), r"s_eventually (\1)"),
    (re.compile(r"\$past\(([^(),]+)\)"), r"$past(\1, 1)"),
)


def _rewrite(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    probe, parts = parent.probe, _parts(parent.probe)
    if parts is None or parent.deserves != 1.0:
        return
    disable, prop, _ = parts
    forms = [(disable, f"({prop}) and ({prop})"), (disable, f"(({prop}))")]
    if not disable:
        forms.append(("disable iff (1'b0) ", prop))
    for pattern, replacement in _REWRITES:
        if pattern.search(prop):
            forms.append((disable, pattern.sub(replacement, prop, count=1)))
    prefix, form = rng.choice(forms)
    text = fenced(f"asrt: assert property (@(posedge clk) {prefix}{form});")
    # Textbook identities, except a new disable iff, which the judge checks honoured.
    yield Mutant(probe.answer(text, "rewrite"), 1.0 if prefix == disable else None)


# --- the judge --------------------------------------------------------------------------------


def deserves(probe: Probe) -> float | None:
    """The most reward ``probe``'s answer deserves, decided by a longer lasso check than the
    service's (module docstring); None where it cannot tell."""
    pair = _pair(probe)
    if pair is None:
        return None
    answer, ref, options, credit = pair
    if answer is None:
        return 0.0  # no single readable assertion: nothing to reward
    verdict = _long_check(answer, ref, options)
    if verdict in (None, "equivalent", "different"):
        return {None: None, "equivalent": 1.0, "different": 0.0}[verdict]
    # One way: never more than the partial credit, none for an answer that says nothing
    # (weaker and always true, or stronger and true on no trace).
    alone = _long_check(answer, None, options)
    hollow = "equivalent" if verdict == "b_implies_a" else "unsatisfiable"
    return None if alone is None else 0.0 if alone == hollow else credit


def _pair(
    probe: Probe,
) -> tuple[Assertion | None, Assertion, CheckOptions, float] | None:
    """(the answer, None when it has no single readable assertion; the reference; the check's
    options as the verifier's documented rules set them; the partial credit). None when the
    probe is not an answer to an SVA reference."""
    if probe.env is not None:
        return None
    reference, options = _where(probe)
    text = reference.get("assertion")
    if not isinstance(text, str):
        return None
    testbench = reference.get("testbench")
    signals = reference.get("signals")
    allowed = None if signals is None else set(signals)
    sizes = reference.get("widths") or None
    try:
        ref = parse_assertion(text, testbench, allowed, sizes)
    except SvaError:
        return None
    try:
        answer = parse_assertion(extract_assertion(probe.response), testbench, allowed, sizes)
    except (SvaError, RecursionError):
        return None, ref, CheckOptions(), options.partial_credit
    same = answer.disable_iff is None or answer.disable_iff == ref.disable_iff
    check_options = CheckOptions(
        unmarked_strong=options.unmarked_strong,
        timeout_s=JUDGE_TIMEOUT_S,
        ignore_disable_iff=options.ignore_disable_iff and same,
    )
    return answer, ref, check_options, options.partial_credit


def _long_check(a: Assertion, b: Assertion | None, options: CheckOptions) -> str | None:
    """The verdict of ``G a`` against ``G b`` on lassos of twice the length the pair needs,
    at least ``JUDGE_K``. ``b`` None: ``a`` against ``1'b1``, with ``unsatisfiable`` for an
    ``a`` that holds on no lasso."""
    irs = [ir_of(a)] if b is None else [ir_of(a), ir_of(b)]
    k = max(JUDGE_K, 2 * needed(measure(*irs)))
    if k > JUDGE_K_MAX:
        return None
    deadline = time.monotonic() + options.timeout_s
    try:
        da, db = disables(irs[0], irs[-1], options)
        enc = encode(irs, widths([a] if b is None else [a, b]), options, deadline, k=k)
        fa = enc.props.assertion(irs[0].prop, da)
        fb = True if b is None else enc.props.assertion(irs[1].prop, db)
    except (Timeout, RecursionError, SvaError):
        return None
    s = solver(enc, deadline)
    outcomes = []
    for hold, fail in ((fa, fb), (fb, fa), (fa, False)):
        s.push()
        s.add(to_z3(hold), to_z3(mk_not(fail)))
        outcomes.append(check(s, deadline))
        s.pop()
    if z3.unknown in outcomes:
        return None
    a_fails_b, b_fails_a, a_holds = (r == z3.sat for r in outcomes)
    if b is None and not a_holds:
        return "unsatisfiable"
    verdicts = {
        (False, False): "equivalent",
        (False, True): "a_implies_b",
        (True, False): "b_implies_a",
        (True, True): "different",
    }
    return verdicts[a_fails_b, b_fails_a]


SEARCH = SearchSpace(
    seeds=_seeds,
    mutators=(
        *text_moves(_decoys),
        Move("horizon", _horizon),
        Move("vacuity", _vacuity),
        Move("rewrite", _rewrite),
    ),
    deserves=deserves,
)
"""The sva family's search space."""
