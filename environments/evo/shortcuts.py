"""The search for shortcuts: answers that earn reward without the task being solved.

A fixed, published list of hostile answers (L2's ``HOSTILE``) stops the attacks somebody
thought of; a submitted scorer can pay anything else (any 13-character answer, a magic word, a
residue class of character codes) and a prompt can carry its answer in a form no exact
substring check sees (reversed, encoded). So admission searches, on tasks drawn from the
server's secret (``EvoSettings.probe_key``: a submission cannot know which tasks, or which
answers, it will be probed with):

- **random answers** (``RANDOM_PROBES``, shaped like answers: as long as the reference's, of a
  random length, numbers near and far from it, the prompt's own numbers and words, common
  words): the share that earns reward must be tiny. Refused at ``RANDOM_REFUSE_AT`` or more:
  an environment that pays ``RANDOM_BOUND`` of random answers reaches that with probability at
  most ``FALSE_REFUSAL``;
- **the scorer's weak spots**: a string of every length up to ``LONGEST``, one for every sum
  of character codes in ``CODE_SUMS``, the module's own literals and common words (bare and in
  the tag), and what a symbolic search of ``score`` (CrossHair, in the sandbox, on a symbolic
  response) finds it pays;
- **trivial solvers** (L4): a few lines of code reading the prompt (its k-th token, the token
  after a given word, its largest or smallest number; each as is, reversed or decoded from
  base64, hex or rot13) and constant common answers.

Every answer found paying where it is not the answer is a *suspect*, and so is every trivial
solver found earning reward; the strongest suspects (``Shortcut``) are then confirmed on all the
secret tasks: one that earns reward there more often than a shortcut earning ``SHORTCUT_BOUND``
of them, or ``LEVEL_BOUND`` of one difficulty level's, would with probability
``FALSE_REFUSAL`` refuses the submission (a few lines of code solve it: no solve-verify
asymmetry, the EvoEnv paper's own criterion).
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import hashlib
import hmac
import random
import re
import string
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from math import comb
from typing import Any

from environments.evo.program import (
    ProgramFailure,
    SandboxFailure,
    run_calls,
    run_calls_apart,
    score_call,
    symbolic_call,
)
from environments.evo.review import answer_of
from environments.task_id import MAX_SEED

SECRET_SEEDS = 16
"""Task seeds per difficulty level drawn from the secret (half below 10,000, where most task ids
are, half anywhere up to the largest seed a task id takes); every level gets the same seeds."""
RANDOM_PROBES = 480
RANDOM_BOUND = 0.005
FALSE_REFUSAL = 1e-3
LONGEST = 64
"""Strings of every length from 0 to this are probed (and the symbolic search's bound)."""
CONSTANT_TASKS = 2
"""Secret tasks each literal and common word is first tried on (in the tag; bare on one)."""
RULE_TASKS = 8
"""Secret tasks (spread over the levels) the trivial solvers are first tried on."""
MOST_TOKENS = 64
"""Tokens read from each end of a prompt by the trivial solvers."""
MOST_LITERALS = 64
CONFIRMED = 8
"""Suspects confirmed on every secret task, per search (those found most often first)."""
SHORTCUT_BOUND = 0.25
LEVEL_BOUND = 0.5
SYMBOLIC_WANTED = 3
SYMBOLIC_START_CPU_S = 1.5
"""CPU time a symbolic run may spend before its search: importing CrossHair and z3."""
COMMON_WORDS = (
    "0", "1", "-1", "yes", "no", "true", "false", "True", "False", "none", "None", "null",
    "correct", "right", "answer", "the answer", "ok", "done", "pass", "solved", "valid", "a",
    "x", "unknown",
)  # fmt: skip
_VISIBLE = string.ascii_letters + string.digits + string.punctuation
_ALPHABET = _VISIBLE + " "
CODE_SUMS = range(2 * ord("!"), 2 * ord("~") + 1)
"""Sums of character codes probed, each by two visible characters: every residue class modulo
a number up to 187 holds one of them."""
_TOKEN = re.compile(r"[A-Za-z0-9+/]{12,}={0,2}|-?\d+|[A-Za-z]+")
_NUMBER = re.compile(r"-?\d+")


@cache
def refuse_at(probes: int, bound: float, false_refusal: float = FALSE_REFUSAL) -> int:
    """The fewest paid probes, of ``probes``, that a scorer paying each with probability
    ``bound`` reaches with probability at most ``false_refusal`` (the binomial tail): the count
    at which the search refuses."""
    for least in range(probes + 1):
        tail = sum(
            comb(probes, k) * bound**k * (1 - bound) ** (probes - k)
            for k in range(least, probes + 1)
        )
        if tail <= false_refusal:
            return least
    return probes + 1


RANDOM_REFUSE_AT = refuse_at(RANDOM_PROBES, RANDOM_BOUND)


@dataclass(frozen=True)
class Task:
    """A task the search probes: its seed, level, instance, prompt and reference."""

    seed: int
    difficulty: int
    instance: Any
    prompt: str
    reference: str

    @property
    def answer(self) -> str:
        """The reference's answer (inside its last tag)."""
        return answer_of(self.reference)


def probe_rng(key: bytes, digest: str) -> random.Random:
    """The search's random draws for one submission: from the secret and the code's digest, so
    the same server gives the same code the same probes (and its verdict), and nobody without
    the secret knows them."""
    return random.Random(hmac.new(key, f"evo-probes/{digest}".encode(), hashlib.sha256).digest())


def secret_seeds(rng: random.Random) -> list[int]:
    """``SECRET_SEEDS`` distinct task seeds: half below 10,000, half anywhere."""
    seeds: set[int] = set()
    while len(seeds) < SECRET_SEEDS:
        seeds.add(rng.randrange(10_000) if len(seeds) % 2 else rng.randint(0, MAX_SEED))
    return sorted(seeds)


def tag(answer: str) -> str:
    """``answer`` inside the answer tag."""
    return f"<answer>{answer}</answer>"


# --- random answers --------------------------------------------------------------------------


def _text(rng: random.Random, length: int, alphabet: str = _ALPHABET) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def _number(rng: random.Random) -> str:
    return str(rng.choice((-1, 1)) * rng.randrange(10 ** rng.randint(1, 12)))


def random_answer(task: Task, rng: random.Random) -> str:
    """An answer-shaped guess for ``task`` that is not its answer (see the module docstring)."""
    answer = task.answer
    numbers = _NUMBER.findall(task.prompt)
    words = re.findall(r"[A-Za-z]{2,}", task.prompt)
    kinds: list[Callable[[], str]] = [
        lambda: _text(rng, len(answer), "".join(sorted(set(answer))) + string.ascii_letters),
        lambda: _text(rng, rng.randint(1, LONGEST)),
        lambda: _number(rng),
        lambda: rng.choice(COMMON_WORDS),
    ]
    if numbers:
        kinds.append(lambda: rng.choice(numbers))
    if words:
        kinds.append(lambda: rng.choice(words))
    if re.fullmatch(r"-?\d+", answer):  # near numbers only where the answer is one number
        kinds.append(lambda: str(int(answer) + rng.choice((-1, 1)) * rng.randint(1, 10)))
    for _ in range(8):
        guess = rng.choice(kinds)()
        if guess.strip() != answer:
            return guess
    return _text(rng, len(answer) + 1)


# --- shortcuts and their confirmation ---------------------------------------------------------


@dataclass(frozen=True)
class Shortcut:
    """A way to answer without solving, to be confirmed on every secret task: ``respond``
    gives its response to a task (None where it has none). A solver's response that is the
    reference counts (it solved the task); a constant answer is judged only on the tasks whose
    answer it is not (``solver`` False)."""

    name: str
    respond: Callable[[Task, random.Random], str | None] = field(compare=False)
    solver: bool


@dataclass(frozen=True)
class Confirmed:
    """A shortcut's record on the secret tasks: paid of judged, overall and per level."""

    shortcut: Shortcut
    paid: int
    judged: int
    by_level: dict[int, tuple[int, int]]
    example: str

    @property
    def share(self) -> float:
        """The share of the judged tasks it earned reward on."""
        return self.paid / self.judged if self.judged else 0.0

    @property
    def level_share(self) -> float:
        """Its largest share at one level."""
        return max((p / n for p, n in self.by_level.values() if n), default=0.0)

    @property
    def refused(self) -> bool:
        """Whether it earns reward too often: on more of the tasks than a shortcut earning
        ``SHORTCUT_BOUND`` of them overall, or ``LEVEL_BOUND`` of one level's, reaches with
        probability ``FALSE_REFUSAL``."""
        if self.judged and self.paid >= refuse_at(self.judged, SHORTCUT_BOUND):
            return True
        return any(n and p >= refuse_at(n, LEVEL_BOUND) for p, n in self.by_level.values())

    def summary(self) -> str:
        """What it earned, overall and per level."""
        levels = ", ".join(f"{level}: {p}/{n}" for level, (p, n) in sorted(self.by_level.items()))
        return (
            f"{self.shortcut.name} earns reward on {self.paid} of {self.judged} secret tasks "
            f"(per level {levels})"
        )

    def reason(self) -> str:
        """Why it is refused."""
        return (
            f"{self.summary()[:-1]}; refused where a shortcut earning {SHORTCUT_BOUND:.0%} "
            f"overall or {LEVEL_BOUND:.0%} at a level gets there with probability "
            f"{FALSE_REFUSAL:g}), e.g. {self.example[:120]!r}"
        )


def scores(source: str, probes: Sequence[tuple[Task, str]]) -> list[float | None]:
    """What ``score`` gives each ``(task, response)``, each distinct pair scored once (None
    for None, an exception or a call over its budget). Raises ``ProgramFailure`` or
    ``SandboxFailure`` as ``run_calls`` does."""
    unique = list(dict.fromkeys((id(task), response) for task, response in probes))
    tasks = {id(task): task for task, _ in probes}
    calls = [score_call(tasks[key].instance, response) for key, response in unique]
    results = run_calls(source, calls)
    values: dict[tuple[int, str], float | None] = {}
    for key, result in zip(unique, results, strict=True):
        value = result.value if result.error is None else None
        number = isinstance(value, int | float) and not isinstance(value, bool)
        values[key] = float(value) if number and value is not None else None
    return [values[(id(task), response)] for task, response in probes]


def score_all(source: str, probes: Sequence[tuple[Task, str]]) -> list[bool]:
    """Whether each ``(task, response)`` earns reward (scores above 0)."""
    return [value is not None and value > 0 for value in scores(source, probes)]


def confirm(
    source: str, shortcuts: Sequence[Shortcut], tasks: Sequence[Task], rng: random.Random
) -> list[Confirmed]:
    """Each shortcut's record on every task of ``tasks``."""
    plan: list[tuple[int, Task, str | None]] = []
    for index, shortcut in enumerate(shortcuts):
        for task in tasks:
            response = shortcut.respond(task, rng)
            if response is None and not shortcut.solver:
                continue
            if not shortcut.solver and answer_of(str(response)) == task.answer:
                continue  # a constant that is this task's answer says nothing about the scorer
            plan.append((index, task, response))  # a solver with no answer has not solved it
    verdicts = iter(score_all(source, [(t, r) for _, t, r in plan if r is not None]))
    paid = [response is not None and next(verdicts) for _, _, response in plan]
    records = []
    for index, shortcut in enumerate(shortcuts):
        mine = [(t, r, p) for (i, t, r), p in zip(plan, paid, strict=True) if i == index]
        levels: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        for task, _, earned in mine:
            levels[task.difficulty][0] += earned
            levels[task.difficulty][1] += 1
        example = next((r for _, r, earned in mine if earned and r is not None), "")
        records.append(
            Confirmed(
                shortcut,
                sum(earned for _, _, earned in mine),
                len(mine),
                {level: (p, n) for level, (p, n) in levels.items()},
                example,
            )
        )
    return records


@dataclass(frozen=True)
class SearchOutcome:
    """What the search of the scorer found: why it refuses (None: nothing paid too often),
    and its facts for the stage report."""

    refusal: str | None
    facts: dict[str, Any]


def _verdict(records: Sequence[Confirmed], what: str, facts: dict[str, Any]) -> SearchOutcome:
    """Refused for the suspect that earns most of those over a bound (``what`` says what that
    means); the facts name the strongest suspect either way."""
    facts = {**facts, "suspects_confirmed": len(records)}
    if not records:
        return SearchOutcome(None, facts)
    strongest = max(records, key=lambda r: (r.refused, r.share, r.level_share))
    facts["strongest_suspect"] = strongest.summary()
    return SearchOutcome(f"{what}: {strongest.reason()}" if strongest.refused else None, facts)


def _strongest(suspects: Counter[Shortcut]) -> list[Shortcut]:
    return [shortcut for shortcut, _ in suspects.most_common(CONFIRMED)]


# --- the scorer: random answers, every length, literals, symbolic search -----------------------


def constant(response: str) -> Shortcut:
    """The same response to every task."""
    return Shortcut(f"the constant response {response!r}", lambda t, r: response, False)


def of_length(length: int) -> Shortcut:
    """A random string of ``length`` visible characters (no space: as long however a scorer
    strips it), never the task's answer."""

    def respond(task: Task, rng: random.Random) -> str:
        while True:
            text = _text(rng, length, _VISIBLE)
            if text.strip() != task.answer or length == 0:
                return tag(text)

    return Shortcut(f"any {length}-character answer", respond, False)


def of_code_sum(total: int) -> str:
    """Two visible characters whose codes sum to ``total`` (one of ``CODE_SUMS``)."""
    first = max(ord("!"), total - ord("~"))
    return chr(first) + chr(total - first)


def literals(source: str) -> list[str]:
    """The module's string and number constants (not its docstrings): a scorer's magic words
    and special values are among them. At most ``MOST_LITERALS``, shortest first."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in docstrings:
            value = node.value
            if isinstance(value, str) and 0 < len(value.strip()) <= 200:
                found.add(value.strip())
            elif isinstance(value, int | float) and not isinstance(value, bool):
                found.add(str(value))
    return sorted(found, key=lambda text: (len(text), text))[:MOST_LITERALS]


SHAPES = ("tagged", "raw")
"""What CrossHair makes symbolic: the text inside one answer tag, and the whole response."""


def _symbolic(source: str, task: Task, seconds: float) -> tuple[list[str], str]:
    """CrossHair's finds on ``task``, ``seconds`` of CPU shared by ``SHAPES`` (a run each,
    concurrent), and a note when a run did not finish (the submission's code failed under
    it)."""
    if seconds <= 0:
        return [], "off"
    share = seconds / len(SHAPES)
    batches = [
        [
            symbolic_call(
                task.instance,
                task.reference,
                shape=shape,
                seconds=share,
                longest=LONGEST,
                wanted=SYMBOLIC_WANTED,
            )
        ]
        for shape in SHAPES
    ]
    found: list[str] = []
    notes = []
    for outcome in run_calls_apart(source, batches, share + SYMBOLIC_START_CPU_S):
        if isinstance(outcome, ProgramFailure):
            notes.append(f"a run failed ({outcome.status})")
            continue
        (result,) = outcome
        value = result.value if result.error is None else None
        if not isinstance(value, dict):
            notes.append(f"a run gave no result ({result.error or 'not a dict'})"[:200])
            continue
        if "unavailable" in value:
            raise SandboxFailure(
                "the symbolic search needs CrossHair where submissions run (pip install "
                f"'envserver[evo]'; the sandbox image installs it): {value['unavailable']}"
            )
        found += [text for text in value.get("found", []) if isinstance(text, str)]
    return found, "; ".join(notes) or "complete"


def search_scorer(
    source: str, tasks: Sequence[Task], rng: random.Random, symbolic_cpu_s: float
) -> SearchOutcome:
    """Random answers, every length, the module's literals and common words, and CrossHair's
    finds on ``tasks`` (the secret tasks); suspects confirmed on all of them."""
    cycled = [tasks[i % len(tasks)] for i in range(RANDOM_PROBES)]
    randoms = [(task, tag(random_answer(task, rng))) for task in cycled]
    probes: list[tuple[Task, str, Shortcut]] = []
    for length in range(LONGEST + 1):
        task, shortcut = rng.choice(tasks), of_length(length)
        probes.append((task, shortcut.respond(task, rng) or "", shortcut))
    for total in CODE_SUMS:
        response = tag(of_code_sum(total))
        probes.append((rng.choice(tasks), response, constant(response)))
    words = list(dict.fromkeys([*literals(source), *COMMON_WORDS]))
    for word in words:
        for task in rng.sample(list(tasks), CONSTANT_TASKS):
            probes.append((task, tag(word), constant(tag(word))))
        task = rng.choice(tasks)
        probes.append((task, word, constant(word)))
    symbolic_task = rng.choice(tasks)
    found, symbolic_note = _symbolic(source, symbolic_task, symbolic_cpu_s)
    probes += [(symbolic_task, response, constant(response)) for response in found]
    probes = [(t, r, s) for t, r, s in probes if answer_of(r) != t.answer]
    values = scores(
        source, [*((t, t.reference) for t in tasks), *randoms, *((t, r) for t, r, _ in probes)]
    )
    wrong = next((t for t, v in zip(tasks, values[: len(tasks)], strict=True) if v != 1.0), None)
    if wrong is not None:
        return SearchOutcome(
            f"a reference response does not score 1 (secret task: seed {wrong.seed}, "
            f"difficulty {wrong.difficulty})",
            {},
        )
    paid = [value is not None and value > 0 for value in values[len(tasks) :]]
    random_paid, probe_paid = paid[: len(randoms)], paid[len(randoms) :]
    suspects: Counter[Shortcut] = Counter()
    for (_, response), earned in zip(randoms, random_paid, strict=True):
        if earned:
            suspects[constant(response)] += 1
    for (_, _, shortcut), earned in zip(probes, probe_paid, strict=True):
        if earned:
            suspects[shortcut] += 1
    facts: dict[str, Any] = {
        "random_answers": len(randoms),
        "random_answers_paid": sum(random_paid),
        "probes": len(probes),
        "symbolic": symbolic_note,
        "symbolic_finds": len(found),
    }
    if sum(random_paid) >= RANDOM_REFUSE_AT:
        example = next(r for (_, r), earned in zip(randoms, random_paid, strict=True) if earned)
        return SearchOutcome(
            f"the scorer pays {sum(random_paid)} of {len(randoms)} random answers drawn from "
            f"the server's secret (refused at {RANDOM_REFUSE_AT}: an environment paying "
            f"{RANDOM_BOUND:.1%} of them gets there with probability {FALSE_REFUSAL:g}), e.g. "
            f"{example[:120]!r}",
            facts,
        )
    records = confirm(source, _strongest(suspects), tasks, rng)
    return _verdict(records, "the scorer pays an answer that is not the task's", facts)


# --- trivial solvers (L4) --------------------------------------------------------------------


def decoded(token: str, how: str) -> str | None:
    """``token`` transformed (one of ``TRANSFORMS``), or None where the transform does not
    apply (not base64, hex, printable ASCII...)."""
    if how == "as is":
        return token
    if how == "reversed":
        return token[::-1]
    if how == "rot13":
        rotated = codecs.encode(token, "rot13")
        return rotated if rotated != token else None
    try:
        raw = base64.b64decode(token, validate=True) if how == "base64" else bytes.fromhex(token)
        text = raw.decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    return text.strip() if text.strip() and text.isprintable() else None


TRANSFORMS = ("as is", "reversed", "base64", "hex", "rot13")


def prompt_tokens(prompt: str) -> list[str]:
    """The prompt's tokens as the trivial solvers read them: numbers, runs of letters, and
    long runs of base64 or hex characters."""
    return _TOKEN.findall(prompt)


def _ordinal(number: int) -> str:
    suffix = (
        "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    )
    return f"{number}{suffix}"


def at(position: int, how: str) -> Shortcut:
    """The prompt's token at ``position`` (negative: from the end), transformed."""
    where = f"{_ordinal(position + 1)}" if position >= 0 else f"{_ordinal(-position)}-last"

    def respond(task: Task, rng: random.Random) -> str | None:
        tokens = prompt_tokens(task.prompt)
        if not -len(tokens) <= position < len(tokens):
            return None
        value = decoded(tokens[position], how)
        return None if value is None else tag(value)

    return Shortcut(f"the trivial solver 'the {where} token of the prompt, {how}'", respond, True)


def after(anchor: str, how: str) -> Shortcut:
    """The token after the first ``anchor`` token of the prompt, transformed."""

    def respond(task: Task, rng: random.Random) -> str | None:
        tokens = prompt_tokens(task.prompt)
        if anchor not in tokens[:-1]:
            return None
        value = decoded(tokens[tokens.index(anchor) + 1], how)
        return None if value is None else tag(value)

    return Shortcut(f"the trivial solver 'the token after {anchor!r}, {how}'", respond, True)


def extreme(which: str) -> Shortcut:
    """The largest or smallest number of the prompt."""

    def respond(task: Task, rng: random.Random) -> str | None:
        numbers = [int(n) for n in _NUMBER.findall(task.prompt)]
        if not numbers:
            return None
        return tag(str(max(numbers) if which == "largest" else min(numbers)))

    return Shortcut(f"the trivial solver 'the {which} number of the prompt'", respond, True)


def guess(word: str) -> Shortcut:
    """The same common answer to every task."""
    return Shortcut(f"the trivial solver 'always {word!r}'", lambda t, r: tag(word), True)


def _solvers(task: Task) -> dict[str, list[Shortcut]]:
    """Every response a trivial solver gives ``task``, and the solvers that give it."""
    tokens = prompt_tokens(task.prompt)
    count = len(tokens)
    solvers: dict[str, list[Shortcut]] = defaultdict(list)
    for position, token in enumerate(tokens):
        if position >= MOST_TOKENS and count - position > MOST_TOKENS:
            continue
        for how in TRANSFORMS:
            value = decoded(token, how)
            if value is None:
                continue
            made = [at(position, how), at(position - count, how)]
            solvers[tag(value)] += made + ([after(tokens[position - 1], how)] if position else [])
    for which in ("largest", "smallest"):
        solver = extreme(which)
        response = solver.respond(task, random.Random())
        if response is not None:
            solvers[response].append(solver)
    for word in COMMON_WORDS:
        solvers[tag(word)].append(guess(word))
    return solvers


def spread(tasks: Sequence[Task], count: int) -> list[Task]:
    """``count`` of ``tasks`` (sorted by level) evenly spaced, so every level is among them
    when there are at most ``count`` levels."""
    ordered = sorted(tasks, key=lambda task: (task.difficulty, task.seed))
    if len(ordered) <= count:
        return ordered
    step = len(ordered) / count
    return [ordered[int(i * step + step / 2)] for i in range(count)]


def search_solvers(source: str, tasks: Sequence[Task], rng: random.Random) -> SearchOutcome:
    """The trivial solvers on ``RULE_TASKS`` of ``tasks``; those that earn reward there are
    confirmed on all of them."""
    first = [(task, _solvers(task)) for task in spread(tasks, RULE_TASKS)]
    probes = [(task, response) for task, solvers in first for response in solvers]
    paid = iter(score_all(source, probes))
    suspects: Counter[Shortcut] = Counter()
    for _, solvers in first:
        for made in solvers.values():
            if next(paid):
                suspects.update(list(dict.fromkeys(made)))  # once per task, in a stable order
    records = confirm(source, _strongest(suspects), tasks, rng)
    what = "a few lines of code solve it (no solve-verify asymmetry)"
    return _verdict(records, what, {"trivial_answers": len(probes)})
