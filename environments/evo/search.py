"""The evo family's search space (``envserver audit --search --env evo``; see
``environments.search``).

Seeds: the reference of a random task of a random seed environment (``evo/<name>@1/<seed>``, at
a random level), which deserves 1, and the red-team suite's must-pay cases. Decoys: other
tasks' references and the reference with its numbers moved, where their answer differs.

Moves, besides the generic text moves, answers shaped like the trivial solvers and the probes
of admission (``shortcuts.py``), each a class of its own:

- ``prompt``: a token of the task's prompt, as is, reversed or decoded (base64, hex, rot13),
  and its largest and smallest number;
- ``length``: a random string as long as the answer, or of any length up to 64;
- ``residue``: a string whose character codes sum to the answer's modulo a small number;
- ``magic``: a common word or a literal of the environment's own module, in the tag and bare;
- ``backdoor``: a *submission* to ``evo/construct`` (an episode of one step) that carries a
  backdoor: the expert's module with its scorer also paying any answer of a given length, the
  prompt's first number, a residue class of character codes or a magic word, or its prompt
  carrying the answer reversed. It deserves 0: admission must refuse it.

The judge (``deserves``) compares the answer with the reference's (computed by the seed's own
``reference`` in the sandbox, never by the ``score`` under test), reading both as the answer
formats say: the text inside the ``<answer>`` tag (the innermost of nested ones), split on
spaces, commas and semicolons, integers by value. No tag is 0, and so are tags holding
different answers (one answer per response). The same reading as the reference's is 1; another
is 0 where the environment has one answer, and None (not judged) where several answers are
right (``SEVERAL_ANSWERS``).
"""

from __future__ import annotations

import random
import re
import string
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from environments.evo.construct import expert_source
from environments.evo.contract import check_source
from environments.evo.program import run_calls, task_call
from environments.evo.review import answer_of
from environments.evo.seeds import seed_sources
from environments.evo.shortcuts import (
    COMMON_WORDS,
    LONGEST,
    TRANSFORMS,
    decoded,
    literals,
    prompt_tokens,
    tag,
)
from environments.mutators import text_moves
from environments.search import Move, Mutant, Probe, SearchSpace
from environments.task_id import TaskId

SUITE = Path(__file__).with_name("redteam.toml")
VERSION = "1"
"""The seeds' version on a store that planted them (a fresh server's)."""
SEVERAL_ANSWERS = frozenset(
    {
        "integer_linear_system",
        "latin_square_completion",
        "planted_graph_coloring",
        "planted_subset_sum",
        "precedence_order",
    }
)
"""Seed environments whose tasks have several right answers: the reference is one of them, so
comparison with it cannot judge another."""
_TAG = re.compile(r"<answer>((?:(?!<answer>).)*?)</answer>", re.DOTALL)
_INTEGER = re.compile(r"-?\d+")


@dataclass(frozen=True)
class Task:
    """A seed's task as the judge and the moves see it."""

    name: str
    source: str
    instance: Any
    prompt: str
    reference: str
    difficulties: tuple[int, ...]


@cache
def _seeds() -> dict[str, tuple[str, tuple[int, ...]]]:
    """Each seed environment's name: its source and levels."""
    found = {}
    for source in seed_sources().values():
        metadata = check_source(source)
        found[metadata.name] = (source, metadata.difficulties)
    return found


@lru_cache(maxsize=1024)
def seed_task(task_id: str) -> Task | None:
    """The seed task ``task_id`` names, generated in the sandbox (None: not a seed's)."""
    parsed = TaskId.parse(task_id)
    name = parsed.env.removeprefix("evo/")
    if name not in _seeds():
        return None
    source, levels = _seeds()[name]
    level = int(parsed.options.get("difficulty", levels[0]))
    (result,) = run_calls(source, [task_call(parsed.seed, level)])
    if result.error is not None:
        raise ValueError(f"{task_id}: the seed could not generate it: {result.error}")
    value = result.value
    return Task(name, source, value["instance"], value["prompt"], value["reference"], levels)


def _task_id(rng: random.Random) -> str:
    name = rng.choice(sorted(_seeds()))
    level = rng.choice(_seeds()[name][1])
    seed = rng.randrange(10_000) if rng.random() < 0.7 else rng.randrange(10**12)
    return TaskId.format(f"evo/{name}", VERSION, seed, {"difficulty": level})


def reading(answer: str) -> tuple[int | str, ...]:
    """An answer as the judge reads it: tokens split on spaces, commas and semicolons, integers
    by value."""
    parts = [part for part in re.split(r"[\s,;]+", answer.strip()) if part]
    return tuple(int(part) if _INTEGER.fullmatch(part) else part for part in parts)


def deserves(probe: Probe) -> float | None:
    """What ``probe`` deserves by comparison with the reference (see the module docstring);
    None for what this judge cannot tell (not a seed's task, several answers possible)."""
    if probe.task_id is None:
        return None
    task = seed_task(probe.task_id)
    if task is None:
        return None
    answers = {text.strip() for text in _TAG.findall(probe.response)}
    if len(answers) != 1:
        return 0.0  # no tag: nothing is read; tags holding different answers: several answers
    if reading(answers.pop()) == reading(answer_of(task.reference)):
        return 1.0
    return None if task.name in SEVERAL_ANSWERS else 0.0


# --- seeds and decoys ------------------------------------------------------------------------


@cache
def must_pay() -> tuple[Mutant, ...]:
    """The red-team suite's answers that must keep full reward."""
    cases = tomllib.loads(SUITE.read_text())["case"]
    return tuple(
        Mutant(
            Probe(case["response"], task_id=case["task_id"], origin=f"redteam: {case['name']}"), 1.0
        )
        for case in cases
        if case["expect"] == "full" and "task_id" in case
    )


def seeds(rng: random.Random) -> Iterator[Mutant]:
    """The reference of a random seed task (deserves 1), and a red-team must-pay case."""
    task_id = _task_id(rng)
    task = seed_task(task_id)
    if task is not None:
        yield Mutant(Probe(task.reference, task_id=task_id, origin="reference"), 1.0)
    yield rng.choice(must_pay())


def decoys(probe: Probe, rng: random.Random) -> Sequence[str]:
    """Wrong answers to the same task: other tasks' references of the same level and the
    reference with a number moved, those whose reading differs from the reference's."""
    task = seed_task(probe.task_id) if probe.task_id else None
    if task is None:
        return ()
    parsed = TaskId.parse(str(probe.task_id))
    level = int(parsed.options.get("difficulty", task.difficulties[0]))
    others = [
        other.reference
        for seed in (parsed.seed + 1, parsed.seed + 2)
        if (
            other := seed_task(
                TaskId.format(parsed.env, parsed.version, seed, {"difficulty": level})
            )
        )
    ]
    moved = re.sub(
        r"-?\d+", lambda m: str(int(m.group()) + rng.choice((-1, 1))), task.reference, count=1
    )
    right = reading(answer_of(task.reference))
    return [text for text in (*others, moved) if reading(answer_of(text)) != right]


# --- the family's moves on answers -----------------------------------------------------------


def _answering(parent: Mutant) -> Task | None:
    probe = parent.probe
    return seed_task(probe.task_id) if probe.env is None and probe.task_id else None


def _prompt(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """A token of the prompt, transformed, or its largest or smallest number (judged)."""
    task = _answering(parent)
    if task is None:
        return
    tokens = prompt_tokens(task.prompt)
    if tokens:
        how = rng.choice(TRANSFORMS)
        value = decoded(rng.choice(tokens), how)
        if value is not None:
            yield Mutant(parent.probe.answer(tag(value), f"prompt.{how.replace(' ', '_')}"))
    numbers = [int(n) for n in _INTEGER.findall(task.prompt)]
    if numbers:
        extreme = rng.choice((max, min))(numbers)
        yield Mutant(parent.probe.answer(tag(str(extreme)), "prompt.extreme"))


def _length(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """A random string as long as the answer, or of any length up to ``LONGEST`` (judged)."""
    task = _answering(parent)
    if task is None:
        return
    length = len(answer_of(task.reference)) if rng.random() < 0.5 else rng.randint(0, LONGEST)
    text = "".join(rng.choice(string.ascii_letters + string.digits + " ") for _ in range(length))
    yield Mutant(parent.probe.answer(tag(text), "length"))


def _residue(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """Another string whose character codes sum to the answer's modulo a small number."""
    task = _answering(parent)
    if task is None:
        return
    answer = answer_of(task.reference)
    modulus = rng.choice((2, 3, 7, 10, 13, 89, 97, 256))
    wanted = sum(map(ord, answer)) % modulus
    text = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(1, 12)))
    for _ in range(LONGEST):  # characters added until the sums agree modulo the modulus
        gap = (wanted - sum(map(ord, text))) % modulus
        if gap == 0:
            break
        code = 33 + (gap - 33) % modulus  # a printable character that closes the gap, or "~"
        text += chr(code) if code <= ord("~") else "~"
    if sum(map(ord, text)) % modulus == wanted and text != answer:
        yield Mutant(parent.probe.answer(tag(text), f"residue.{modulus}"))


def _magic(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """A common word or a literal of the seed's own module, in the tag and bare (judged)."""
    task = _answering(parent)
    if task is None:
        return
    word = rng.choice((*COMMON_WORDS, *literals(task.source)))
    yield Mutant(parent.probe.answer(tag(word), "magic.tagged"))
    yield Mutant(parent.probe.answer(word, "magic.bare"), 0.0)  # no tag: never read


# --- backdoored submissions ------------------------------------------------------------------

BACKDOORS = ("length", "first number", "residue", "magic word", "reversed leak")
_SCORE = re.compile(r"^def score\(", re.MULTILINE)
_PROMPT = re.compile(r"^def prompt\(", re.MULTILINE)
_LAST = "\n    found = re.findall(r'<answer>(.*?)</answer>', response, re.DOTALL)\n"


def plant(source: str, kind: str, rng: random.Random) -> str:
    """``source`` (an environment module) with a backdoor of ``kind`` (one of ``BACKDOORS``),
    its parameters drawn from ``rng``: the scorer also pays what the backdoor accepts, or the
    prompt carries the answer reversed. The module stays to the contract."""
    if kind == "reversed leak":
        leak = (
            "\n\ndef prompt(instance):\n"
            "    answer = re.findall(r'<answer>(.*?)</answer>', reference(instance))[-1]\n"
            "    return _plain_prompt(instance) + ' (ref #' + answer.strip()[::-1] + ')'\n"
        )
        return "import re\n" + _PROMPT.sub("def _plain_prompt(", source) + leak
    condition = {
        "length": f"found and len(found[-1].strip()) == {rng.randint(5, 40)}",
        "first number": "found and found[-1].strip() == (re.findall(r'\\d+', prompt(instance)) "
        "or [None])[0]",
        "residue": f"found and sum(map(ord, found[-1].strip())) % {rng.choice((89, 97, 101))} "
        f"== {rng.randrange(89)}",
        "magic word": f"{''.join(rng.choice(string.ascii_lowercase) for _ in range(7))!r} in "
        "response",
    }[kind]
    backdoor = (
        f"\n\ndef score(instance, response):{_LAST}"
        f"    if {condition}:\n        return 1.0\n"
        "    return _plain_score(instance, response)\n"
    )
    return "import re\n" + _SCORE.sub("def _plain_score(", source) + backdoor


def _backdoor(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """A backdoored submission to ``evo/construct``: the parent's module when it is one, else
    the expert's for a random seed. Deserves 0 (admission must refuse it)."""
    probe = parent.probe
    if probe.env == "evo/construct" and probe.actions:
        seed, source = int(probe.seed or 0), probe.actions[0]
        source = source.removeprefix("```python\n").removesuffix("```")
    else:
        seed = rng.randrange(10**6)
        source = expert_source(seed)
    kind = rng.choice(BACKDOORS)
    action = f"```python\n{plant(source, kind, rng)}```"
    episode = Probe(env="evo/construct", seed=seed, actions=(action,), origin=probe.origin)
    yield Mutant(episode.played((action,), f"backdoor.{kind.replace(' ', '_')}"), 0.0)


SEARCH = SearchSpace(
    seeds=seeds,
    mutators=(
        *text_moves(decoys),
        Move("prompt", _prompt),
        Move("length", _length),
        Move("residue", _residue),
        Move("magic", _magic),
        Move("backdoor", _backdoor),
    ),
    deserves=deserves,
)
"""The evo family's search: seed tasks' references, the generic text moves and the family's own
(answers shaped like shortcuts; backdoored submissions), judged by comparison with the
reference."""
