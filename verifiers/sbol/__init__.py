"""SBOL genetic circuits: the ``sbol.circuit`` verifier (GenCircuit-RL's five levels).

A response is a Python program using pySBOL3 that leaves an ``sbol3.Document`` in a
module-level variable ``doc``. It is scored in five levels, each paying only when every level
below it passes:

- **L1 execution** (``execution.py``): the program runs in the sandbox and leaves a document
  that reads back as SBOL3 and is not empty;
- **L2 validity** (``document.py``): ``validate()`` reports no errors and every reference
  resolves inside the document;
- **L3 structure** (``extract.py``): parts typed and with one role (the library's role for a
  part it knows, by any of its names), transcription units ordered promoter → RBS → CDS →
  terminator, required parts present;
- **L4 semantics** (``extract.py``): interactions well typed (genetic production: CDS → protein;
  inhibition or stimulation of a promoter by a protein, of a protein by an inducer), no
  orphans, regulation the library agrees with where it knows both sides;
- **L5 function** (``function.py``): the signed regulatory graph matches the task.

The reward combines the levels as ``reward.py`` says (weights, presets, binary). ``detail``
names the first failed level and its check (a multi-turn episode shows it to the policy);
``components`` has one entry per level, and the metric ``levels_passed`` counts them. A sandbox
failure is status ``error``, never 0.
"""

from __future__ import annotations

from typing import Any

# The optional ``sbol`` extra: importing it here disables this family (and its environments)
# with a clear message when it is missing.
import sbol3  # noqa: F401
from pydantic import ValidationError

from sandbox import default as default_sandbox
from sandbox.model import Limits
from sandbox.pool import Overloaded
from sandbox.runner import Runs, SandboxInputError
from verifiers.base import Verifier
from verifiers.code.extract import SeveralPrograms, extract_code
from verifiers.sbol import diagram, document, execution, extract, function, render
from verifiers.sbol.reward import LEVELS, TITLES, CircuitOptions, combine, components, metrics
from verifiers.sbol.spec import MAX_PROGRAM_CHARS, CircuitSpec
from verifiers.score import Score

VERSION = "2"
SUCCESS = "all five levels pass: execution, validity, structure, semantics, function"


class _Stop(Exception):
    """Level ``passed + 1`` failed with ``message``."""

    def __init__(self, passed: int, message: str) -> None:
        super().__init__(message)
        self.passed, self.message = passed, message


def _levels(
    source: str, spec: CircuitSpec, options: CircuitOptions, sandbox: Runs, extra: dict[str, Any]
) -> None:
    """Run the levels in order; ``_Stop`` at the first that fails."""
    limits = Limits(wall_s=options.time_limit_s, memory_mb=options.memory_mb)
    ran = execution.run(source, limits=limits, sandbox=sandbox)
    extra["isolation"] = ran.record.isolation
    if ran.document is None:
        raise _Stop(0, ran.failure)
    doc, problem = document.load(ran.document)
    if doc is None:
        raise _Stop(0, problem)
    problem = document.check(doc)
    if problem:
        raise _Stop(1, problem)
    try:
        index, units = extract.structure(doc, spec)
    except extract.Failed as exc:
        raise _Stop(2, str(exc)) from None
    try:
        design = extract.semantics(index, units)
    except extract.Failed as exc:
        raise _Stop(3, str(exc)) from None
    extra["circuit"] = render.circuit(design, spec.inputs)
    if options.diagram:
        extra["svg"] = diagram.svg(design, spec.inputs)
    try:
        function.check(design, spec)
    except extract.Failed as exc:
        mine = "; ".join(render.edges(design.edges(spec.inputs), spec.inputs)) or "no regulation"
        raise _Stop(4, f"{exc} (your circuit: {mine})"[:600]) from None


def _unreadable(source: str) -> str:
    """Why ``source`` is not a Python program ('' when it parses)."""
    if not source.strip():
        return "no program in the response"
    if len(source) > MAX_PROGRAM_CHARS:
        return f"the program is longer than {MAX_PROGRAM_CHARS} characters"
    try:  # parsing untrusted text is safe; running it is not
        compile(source, execution.PROGRAM_FILE, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"the program does not parse: {type(exc).__name__}: {exc}"[:300]
    return ""


def check(
    response: str, reference: Any, options: CircuitOptions, *, sandbox: Runs | None = None
) -> Score:
    """Score a pySBOL3 program against a task's ``CircuitSpec`` (see the module docstring)."""
    try:
        spec = CircuitSpec.model_validate(reference)
    except ValidationError as exc:
        return Score.bad_reference(
            f"the reference is not a circuit specification: {exc.errors()[0]['msg']}"
        )
    try:
        source = extract_code(response, "python")
    except SeveralPrograms as exc:
        return Score.invalid(f"L1 execution failed: {exc}", components(0), metrics(0))
    problem = _unreadable(source)
    if problem:  # not a program at all: invalid (reward 0), and level 1 says why
        return Score.invalid(f"L1 execution failed: {problem}", components(0), metrics(0))
    extra: dict[str, Any] = {}
    passed, detail = len(LEVELS), SUCCESS
    try:
        _levels(source, spec, options, sandbox or default_sandbox(), extra)
    except _Stop as stop:
        passed = stop.passed
        detail = f"L{passed + 1} {TITLES[passed]} failed: {stop.message}"
    except (execution.SandboxFailed, SandboxInputError, OSError, Overloaded) as exc:
        # The sandbox, not the program, failed: no reward rather than a wrong zero.
        return Score.error(f"the sandbox could not run the program: {type(exc).__name__}: {exc}")
    extra["levels"] = {name: i < passed for i, name in enumerate(LEVELS)}
    reward = combine(passed, options)
    return Score.ok(reward, components(passed), detail, extra, metrics(passed))


_EXAMPLE_PROGRAM = """\
```python
import sbol3

doc = sbol3.Document()


def part(name, role):
    component = sbol3.Component(name, sbol3.SBO_DNA, roles=[role])
    doc.add(component)
    return component


def unit(name, parts):
    tu = sbol3.Component(name, sbol3.SBO_DNA, roles=[sbol3.SO_ENGINEERED_REGION])
    features = [sbol3.SubComponent(p) for p in parts]
    for feature in features:
        tu.features.append(feature)
    for upstream, downstream in zip(features, features[1:]):
        tu.constraints.append(sbol3.Constraint(sbol3.SBOL_PRECEDES, upstream, downstream))
    doc.add(tu)


pTet, pPhlF = part("pTet", sbol3.SO_PROMOTER), part("pPhlF", sbol3.SO_PROMOTER)
rbs, term = part("B0034", sbol3.SO_RBS), part("B0015", sbol3.SO_TERMINATOR)
phlF, yfp = part("PhlF", sbol3.SO_CDS), part("YFP", sbol3.SO_CDS)
unit("tu_PhlF", [pTet, rbs, phlF, term])
unit("tu_YFP", [pPhlF, rbs, yfp, term])
PhlF_protein = sbol3.Component("PhlF_protein", sbol3.SBO_PROTEIN)
YFP_protein = sbol3.Component("YFP_protein", sbol3.SBO_PROTEIN)
doc.add(PhlF_protein)
doc.add(YFP_protein)
system = sbol3.Component("not_gate", sbol3.SBO_FUNCTIONAL_ENTITY)
doc.add(system)
f = {c.display_id: sbol3.SubComponent(c) for c in (phlF, yfp, PhlF_protein, YFP_protein, pPhlF)}
for feature in f.values():
    system.features.append(feature)


def interaction(kind, *pairs):
    participations = [sbol3.Participation([role], f[name]) for role, name in pairs]
    system.interactions.append(sbol3.Interaction([kind], participations=participations))


T, P = sbol3.SBO_TEMPLATE, sbol3.SBO_PRODUCT
interaction(sbol3.SBO_GENETIC_PRODUCTION, (T, "PhlF"), (P, "PhlF_protein"))
interaction(sbol3.SBO_GENETIC_PRODUCTION, (T, "YFP"), (P, "YFP_protein"))
I, J = sbol3.SBO_INHIBITOR, sbol3.SBO_INHIBITED
interaction(sbol3.SBO_INHIBITION, (I, "PhlF_protein"), (J, "pPhlF"))
```
"""

VERIFIER = Verifier(
    name="sbol.circuit",
    version=VERSION,
    description="Genetic circuits in SBOL (GenCircuit-RL): a pySBOL3 program run in the sandbox "
    "and scored in five hierarchical levels (execution, validity, structure, semantics, "
    "function) against a circuit specification; weights, binary mode and four curriculum "
    "presets are options.",
    check=check,
    options_model=CircuitOptions,
    components=LEVELS,
    metrics=("levels_passed",),
    timeout_s=60.0,
    example=(
        _EXAMPLE_PROGRAM,
        {
            "circuit": "not_gate",
            "check": "function",
            "parts": ["pTet", "pPhlF", "B0034", "B0015", "PhlF", "YFP"],
            "inputs": ["pTet"],
            "output": "YFP",
            "truth_table": [1, 0],
        },
    ),
)
