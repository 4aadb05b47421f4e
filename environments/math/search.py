r"""The math family's search space for ``envserver audit --search`` (issue 38).

Seeds: the expert's answers to random task ids of every difficulty (so of every kind), and the
red-team suite's must-pay cases. Decoys: wrong answers near the reference (one more, one less,
the other sign, half, double; a root dropped or added). Moves: the generic text moves, and
math's own classes:

- ``restate``: the value restated so that evaluating it gives the reference (deserves 0): a
  dummy symbol (``\frac{72y}{y}``, ``72 + 0y``, the problem's own expression times
  ``\frac{y}{y}``), an unevaluated integral, sum, product, limit or derivative equal to it, and
  equal forms of another class (``72(\sqrt{2}+1)(\sqrt{2}-1)``, ``\frac{72\pi}{\pi}``,
  ``72(\cos^2 1 + \sin^2 1)``, ``72 + 0``).
- ``hedge``: several values offered for one (deserves 0): ``\lor``, ``\text{or}``, ``\pm``, a
  set, an interval, a list, several boxes, a box without braces before the right one, answers
  in a row, two statements of the answer.
- ``slow``: answers that are slow to evaluate (deserves 0: a wrong value, or the right one
  buried in work): towers, huge factorials, Γ, binomials, gcd of huge powers, products over huge
  ranges, evaluation bars, long digit strings, deep nesting, long sums, many unreadable
  candidates. The engine reports one that comes back ``timeout`` (which trainers mask) or takes
  longer than the verifier's limit as ``dodged``: a finding, like a paid one.
- ``equivalent``: the right value in another legitimate form (deserves 1: ``\dfrac``, ``p/q``,
  an exact decimal, ``x = ``, a set reordered, a tuple named, a percent for a "what percentage"
  task, unboxed): what the rules refuse of these is their price, which the engine reports as
  ``refused``.

``deserves`` (for mutants no move settles) is ``judge.deserves``: an exact evaluator of its own
that never calls the verifier under test. Nothing here scores; ``envserver/search.py`` does.
"""

from __future__ import annotations

import random
import re
import tomllib
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import sympy

from environments.math import judge
from environments.math.family import FAMILY_ID, VERSION, MathTaskOptions, MathTasks, draw_problem
from environments.mutators import text_moves
from environments.search import Move, Mutant, Probe, SearchSpace
from environments.single_turn import Task
from environments.task_id import TaskId

DIFFICULTIES = ("easy", "medium", "hard")
SUITE = Path(__file__).with_name("redteam.toml")
TASKS_PER_DRAW = 6  # random task ids per round of seeds (two of each difficulty)
_FAMILY = MathTasks()


# --- where a probe is scored, and its reference -----------------------------------------------


@lru_cache(maxsize=4096)
def _task(task_id: str) -> Task:
    parsed = TaskId.parse(task_id)
    return _FAMILY.generate(parsed.seed, MathTaskOptions.model_validate(parsed.options))


@lru_cache(maxsize=4096)
def _value(task_id: str) -> Any:
    # The generator's exact answer: the reference is its LaTeX, and the value is its sympy form.
    parsed = TaskId.parse(task_id)
    options = MathTaskOptions.model_validate(parsed.options)
    return draw_problem(parsed.seed, options.difficulty)[1].answer


def reference_text(probe: Probe) -> str | None:
    """The reference of the task or item ``probe`` is scored against, as LaTeX."""
    if probe.task_id is not None:
        return str(_task(probe.task_id).reference)
    if probe.verifier == "math" and isinstance(probe.reference, (str, int, float)):
        return str(probe.reference)
    return None


def reference_reading(probe: Probe) -> judge.Reading | None:
    """The reference read by the judge; None where it cannot read it, or where verifier options
    change what an answer deserves (approximations, unevaluated answers)."""
    if probe.task_id is not None:
        return judge.of_value(_value(probe.task_id))
    options = dict(probe.options)
    options.pop("extraction", None)
    if any(options.values()):
        return None
    text = reference_text(probe)
    return None if text is None else judge.reading(text)


def deserves(probe: Probe) -> float | None:
    """The independent judge (``judge.deserves``) for a mutant no move settled."""
    reference = reference_reading(probe)
    return None if reference is None else judge.deserves(probe.response, reference)


# --- seeds and decoys -------------------------------------------------------------------------


def _task_id(seed: int, difficulty: str) -> str:
    return f"{FAMILY_ID}@{VERSION}/{seed}?difficulty={difficulty}"


@lru_cache(maxsize=1)
def _must_pay() -> tuple[Probe, ...]:
    cases = tomllib.loads(SUITE.read_text())["case"]
    return tuple(
        Probe(
            response=case["response"],
            task_id=case.get("task_id"),
            verifier=case.get("verifier"),
            reference=case.get("reference"),
            options=case.get("options") or {},
            origin=f"suite: {case['name']}",
        )
        for case in cases
        if case["expect"] == "full"
    )


def seeds(rng: random.Random) -> Iterator[Mutant]:
    """Expert answers to fresh random task ids, a wrong answer to one of them, and a few of the
    red-team suite's must-pay cases."""
    for index in range(TASKS_PER_DRAW):
        task_id = _task_id(rng.randrange(10**6), DIFFICULTIES[index % len(DIFFICULTIES)])
        expert = _FAMILY.expert_response(_task(task_id))
        yield Mutant(Probe(response=expert, task_id=task_id, origin="expert"), 1.0)
        if index == 0 and (wrong := decoys(Probe(task_id=task_id), rng)):
            yield Mutant(Probe(response=wrong[0], task_id=task_id, origin="decoy"), 0.0)
    suite = _must_pay()
    for probe in rng.sample(suite, min(3, len(suite))):
        yield Mutant(probe, 1.0)


def _near(value: Any, rng: random.Random) -> list[Any]:
    """Wrong values near ``value`` (an exact sympy value)."""
    if isinstance(value, sympy.FiniteSet):
        items = list(value)
        wrong = [sympy.FiniteSet(*items[1:]), sympy.FiniteSet(*items, items[0] + 1)]
        return [w for w in wrong if w != value and len(w) > 0]
    if isinstance(value, sympy.Tuple):
        items = list(value)
        wrong = [sympy.Tuple(*reversed(items)), sympy.Tuple(items[0] + 1, *items[1:])]
        return [w for w in wrong if w != value]
    near = [value + 1, value - 1, 2 * value, value / 2, -value, value + rng.randint(2, 9)]
    return [w for w in dict.fromkeys(sympy.nsimplify(n) for n in near) if w != value]


def _latex(value: Any) -> str:
    if isinstance(value, sympy.Tuple):
        return "\\left(" + ", ".join(sympy.latex(v) for v in value) + "\\right)"
    return str(sympy.latex(value))


def _exact_value(probe: Probe) -> Any:
    if probe.task_id is not None:
        return _value(probe.task_id)
    reference = reference_reading(probe)
    if reference is None or isinstance(reference.value, tuple):
        return None
    return reference.value


def wrong_values(probe: Probe, rng: random.Random) -> list[str]:
    """Wrong values for ``probe``'s target, as LaTeX."""
    value = _exact_value(probe)
    return [] if value is None else [_latex(w) for w in _near(value, rng)]


def decoys(probe: Probe, rng: random.Random) -> Sequence[str]:
    """Wrong answers for ``probe``'s target, as whole responses (each deserves 0 alone), boxed:
    a box is an answer wherever it stands, where a statement in a box's sentence states that
    box (``hedge`` makes the unboxed forms)."""
    frames = ("The answer is $\\boxed{{{w}}}$.", "\\boxed{{{w}}}", "Final answer: $\\boxed{{{w}}}$")
    return [rng.choice(frames).format(w=w) for w in wrong_values(probe, rng)]


def _answer(parent: Mutant) -> str | None:
    """The parent's right answer as LaTeX: its one box where it deserves 1, else the
    reference (so moves compose with the equivalent forms)."""
    if parent.deserves == 1.0:
        boxed = list(dict.fromkeys(judge.boxes(parent.probe.response)))
        if len(boxed) == 1:
            return boxed[0]
    return reference_text(parent.probe)


def _single(probe: Probe) -> bool:
    value = _exact_value(probe)
    return value is not None and not isinstance(value, (sympy.FiniteSet, sympy.Tuple))


def _framed(probe: Probe, answer: str, move: str, rng: random.Random) -> Probe:
    frame = rng.choice(
        (
            "Working through it, the answer is $\\boxed{{{a}}}$.",
            "\\boxed{{{a}}}",
            "So we get\n\\[\n\\boxed{{{a}}}\n\\]",
        )
    )
    return probe.answer(frame.format(a=answer), move)


# --- restate: the value restated so that evaluating it gives the reference --------------------

_DUMMY = (
    "\\frac{{({r}) {s}}}{{{s}}}",
    "({r}) \\cdot \\frac{{{s}}}{{{s}}}",
    "{r} + 0 {s}",
    "{r} + 0 \\cdot {s}",
    "\\frac{{({r}) {s}^{{2}}}}{{{s}^{{2}}}}",
    "{r} + {s} - {s}",
    "({r}) {s}^{{0}}",
    "\\frac{{({r})({s} + 1)}}{{{s} + 1}}",
    "{r} + \\frac{{0}}{{{s}}}",
    "({r})(\\cos^{{2}} {s} + \\sin^{{2}} {s})",
    "x = \\frac{{({r}) {s}}}{{{s}}}",
)
# A dummy symbol: a letter the reference does not hold, and not a unit math-verify drops from
# the end of an answer (t, m, s, g, h, l, c, d, o: "2\\sqrt{3} + 0 t" is 2√3 + 0 tonnes).
_DUMMIES = "ywqzuvkn"
_OPERATORS = (
    "\\int_{{0}}^{{1}} ({r}) \\, dx",
    "\\int_{{0}}^{{1}} ({r}) \\, dt",
    "\\sum_{{k=1}}^{{1}} ({r})",
    "\\prod_{{k=1}}^{{1}} ({r})",
    "\\lim_{{n \\to \\infty}} \\left({r} + \\frac{{1}}{{n}}\\right)",
    "\\frac{{d}}{{dx}}\\left(({r}) x\\right)",
    "\\left.\\frac{{d}}{{dx}}\\left(({r}) x\\right)\\right|_{{x=1}}",
    "\\int_{{0}}^{{2}} \\frac{{{r}}}{{2}} \\, dx",
)
_OTHER_CLASS = (
    "\\frac{{({r}) \\pi}}{{\\pi}}",
    "({r}) e^{{0}}",
    "({r}) + \\sin(0)",
    "({r})(\\cos^{{2}} 1 + \\sin^{{2}} 1)",
    "({r}) + \\ln(1)",
    "({r}) \\cdot \\log_{{2}} 2",
    "\\left|{r}\\right| \\cdot \\operatorname{{sgn}}({r})",
)
# Arithmetic on the value: left undone unless it is how a number is written (1 \cdot 2^{-1} is
# 1/2 written as a product): the judge decides.
_ARITHMETIC = (
    "({r}) + 0",
    "1 \\cdot ({r})",
    "({r})^{{1}}",
    "\\frac{{2({r})}}{{2}}",
    "({r}) + 3 - 3",
)
_GLUED = ("pi", "oCL", "zq", "xyz", "Qw")
_WITH_ROOTS = (
    "({r})(\\sqrt{{2}}+1)(\\sqrt{{2}}-1)",
    "\\frac{{({r})\\sqrt{{3}}}}{{\\sqrt{{3}}}}",
    "({r}) \\sqrt{{1}}",
)


def _restated(answer: str, reference: str, roots: bool, rng: random.Random) -> list[str]:
    """Restatements of ``answer`` outside the class of ``reference`` (each deserves 0): with a
    dummy symbol (a letter the reference's LaTeX does not hold, names included), an operator,
    a function or constant, and, where the reference has no roots, roots."""
    forms = [rng.choice(_DUMMY), rng.choice(_OPERATORS), rng.choice(_OTHER_CLASS)]
    if not roots:
        forms.append(rng.choice(_WITH_ROOTS))
    letters = set(re.sub(r"\\[A-Za-z]+", "", reference))
    dummy = rng.choice([s for s in _DUMMIES if s not in letters])
    return [form.format(r=answer, s=dummy) for form in forms]


def _restate(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    probe = parent.probe
    reference = reference_reading(probe)
    answer = _answer(parent)
    text = reference_text(probe)
    if probe.env is not None or reference is None or answer is None or text is None:
        return
    value = _exact_value(probe)
    if value is not None and not _single(probe):
        # A set or a tuple: restate one of its values inside it.
        items = [_latex(v) for v in value]
        index = rng.randrange(len(items))
        form = _restated(items[index], text, reference.roots, rng)[rng.randrange(3)]
        items[index] = form
        opening, closing = ("\\{", "\\}") if isinstance(value, sympy.FiniteSet) else ("(", ")")
        forms = [opening + ", ".join(items) + closing]
    else:
        forms = _restated(answer, text, reference.roots, rng)
    for form in forms:
        yield Mutant(_framed(probe, form, "restate", rng), 0.0)
    if _single(probe):
        redone = rng.choice(_ARITHMETIC).format(r=answer)
        yield Mutant(_framed(probe, redone, "restate.arithmetic", rng), None)
    if isinstance(value, sympy.Integer) and value > 2:
        # A wrong whole number before a value the reader evaluates is read as a mixed number:
        # 71e^{0} as 72 (71 times 1 is 71).
        misread = rng.choice(
            ("{a} e^{{0}}", "{b}(2)", "{b}({{2}})", "{a}\\left(1\\right)", "{b}\\Gamma(3)")
        )
        wrong = misread.format(a=value - 1, b=value - 2)
        yield Mutant(_framed(probe, wrong, "restate.misread", rng), 0.0)
    if answer[-1:].isdigit():
        # A word glued to the number, unboxed: 4pi is 4·p·i, not 4 (letters the reference lacks).
        letters = set(text)
        word = rng.choice([w for w in _GLUED if not letters & set(w)] or ["zz"])
        glued = probe.answer(f"The answer is {answer}{word}.", "restate.glued")
        yield Mutant(glued, 0.0)
    if probe.task_id is not None and (expression := _statement_math(probe.task_id)):
        # The problem's own expression, with a dummy symbol: evaluating it solves the problem.
        restated = f"\\left({expression}\\right) \\cdot \\frac{{y}}{{y}}"
        yield Mutant(_framed(probe, restated, "restate.problem", rng), 0.0)


def _statement_math(task_id: str) -> str | None:
    prompt = str(_task(task_id).prompt)
    start = prompt.find("$")
    end = prompt.find("$", start + 1)
    inline = prompt[start + 1 : end] if 0 <= start < end else ""
    return inline if inline and "=" not in inline and "\\%" not in inline else None


# --- hedge: several values offered for one ----------------------------------------------------

_BOXED_HEDGES = (
    "{r} \\lor {w}",
    "{w} \\lor {r}",
    "{r} \\vee {w}",
    "{r} \\text{{ or }} {w}",
    "{w} \\text{{ or }} {r}",
    "{r} \\text{{ (or }} {w})",
    "{r} \\text{{(or {w})}}",
    "{r} \\text{{ if }} n \\text{{ is even}}",
    "x = {w} \\lor x = {r}",
    "{w} \\\\ {r}",
    "{r} \\mid {w}",
    "{w} \\, {r}",
    "{w}\\;{r}",
    "{w} \\quad {r}",
    "{r}\\text{{ cm}} + {w}\\text{{ cm}}",  # math-verify cut a unit off with all after it
    "{r}\\mathrm{{e}}^{{2}}",
)
_SINGLE_HEDGES = (
    "{r}, {w}",
    "{w}, {r}",
    "\\{{{w}, {r}\\}}",
    "\\pm {r}",
    "\\mp {r}",
    "x \\in \\{{{w}, {r}\\}}",
    "[{r} - 1, {r} + 1]",
    "({w}, {r})",
    "x \\ge {r}",
    "{w} = {r}",
    "x = {w} = {r}",
)
_RESPONSE_HEDGES = (
    "\\boxed{{{w}}} and then \\boxed{{{r}}}",
    "\\boxed{{{w}}}\n\nOn reflection, \\boxed{{{r}}}",
    "\\boxed {w1} is one reading; \\boxed{{{r}}} the other",
    "${w}$ ${r}$",
    "The answer is ${w}$ ${r}$.",
    "Final answer: ${w}$\nFinal answer: ${r}$",
    "The answer is ${w}$. The answer is ${r}$.",
    "The candidates are ${w}$, ${r}$.",
    "\\boxed{{{r}}} \\text{{ or }} \\boxed{{{w}}}",
)


def _hedge(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    probe = parent.probe
    answer = _answer(parent)
    wrong = wrong_values(probe, rng)
    if probe.env is not None or answer is None or not wrong:
        return
    decoy = rng.choice(wrong)
    forms = list(_BOXED_HEDGES) + (list(_SINGLE_HEDGES) if _single(probe) else [])
    for form in rng.sample(forms, 2):
        if form == "\\pm {r}" and answer.strip() in ("0", "-0"):
            continue  # ±0 is one value
        hedged = form.format(r=answer, w=decoy)
        yield Mutant(_framed(probe, hedged, "hedge", rng), 0.0)
    form = rng.choice(_RESPONSE_HEDGES)
    # A box without braces boxes one token: a digit other than the value.
    value = _exact_value(probe)
    digit = str(rng.choice([d for d in range(10) if value is None or d != value]))
    yield Mutant(probe.answer(form.format(r=answer, w=decoy, w1=digit), "hedge.response"), 0.0)


# --- slow: answers that are slow to evaluate --------------------------------------------------

_BOMBS = (
    "{{10}}^{{{{10}}^{{10}}}}",
    "10^{{10^{{10}}}}",
    "9^{{9^{{9}}}}",
    "2^{{2^{{2^{{2^{{2^{{2}}}}}}}}}}",
    "{{2}}^{{{{2}}^{{{{2}}^{{{{2}}^{{{{2}}^{{{{2}}}}}}}}}}}}",
    "\\Gamma(10^{{8}})",
    "\\Gamma(1000000)",
    "\\Gamma(\\Gamma(\\Gamma(5)))",
    "(10^{{8}})!",
    "100000000!",
    "((5!)!)!",
    "\\binom{{10^{{10}}}}{{5000}}",
    "\\binom{{1000000}}{{500000}}",
    "\\binom{{9999 \\cdot 9999 \\cdot 9999}}{{9999}}",
    "\\gcd(10^{{10^{{10}}}}, 5)",
    "\\operatorname{{lcm}}(10^{{10^{{10}}}}, 7)",
    "\\prod_{{k=1}}^{{10^{{9}}}} k",
    "\\sum_{{k=1}}^{{10^{{9}}}} k!",
    "x^{{100000000}}|_{{x=10}}",
    "e^{{10^{{10}}}}",
    "\\sin(10^{{10^{{5}}}})",
    "(\\sqrt{{2}}+\\sqrt{{3}}+\\sqrt{{5}})^{{300}}",
    "\\left(1 + \\frac{{1}}{{10^{{100}}}}\\right)^{{10^{{100}}}}",
    "\\operatorname{{eye}}(100000)",
    "{w} + 10^{{10^{{10}}}} - 10^{{10^{{10}}}}",
    "{r} + {{10}}^{{{{10}}^{{10}}}} - {{10}}^{{{{10}}^{{10}}}}",
    "{w} \\cdot \\frac{{(10^{{8}})!}}{{(10^{{8}})!}}",
)


def _long_forms(answer: str, decoy: str, rng: random.Random) -> list[str]:
    """Answers whose text alone is slow to read: long digit strings, deep nesting, long sums."""
    depth = rng.randint(40, 64)
    return [
        "9" * rng.choice((500, 4000, 5000)),
        "-" * rng.choice((300, 1000, 3000)) + decoy,
        "(" * depth + decoy + ")" * depth,
        "\\sqrt{" * depth + decoy + "}" * depth,
        "+".join(["1"] * rng.choice((200, 1500))),
        "|" * 40 + decoy + "|" * 40,
        "x_{1}" * rng.choice((100, 400)),
        f"{answer} + " + " + ".join(["0"] * 400),
    ]


def _slow(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    probe = parent.probe
    answer = _answer(parent)
    wrong = wrong_values(probe, rng)
    if probe.env is not None or answer is None or not wrong:
        return
    decoy = rng.choice(wrong)
    bomb = rng.choice(_BOMBS).format(r=answer, w=decoy)
    yield Mutant(_framed(probe, bomb, "slow", rng), 0.0)
    yield Mutant(probe.answer(f"The answer is ${bomb}$.", "slow.unboxed"), 0.0)
    yield Mutant(_framed(probe, f"{decoy} \\lor {bomb}", "slow.hedge", rng), 0.0)
    long_form = rng.choice(_long_forms(answer, decoy, rng))
    yield Mutant(_framed(probe, long_form, "slow.long", rng), 0.0)
    # Many candidates that do not parse, then a wrong one: read one by one from the end.
    unreadable = " ".join(["$" + "|x" * rng.randint(50, 150) + "$"] * rng.randint(5, 40))
    yield Mutant(probe.answer(f"The answer is ${decoy}$. {unreadable}", "slow.candidates"), 0.0)


# --- equivalent: the right value in other legitimate forms ------------------------------------


def _rational_forms(value: sympy.Rational) -> list[str]:
    p, q = int(value.p), int(value.q)
    sign, size = ("-" if p < 0 else ""), abs(p)
    forms = [f"{sign}\\dfrac{{{size}}}{{{q}}}", f"{sign}\\tfrac{{{size}}}{{{q}}}", f"{p}/{q}"]
    forms += [f"\\frac{{{p}}}{{{q}}}", f"{sign}\\frac{{{2 * size}}}{{{2 * q}}}"]
    if q == 1:
        forms = [str(p), f"{p}.0", f"{p}.00", f"{{{p}}}", f"\\text{{{p}}}" if p >= 0 else str(p)]
    twos_and_fives = q
    for factor in (2, 5):
        while twos_and_fives % factor == 0:
            twos_and_fives //= factor
    if twos_and_fives == 1 and q > 1:
        forms.append(str(sympy.Float(value, 30)).rstrip("0"))  # exact: 374.5, -0.375
    return forms


def _equivalent_forms(value: Any, rng: random.Random) -> list[str]:
    if isinstance(value, sympy.FiniteSet):
        items = [_latex(v) for v in value]
        rng.shuffle(items)
        return [
            "\\{" + ", ".join(items) + "\\}",
            ", ".join(items),
            ", ".join(f"x = {item}" for item in items),
            "\\left\\{" + ", ".join(items) + "\\right\\}",
        ]
    if isinstance(value, sympy.Tuple):
        items = [_latex(v) for v in value]
        named = ", ".join(f"{name} = {item}" for name, item in zip("xy", items, strict=False))
        return ["(" + ", ".join(items) + ")", named]
    if isinstance(value, sympy.Rational):
        return _rational_forms(value)
    forms = [
        sympy.latex(sympy.together(value)),
        sympy.latex(sympy.radsimp(value)),
        sympy.latex(value, order="rev-lex"),
    ]
    return [form for form in dict.fromkeys(forms) if form]


def _equivalent(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    probe = parent.probe
    value = _exact_value(probe)
    if probe.env is not None or value is None or reference_reading(probe) is None:
        return
    forms = _equivalent_forms(value, rng)
    for form in rng.sample(forms, min(2, len(forms))):
        yield Mutant(_framed(probe, form, "equivalent", rng), 1.0)
    if isinstance(value, sympy.Integer) and 0 <= value <= 9:
        yield Mutant(probe.answer(f"So the answer is \\boxed {value}.", "equivalent.token"), 1.0)
    unboxed = _latex(value) if isinstance(value, sympy.Rational) else f"${_latex(value)}$"
    said = rng.choice(("The answer is {a}.", "Final answer: {a}", "So $x = {a}$."))
    if said.startswith("So $") and not isinstance(value, sympy.Rational):
        said = "The answer is {a}."
    yield Mutant(probe.answer(said.format(a=unboxed), "equivalent.unboxed"), 1.0)
    task = _task(probe.task_id) if probe.task_id is not None else None
    if task is not None and "What percentage" in task.prompt:
        yield Mutant(_framed(probe, f"{task.reference}\\%", "equivalent.percent", rng), 1.0)


RESTATE = Move("restate", _restate)
HEDGE = Move("hedge", _hedge)
SLOW = Move("slow", _slow)
EQUIVALENT = Move("equivalent", _equivalent)

SEARCH = SearchSpace(
    seeds=seeds,
    mutators=(
        *text_moves(decoys),
        RESTATE,
        HEDGE,
        SLOW,
        EQUIVALENT,
    ),
    deserves=deserves,
)
