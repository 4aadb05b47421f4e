"""Seeded NL2SVA-Machine-style tasks: a random well-formed property over ``sig_A``…``sig_J`` with
declared widths, and its English rendering from templates.

The forms that models get wrong are over-represented: bounded delays (``##N``, ``##[m:n]``,
``|->`` against ``|=>``) and liveness (``s_eventually``, ``strong(##[1:$])``, the ``until``
family). Three levels: ``easy`` (1-bit signals, same/next-cycle implications and invariants),
``medium`` (some 4-bit signals, sampled-value functions, fixed and ranged delays, ``$past``),
``hard`` (wider vectors, compound conditions, sequence antecedents, repetition, liveness and
until). Every reference is checked at generation: it parses, is not a tautology and is not
vacuous; a rejected draw is redrawn from the same seeded RNG, so a seed always gives the same task.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from verifiers.numbers import Options
from verifiers.sva.api import CheckOptions, SvaError, is_tautology, is_vacuous, parse_assertion

Level = Literal["easy", "medium", "hard"]
LEVELS: tuple[Level, ...] = ("easy", "medium", "hard")
SIGNALS = tuple(f"sig_{letter}" for letter in "ABCDEFGHIJ")
MAX_DRAWS = 32
# Generation must not depend on machine load: a generous limit, and an undecided check rejects.
_GENERATION_CHECK = CheckOptions(timeout_s=30.0)


class GeneratedOptions(Options):
    """What selects a generated task besides its seed."""

    level: Literal["easy", "medium", "hard", "mixed"] = Field(
        "mixed",
        description="Difficulty: easy, medium, hard, or mixed (the seed picks one of the three).",
    )


@dataclass(frozen=True)
class GeneratedTask:
    """One generated task: the reference assertion, its English sentence, the signals' widths
    and the testbench declaring them."""

    level: Level
    form: str
    assertion: str
    sentence: str
    widths: tuple[tuple[str, int], ...]
    testbench: str


_VERBS = (
    (" is ", " must be "),
    (" are ", " must be "),
    (" rises", " must rise"),
    (" falls", " must fall"),
    (" changes ", " must change "),
    (" keeps ", " must keep "),
    (" equals ", " must equal "),
)


@dataclass(frozen=True)
class Phrase:
    """A fragment as SVA and as English (a statement: "sig_A is high")."""

    sva: str
    english: str
    compound: bool = False

    @property
    def must(self) -> str:
        """The English as an obligation: "sig_A must be high"."""
        if self.compound:
            return f"it must hold that {self.english}"
        for verb, obligation in _VERBS:
            if verb in self.english:
                return self.english.replace(verb, obligation, 1)
        return f"it must hold that {self.english}"


class _Draw:
    """One attempt at a task: the RNG, the level and the widths chosen for it."""

    def __init__(self, rng: random.Random, level: Level) -> None:
        self.rng = rng
        self.level = level
        vectors = {"easy": 0, "medium": 2, "hard": 4}[level]
        wide = rng.sample(SIGNALS, vectors)
        self.widths = {
            name: (rng.choice((4, 8)) if level == "hard" else 4) if name in wide else 1
            for name in SIGNALS
        }
        self.unused = list(SIGNALS)
        rng.shuffle(self.unused)

    def signal(self) -> str:
        """A signal not used yet in this property (so conditions are independent)."""
        return self.unused.pop()

    def atom(self, sampled: bool) -> Phrase:
        """A simple condition on one fresh signal."""
        name = self.signal()
        width = self.widths[name]
        choices: list[Phrase]
        if width == 1:
            choices = [Phrase(name, f"{name} is high"), Phrase(f"!{name}", f"{name} is low")]
            if sampled:
                choices += [
                    Phrase(f"$rose({name})", f"{name} rises"),
                    Phrase(f"$fell({name})", f"{name} falls"),
                ]
        else:
            value = self.rng.randrange(1, 2**width - 1)
            choices = [
                Phrase(f"|{name}", f"at least one bit of {name} is high"),
                Phrase(f"&{name}", f"all bits of {name} are high"),
                Phrase(f"({name} == {width}'d{value})", f"{name} equals {value}"),
                Phrase(f"({name} > {width}'d{value})", f"{name} is greater than {value}"),
                Phrase(f"({name} == '0)", f"{name} is zero"),
            ]
            if sampled:
                choices += [
                    Phrase(f"$changed({name})", f"{name} changes value"),
                    Phrase(f"$stable({name})", f"{name} keeps its previous value"),
                ]
        return self.rng.choice(choices)

    def condition(self) -> Phrase:
        """An atom, or at the hard level sometimes two atoms joined by 'and'/'or'."""
        sampled = self.level != "easy"
        if self.level == "hard" and self.rng.random() < 0.4:
            left, right = self.atom(sampled), self.atom(sampled)
            if self.rng.random() < 0.5:
                both = f"{left.english} and {right.english}"
                return Phrase(f"({left.sva} && {right.sva})", both, compound=True)
            either = f"either {left.english} or {right.english}"
            return Phrase(f"({left.sva} || {right.sva})", either, compound=True)
        return self.atom(sampled)


def _window(low: int, high: int) -> str:
    if low == 0:
        return f"in the same cycle or within the next {high} cycles"
    return f"between {low} and {high} cycles later (inclusive)"


# Each form: (name, level it first appears at, weight, builder). Builders return the property
# and its sentence. Weights over-represent bounded delays and liveness.
Builder = Callable[[_Draw], tuple[str, str]]


def _never(d: _Draw) -> tuple[str, str]:
    a, b = d.condition(), d.condition()
    return f"!({a.sva} && {b.sva})", f"It must never happen that {a.english} while {b.english}."


def _same_cycle(d: _Draw) -> tuple[str, str]:
    a, b = d.condition(), d.condition()
    return f"{a.sva} |-> {b.sva}", f"Whenever {a.english}, {b.must} in the same cycle."


def _next_cycle(d: _Draw) -> tuple[str, str]:
    a, b = d.condition(), d.condition()
    return f"{a.sva} |=> {b.sva}", f"Whenever {a.english}, {b.must} in the next cycle."


def _fixed_delay(d: _Draw) -> tuple[str, str]:
    a, b = d.condition(), d.condition()
    n = d.rng.randint(2, 5)
    if d.rng.random() < 0.5:
        prop = f"{a.sva} |-> ##{n} {b.sva}"
    else:
        prop = f"{a.sva} |=> ##{n - 1} {b.sva}"
    return prop, f"Whenever {a.english}, {b.must} exactly {n} cycles later."


def _range_delay(d: _Draw) -> tuple[str, str]:
    a, b = d.condition(), d.condition()
    low = d.rng.randint(0, 2)
    high = low + d.rng.randint(1, 3)
    if low >= 1 and d.rng.random() < 0.5:
        prop = f"{a.sva} |=> ##[{low - 1}:{high - 1}] {b.sva}"
    else:
        prop = f"{a.sva} |-> ##[{low}:{high}] {b.sva}"
    return prop, f"Whenever {a.english}, {b.must} at least once {_window(low, high)}."


def _past(d: _Draw) -> tuple[str, str]:
    a, b = d.condition(), d.atom(sampled=False)
    n = d.rng.randint(1, 4)
    earlier = "in the previous cycle" if n == 1 else f"{n} cycles earlier"
    return f"{a.sva} |-> $past({b.sva}, {n})", f"Whenever {a.english}, {b.must} {earlier}."


def _stable_next(d: _Draw) -> tuple[str, str]:
    a = d.condition()
    name = d.signal()
    return (
        f"{a.sva} |=> $stable({name})",
        f"Whenever {a.english}, {name} must keep its value into the next cycle.",
    )


def _sequence_antecedent(d: _Draw) -> tuple[str, str]:
    a, b, c = d.condition(), d.condition(), d.condition()
    if d.rng.random() < 0.5:
        return (
            f"{a.sva} ##1 {b.sva} |-> {c.sva}",
            f"Whenever {a.english} and one cycle later {b.english}, {c.must} in that later cycle.",
        )
    return (
        f"{a.sva} ##1 {b.sva} |=> {c.sva}",
        f"Whenever {a.english} and one cycle later {b.english}, {c.must} in the cycle after that.",
    )


def _repetition(d: _Draw) -> tuple[str, str]:
    a, b = d.condition(), d.condition()
    n = d.rng.randint(2, 4)
    return (
        f"{a.sva} |=> {b.sva}[*{n}]",
        f"Whenever {a.english}, {b.must} in each of the next {n} cycles.",
    )


def _eventually(d: _Draw) -> tuple[str, str]:
    a, b = d.condition(), d.condition()
    forms = (
        (f"{a.sva} |-> s_eventually {b.sva}", "eventually (possibly in the same cycle)"),
        (f"{a.sva} |-> strong(##[0:$] {b.sva})", "eventually (possibly in the same cycle)"),
        (f"{a.sva} |=> s_eventually {b.sva}", "at some later cycle"),
        (f"{a.sva} |-> strong(##[1:$] {b.sva})", "at some later cycle"),
    )
    prop, when = d.rng.choice(forms)
    return prop, f"Whenever {a.english}, {b.must} {when}."


def _until(d: _Draw) -> tuple[str, str]:
    a, b, c = d.condition(), d.condition(), d.condition()
    forms = (
        (
            f"{a.sva} |-> ({b.sva} until {c.sva})",
            f"from that cycle on, {b.must} until {c.english} (which need not ever happen)",
        ),
        (
            f"{a.sva} |-> ({b.sva} s_until {c.sva})",
            f"from that cycle on, {b.must} until {c.english}, and {c.must} eventually",
        ),
        (
            f"{a.sva} |-> ({b.sva} until_with {c.sva})",
            f"from that cycle on, {b.must} up to and including the first cycle in which "
            f"{c.english} (which need not ever happen)",
        ),
        (
            f"{a.sva} |=> ({b.sva} s_until {c.sva})",
            f"from the next cycle on, {b.must} until {c.english}, and {c.must} eventually",
        ),
    )
    prop, rest = d.rng.choice(forms)
    return prop, f"Whenever {a.english}, {rest}."


FORMS: tuple[tuple[str, Level, int, Builder], ...] = (
    ("never", "easy", 2, _never),
    ("same_cycle", "easy", 3, _same_cycle),
    ("next_cycle", "easy", 3, _next_cycle),
    ("fixed_delay", "medium", 4, _fixed_delay),
    ("range_delay", "medium", 5, _range_delay),
    ("past", "medium", 2, _past),
    ("stable_next", "medium", 1, _stable_next),
    ("sequence_antecedent", "hard", 2, _sequence_antecedent),
    ("repetition", "hard", 1, _repetition),
    ("eventually", "hard", 4, _eventually),
    ("until", "hard", 3, _until),
)


def forms_at(level: Level) -> list[tuple[str, int, Builder]]:
    """The forms a level draws from: its own (weighted up) and the easier levels' ones."""
    rank = LEVELS.index(level)
    chosen = []
    for name, first, weight, build in FORMS:
        distance = rank - LEVELS.index(first)
        if distance >= 0:
            # A level mostly asks its own forms; easier forms stay as a minority.
            chosen.append((name, weight * (3 if distance == 0 else 1), build))
    return chosen


def testbench(widths: dict[str, int]) -> str:
    """A module declaring ``clk``, ``reset_`` and the signals at their widths."""
    ports = ", ".join(["clk", "reset_", *widths])
    lines = [f"module dummy ({ports});", "input clk;", "input reset_;"]
    for name, width in widths.items():
        lines.append(f"input {f'[{width - 1}:0] ' if width > 1 else ''}{name};")
    lines += ["wire tb_reset;", "assign tb_reset = (reset_ == 1'b0);", "endmodule"]
    return "\n".join(lines) + "\n"


def _acceptable(assertion: str, bench: str) -> bool:
    try:
        parsed = parse_assertion(assertion, bench, set(SIGNALS))
    except SvaError:
        return False
    # None (undecided) rejects too: a served reference must be known to be meaningful.
    return (
        is_tautology(parsed, _GENERATION_CHECK) is False
        and is_vacuous(parsed, _GENERATION_CHECK) is False
    )


def generate_task(seed: int, level_option: str, version: str) -> GeneratedTask:
    """The task ``(seed, level)`` names. Raises RuntimeError if no draw passes the checks."""
    # A private generator seeded by a string: stable across processes and hash seeds.
    rng = random.Random(f"sva/generated@{version}/{seed}/{level_option}")
    level: Level = rng.choice(LEVELS) if level_option == "mixed" else level_option  # type: ignore[assignment]
    forms = forms_at(level)
    for _ in range(MAX_DRAWS):
        draw = _Draw(rng, level)
        name, _, build = rng.choices(forms, weights=[w for _, w, _ in forms])[0]
        prop, sentence = build(draw)
        assertion = f"assert property(@(posedge clk)\n\t{prop}\n);"
        bench = testbench(draw.widths)
        if _acceptable(assertion, bench):
            return GeneratedTask(
                level=level,
                form=name,
                assertion=assertion,
                sentence=sentence[0].upper() + sentence[1:],
                widths=tuple(draw.widths.items()),
                testbench=bench,
            )
    raise RuntimeError(f"no acceptable property in {MAX_DRAWS} draws for seed {seed}")
