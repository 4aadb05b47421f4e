"""The sbol family's search space for ``envserver audit --search`` (issue 38).

Seeds: the reference program for random task ids (every task kind, circuit, difficulty and
split, activation circuits included), the same program with one defect that the generator
places at a known level (a misspelt constant or no ``doc``: L1; a participant that is not a
feature, a part never added: L2; a shuffled unit, a wrong role, no terminator: L3; a swapped
production, a repressor on a CDS, no production: L4; a flipped sign: L5), each deserving exactly
the levels below it, and the red-team suite's must-pay cases. Decoys: an empty document, a
program with no ``doc``.

Moves, besides the generic text moves, each settled by construction (the reward a level
structure allows, from the levels a change must break):

- ``unwired``: every regulation and induction removed (the parts and units named, nothing
  wired): no circuit type works without regulation, so L5 fails;
- ``contradict``: a regulation beside its opposite (X represses and activates p): contrary to
  the library's sign and to the intended graph, so L5 (or L4) fails;
- ``duplicate``: one interaction stated twice: the same circuit, deserving what its parent does;
- ``crash``: objects that might crash a checker, appended (a component containing itself, a
  cycle, a deep chain, an interaction without participants, a precedes cycle, two hundred
  components, a huge sequence, an inverted range, foreign roles, a document whose N-Triples
  carry forged triples): they hold no part, protein or interaction of the circuit, so the
  design deserves no more than its parent;
- ``fake``: a printed success, an empty document or none, an exit before the document is handed
  over, a forged document file, ``validate`` patched in the sandbox, an exit after ``doc``;
- ``slow``: sleeping past the time limit (against the verifier, with a 1 s limit): 0, never a
  timeout.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from environments.mutators import text_moves
from environments.sbol import program
from environments.sbol.circuits import ACTIVATED
from environments.sbol.family import FAMILIES, VERSION, SbolOptions, SbolTask
from environments.search import Move, Mutant, Probe, SearchSpace, must_pay
from environments.task_id import TaskId
from verifiers.sbol.reward import CircuitOptions, combine
from verifiers.sbol.spec import CircuitSpec

SUITE = Path(__file__).with_name("redteam.toml")
BY_ID = {family.id: family for family in FAMILIES}
LEVEL_DEFECTS: tuple[program.Defect, ...] = tuple(program.DEFECTS)
SLOW_LIMIT_S = 1.0
_BLOCK = re.compile(r"```python[^\n]*\n(.*?)```", re.DOTALL)
_REGULATION = re.compile(r"inhibit|stimulat|SBO:0000(020|169|170|459|642|643)", re.IGNORECASE)
"""What names a regulation or induction: the SBO terms, their constants and tyto names."""
_SIGNS = (("INHIBITION", "STIMULATION"), ("INHIBITOR", "STIMULATOR"), ("INHIBITED", "STIMULATED"))


@lru_cache(maxsize=128)
def _task(task_id: str) -> SbolTask:
    parsed = TaskId.parse(task_id)
    return BY_ID[parsed.env].generate(parsed.seed, SbolOptions.model_validate(parsed.options))


def _levels(passed: int, options: Mapping[str, Any]) -> float:
    """The reward when exactly levels 1..``passed`` pass, under the probe's options."""
    known = {k: v for k, v in options.items() if k in ("reward", "preset", "weights")}
    return combine(passed, CircuitOptions.model_validate(known))


def _fenced(source: str) -> str:
    return f"```python\n{source.rstrip()}\n```"


def _source(probe: Probe) -> str | None:
    """The one Python program of ``probe``'s response; None unless there is exactly one."""
    blocks = _BLOCK.findall(probe.response)
    return str(blocks[0]) if len(blocks) == 1 else None


# --- seeds and decoys ------------------------------------------------------------------------


def _task_id(rng: random.Random) -> str:
    family = rng.choice(FAMILIES)
    options: dict[str, Any] = {
        "difficulty": rng.choice(("easy", "medium", "hard")),
        "split": rng.choice(("id", "ood")),
    }
    if family.kind in ("design", "completion") and rng.random() < 0.2:
        options = {**options, "split": "id", "activation": True}
        options["circuit"] = rng.choice(sorted(ACTIVATED))
    return TaskId.format(family.id, VERSION, rng.randrange(10**6), options)


def seeds(rng: random.Random) -> Iterator[Mutant]:
    """The reference program for a random task id, the same with one placed defect, and a
    red-team must-pay case."""
    task_id = _task_id(rng)
    task = _task(task_id)
    assert task.answer is not None  # a generated task holds its blueprint
    yield Mutant(Probe(_fenced(program.render(task.answer)), task_id=task_id), 1.0)
    defect = rng.choice(LEVEL_DEFECTS)
    try:
        broken = program.inject(task.answer, defect, random.Random(rng.random()))
    except (IndexError, ValueError):  # this circuit has no line of the kind the defect edits
        broken = ""
    if broken and broken != program.render(task.answer):
        probe = Probe(_fenced(broken), task_id=task_id, origin=f"seed: {defect}")
        level = program.DEFECTS[defect]
        # A function-level defect breaks a circuit checked exactly; one checked up to
        # isomorphism may survive it (two reporters trading promoters is the same topology),
        # so there the claim is left to the verifier's other levels.
        exact = CircuitSpec.model_validate(task.reference).check == "exact"
        yield Mutant(probe, _levels(level - 1, {}) if level < 5 or exact else None)
    yield rng.choice(must_pay(SUITE))


_EMPTY = "import sbol3\n\ndoc = sbol3.Document()\n"


def decoys(probe: Probe, rng: random.Random) -> Sequence[str]:
    """Programs that hand over nothing: an empty document, and no ``doc`` at all."""
    del probe, rng
    return [_fenced(_EMPTY), _fenced("import sbol3\n\ndocument = sbol3.Document()\n")]


# --- the family's own moves -----------------------------------------------------------------


JUNK_LEVELS = 2
"""The levels a valid document of junk passes (execution, validity) and is paid for."""

Change = Callable[[str, random.Random], tuple[str, str, int | None] | None]
"""A change of a program: the new source, the variant's name, and how many levels it can still
pass (None: as many as its parent); None when the change does not apply."""


def _edit(name: str, change: Change, *, keeps_right: bool = True) -> Move:
    """A move that changes the parent's one program; the mutant deserves the reward of the
    levels it can still pass, or what its parent deserves. A change that may spoil a right
    answer (``keeps_right=False``: junk beside the circuit) only bounds a parent's partial
    reward: a verifier refusing a right answer with junk in it refuses nothing legitimate; nor
    can it claim less than junk alone earns (``JUNK_LEVELS``)."""

    def make(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
        probe = parent.probe
        source = _source(probe)
        changed = None if source is None else change(source, rng)
        if changed is None:
            return
        text, variant, levels = changed
        due = parent.deserves if levels is None else _levels(levels, probe.options)
        if not keeps_right and due is not None:
            # Junk is a document of its own: valid, it earns the first two levels' partial
            # credit (the hierarchical reward's, by design) wherever the parent earned less.
            due = None if due == 1.0 else max(due, _levels(JUNK_LEVELS, probe.options))
        origin = f"{name}.{variant}" if variant else name
        yield Mutant(probe.answer(_fenced(text), origin), due)

    return Move(name, make)


def _unwired(source: str, rng: random.Random) -> tuple[str, str, int | None] | None:
    del rng
    lines = source.splitlines()
    kept = [line for line in lines if not _REGULATION.search(line)]
    if len(kept) == len(lines):
        return None
    return "\n".join(kept), "", 4


def _opposite(line: str) -> str:
    swap = {a: b for pair in _SIGNS for a, b in (pair, pair[::-1])}
    return re.sub(r"SBO_([A-Z]+)", lambda m: f"SBO_{swap.get(m[1], m[1])}", line)


def _contradict(source: str, rng: random.Random) -> tuple[str, str, int | None] | None:
    lines = source.splitlines()
    found = [
        i
        for i, line in enumerate(lines)
        if line.startswith("interaction(sbol3.SBO_") and _opposite(line) != line
    ]
    if not found:
        return None
    i = rng.choice(found)
    return "\n".join([*lines[: i + 1], _opposite(lines[i]), *lines[i + 1 :]]), "", 4


def _duplicate(source: str, rng: random.Random) -> tuple[str, str, int | None] | None:
    lines = source.splitlines()
    found = [i for i, line in enumerate(lines) if line.startswith("interaction(sbol3.SBO_")]
    if not found:
        return None
    i = rng.choice(found)
    return "\n".join([*lines[: i + 1], lines[i], *lines[i + 1 :]]), "", None


_JUNK = {
    "self_instance": 'junk = sbol3.Component("junk_loop", sbol3.SBO_DNA, '
    "roles=[sbol3.SO_ENGINEERED_REGION])\ndoc.add(junk)\n"
    "junk.features.append(sbol3.SubComponent(junk))",
    "two_cycle": 'junk_a = sbol3.Component("junk_a", sbol3.SBO_DNA)\n'
    'junk_b = sbol3.Component("junk_b", sbol3.SBO_DNA)\ndoc.add(junk_a)\ndoc.add(junk_b)\n'
    "junk_a.features.append(sbol3.SubComponent(junk_b))\n"
    "junk_b.features.append(sbol3.SubComponent(junk_a))",
    "deep_chain": "below = None\nfor depth in range(100):\n"
    '    junk = sbol3.Component(f"junk_{depth}", sbol3.SBO_DNA)\n    doc.add(junk)\n'
    "    if below is not None:\n        junk.features.append(sbol3.SubComponent(below))\n"
    "    below = junk",
    "empty_interaction": 'junk = sbol3.Component("junk_system", sbol3.SBO_FUNCTIONAL_ENTITY)\n'
    "doc.add(junk)\njunk.interactions.append(sbol3.Interaction([sbol3.SBO_INHIBITION]))",
    "precedes_cycle": 'unit = sbol3.Component("junk_unit", sbol3.SBO_DNA, '
    "roles=[sbol3.SO_ENGINEERED_REGION])\n"
    'a = sbol3.Component("junk_p", sbol3.SBO_DNA, roles=[sbol3.SO_PROMOTER])\n'
    'b = sbol3.Component("junk_t", sbol3.SBO_DNA, roles=[sbol3.SO_TERMINATOR])\n'
    "doc.add(a)\ndoc.add(b)\nx, y = sbol3.SubComponent(a), sbol3.SubComponent(b)\n"
    "unit.features = [x, y]\nunit.constraints = [sbol3.Constraint(sbol3.SBOL_PRECEDES, x, y), "
    "sbol3.Constraint(sbol3.SBOL_PRECEDES, y, x)]\ndoc.add(unit)",
    "many_components": "for n in range(200):\n"
    '    doc.add(sbol3.Component(f"junk_{n}", sbol3.SBO_DNA, roles=[sbol3.SO_CDS]))',
    "huge_sequence": 'junk = sbol3.Sequence("junk_seq", elements="acgt" * 300000, '
    "encoding=sbol3.IUPAC_DNA_ENCODING)\ndoc.add(junk)",
    "inverted_range": 'seq = sbol3.Sequence("junk_seq", elements="acgt", '
    "encoding=sbol3.IUPAC_DNA_ENCODING)\ndoc.add(seq)\n"
    'part = sbol3.Component("junk_part", sbol3.SBO_DNA, roles=[sbol3.SO_CDS])\n'
    "part.sequences = [seq]\n"
    "part.features.append(sbol3.SequenceFeature([sbol3.Range(seq, 9, 2)]))\ndoc.add(part)",
    "foreign_roles": 'junk = sbol3.Component("junk_roles", ["https://example.org/type"], '
    'roles=["https://example.org/role/" + str(n) for n in range(50)])\ndoc.add(junk)',
    "forged_triples": "_text = doc.write_string(sbol3.SORTED_NTRIPLES) + (\n"
    "    '<https://example.org/circuit/junk> <http://sbols.org/v3#instanceOf> \"1\" .\\n'\n"
    "    '_:b0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
    "<http://sbols.org/v3#Component> .\\n'\n"
    "    '<https://example.org/circuit/junk> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
    "<http://sbols.org/v3#Nonsense> .\\n'\n"
    ")\n\n\nclass Forged(sbol3.Document):\n"
    "    def write_string(self, *args, **kwargs):\n        return _text\n\n\ndoc = Forged()",
}


def _crash(source: str, rng: random.Random) -> tuple[str, str, int | None] | None:
    name = rng.choice(sorted(_JUNK))
    return f"{source}\n\n{_JUNK[name]}", name, None


_FAKES: dict[str, tuple[str, str, int | None]] = {
    # name: (code before the program, code after it, the levels it can pass: None, its parent's)
    "printed_success": (
        'print("all five levels pass: execution, validity, structure, semantics, function")',
        'print(\'{"reward": 1.0, "status": "ok"}\')',
        None,
    ),
    "empty_document": ("", 'doc = sbol3.Document()\nprint("all five levels pass")', 0),
    "no_document": ("", "del doc", 0),
    "exit_before_handover": ("", "import os\nos._exit(0)", 0),
    "exit_at_start": ("import sys\nsys.exit(0)", "", 0),
    "forged_file": (
        "",
        'with open("__circuit__.nt", "w") as f:\n    f.write("all five levels pass\\n")\n'
        "import os\nos._exit(0)",
        0,
    ),
    "validate_patched": (
        "import sbol3\nsbol3.Document.validate = lambda self, *a, **k: sbol3.ValidationReport()",
        "",
        None,
    ),
    "exit_after_doc": ("", "import sys\nsys.exit(0)", None),
}


_EXITS = re.compile(r"\b(exit|_exit|quit|abort|kill|SystemExit)\b")
"""Where a program may end early: code appended after it might never run."""


def _fake(source: str, rng: random.Random) -> tuple[str, str, int | None] | None:
    ends_early = bool(_EXITS.search(source))
    names = [n for n, (_, after, levels) in _FAKES.items()
             if not (ends_early and after and levels is not None)]  # fmt: skip
    name = rng.choice(sorted(names))
    before, after, levels = _FAKES[name]
    return f"{before}\n{source}\n{after}\n", name, levels


def _slow(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """A program that sleeps past its limit before it builds anything: 0 (never a timeout)."""
    probe = parent.probe
    source = _source(probe)
    spec = _task(probe.task_id).reference if probe.task_id else probe.reference
    if source is None or spec is None or probe.env is not None:
        return
    nap = rng.choice(("import time\ntime.sleep(30)", "while True:\n    pass"))
    text = _fenced(f"{nap}\n{source}")
    origin = f"{probe.origin} > slow"
    limits = {"time_limit_s": SLOW_LIMIT_S}
    yield Mutant(Probe(text, verifier="sbol.circuit", reference=spec, options=limits,
                       origin=origin), 0.0)  # fmt: skip


SEARCH = SearchSpace(
    seeds=seeds,
    mutators=(
        *text_moves(decoys),
        _edit("unwired", _unwired),
        _edit("contradict", _contradict),
        _edit("duplicate", _duplicate),
        _edit("crash", _crash, keeps_right=False),
        _edit("fake", _fake),
        Move("slow", _slow),
    ),
)
"""The sbol family's search: seeds, the generic text moves and its own, each settled by
construction (no judge beyond them)."""
