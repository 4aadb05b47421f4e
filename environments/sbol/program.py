"""Blueprints as pySBOL3 programs: the reference answer, and its defective and partial forms.

The program is plain pySBOL3 (no helper library beyond three small functions it defines): parts
from the library with their sequences, one engineered-region Component per transcription unit
with its parts chained by ``precedes`` constraints, protein Components, and a functional-entity
Component holding the units, the features its interactions name, and the interactions. Every
line is tagged, so a repair task can break one kind of line and a completion task can leave
lines out.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from environments.sbol.circuits import Blueprint
from verifiers.sbol import library

Defect = Literal[
    "typo", "no_doc",  # L1
    "participant", "dangling",  # L2
    "shuffled", "wrong_role", "no_terminator",  # L3
    "swapped_production", "regulates_cds", "no_production",  # L4
    "flipped", "rewired",  # L5
]  # fmt: skip
DEFECTS: dict[Defect, int] = {
    "typo": 1, "no_doc": 1, "participant": 2, "dangling": 2, "shuffled": 3, "wrong_role": 3,
    "no_terminator": 3, "swapped_production": 4, "regulates_cds": 4, "no_production": 4,
    "flipped": 5, "rewired": 5,
}  # fmt: skip
"""Each defect and the level at which it makes the program fail."""

Omission = Literal["regulation", "unit", "interactions"]

HEADER = '''\
import sbol3

sbol3.set_namespace("https://example.org/{name}/")
doc = sbol3.Document()


def dna_part(name, role, sequence=None):
    """A DNA part of the library (a Component with one role and, optionally, its sequence)."""
    part = sbol3.Component(name, sbol3.SBO_DNA, roles=[role])
    if sequence:
        seq = sbol3.Sequence(f"{{name}}_seq", elements=sequence, encoding=sbol3.IUPAC_DNA_ENCODING)
        doc.add(seq)
        part.sequences = [seq]
    doc.add(part)
    return part


def transcription_unit(name, parts):
    """An engineered region whose parts are chained in order by precedes constraints."""
    unit = sbol3.Component(name, sbol3.SBO_DNA, roles=[sbol3.SO_ENGINEERED_REGION])
    features = []
    for part in parts:
        feature = sbol3.SubComponent(part)
        unit.features.append(feature)
        features.append(feature)
    for upstream, downstream in zip(features, features[1:]):
        unit.constraints.append(sbol3.Constraint(sbol3.SBOL_PRECEDES, upstream, downstream))
    doc.add(unit)
    return unit


def protein(name):
    """A protein made by the circuit."""
    component = sbol3.Component(name, sbol3.SBO_PROTEIN)
    doc.add(component)
    return component
'''

SYSTEM = '''
# The circuit: its units, the parts and proteins its interactions name, and the interactions.
circuit = sbol3.Component("{name}", sbol3.SBO_FUNCTIONAL_ENTITY)
doc.add(circuit)
features = {{}}


def feature(component):
    """The circuit's SubComponent for a part or protein (made once)."""
    if component.identity not in features:
        features[component.identity] = sbol3.SubComponent(component)
        circuit.features.append(features[component.identity])
    return features[component.identity]


def interaction(kind, participants):
    """An interaction of the circuit; participants are (role, part or protein) pairs."""
    participations = [sbol3.Participation([role], feature(c)) for role, c in participants]
    circuit.interactions.append(sbol3.Interaction([kind], participations=participations))

'''

_ROLE_CONSTANTS = {
    "promoter": "sbol3.SO_PROMOTER",
    "RBS": "sbol3.SO_RBS",
    "CDS": "sbol3.SO_CDS",
    "terminator": "sbol3.SO_TERMINATOR",
}


@dataclass(frozen=True)
class Line:
    """One statement and what it is about (``kind``, ``key``) so tasks can edit it."""

    text: str
    kind: str = "code"
    key: tuple[str, ...] = ()


def _protein(gene: str) -> str:
    return f"{gene}_protein"


def lines(blueprint: Blueprint, *, sequences: bool = True) -> list[Line]:
    """The reference program, line by line."""
    design = blueprint.design
    catalogue = library.parts()
    found = [Line(HEADER.format(name=design.name))]
    found.append(Line("# Parts from the library"))
    used: dict[str, None] = {}
    for unit in design.units:
        for name in unit.parts:
            used.setdefault(name)
    for name in used:
        part = catalogue[name]
        sequence = f', "{part.sequence}"' if sequences else ""
        found.append(
            Line(
                f'{name} = dna_part("{name}", {_ROLE_CONSTANTS[part.role]}{sequence})',
                "part",
                (name,),
            )
        )
    found.append(Line("\n# Transcription units"))
    for unit in design.units:
        found.append(
            Line(
                f'{unit.name} = transcription_unit("{unit.name}", [{", ".join(unit.parts)}])',
                "unit",
                (unit.name,),
            )
        )
    found.append(Line("\n# Proteins"))
    genes = design.genes()
    for gene in genes:
        found.append(Line(f'{_protein(gene)} = protein("{_protein(gene)}")', "protein", (gene,)))
    found.append(Line(SYSTEM.format(name=design.name)))
    names = ", ".join(u.name for u in design.units)
    found.append(Line(f"for unit in [{names}]:", "units", tuple(u.name for u in design.units)))
    found.append(Line("    feature(unit)"))
    for gene in genes:
        found.append(
            Line(
                "interaction(sbol3.SBO_GENETIC_PRODUCTION, "
                f"[(sbol3.SBO_TEMPLATE, {gene}), (sbol3.SBO_PRODUCT, {_protein(gene)})])",
                "production",
                (gene,),
            )
        )
    for regulation in design.regulations:
        gene, promoter = regulation.regulator, regulation.promoter
        kind, actor, acted = _KINDS[regulation.sign]
        found.append(
            Line(
                f"interaction(sbol3.SBO_{kind}, "
                f"[(sbol3.SBO_{actor}, {_protein(gene)}), (sbol3.SBO_{acted}, {promoter})])",
                "regulation",
                (gene, promoter),
            )
        )
    for induction in design.inductions:
        chemical, gene = induction.chemical, induction.regulator
        kind, actor, acted = _KINDS[induction.sign]
        found.append(
            Line(
                f'{chemical} = sbol3.Component("{chemical}", sbol3.SBO_SIMPLE_CHEMICAL)\n'
                f"doc.add({chemical})\n"
                f"interaction(sbol3.SBO_{kind}, "
                f"[(sbol3.SBO_{actor}, {chemical}), (sbol3.SBO_{acted}, {_protein(gene)})])",
                "induction",
                (chemical, gene),
            )
        )
    return found


_KINDS = {
    -1: ("INHIBITION", "INHIBITOR", "INHIBITED"),
    1: ("STIMULATION", "STIMULATOR", "STIMULATED"),
}


def join(program: list[Line]) -> str:
    """The program's text."""
    return "\n".join(line.text for line in program).rstrip() + "\n"


def render(blueprint: Blueprint, *, sequences: bool = True) -> str:
    """The reference program."""
    return join(lines(blueprint, sequences=sequences))


def _pick(program: list[Line], kind: str, rng: random.Random) -> int:
    indices = [i for i, line in enumerate(program) if line.kind == kind]
    return rng.choice(indices)


def _edit(program: list[Line], index: int, text: str) -> None:
    program[index] = Line(text, program[index].kind, program[index].key)


def _unit_parts(text: str) -> list[str]:
    inside = text[text.index("[") + 1 : text.rindex("]")]
    return [name.strip() for name in inside.split(",")]


def _with_parts(text: str, parts: list[str]) -> str:
    return text[: text.index("[") + 1] + ", ".join(parts) + text[text.rindex("]") :]


def _typo(program: list[Line], rng: random.Random) -> None:
    i = _pick(program, "regulation", rng)
    _edit(program, i, program[i].text.replace("SBO_INHIBITION", "SBO_INHIBITON"))


def _no_doc(program: list[Line], rng: random.Random) -> None:
    program[0] = Line(
        program[0].text.replace("doc = sbol3.Document()", "document = sbol3.Document()")
    )


def _participant(program: list[Line], rng: random.Random) -> None:
    i = _pick(program, "regulation", rng)
    gene, promoter = program[i].key
    _edit(
        program,
        i,
        "circuit.interactions.append(sbol3.Interaction([sbol3.SBO_INHIBITION], participations=["
        f"sbol3.Participation([sbol3.SBO_INHIBITOR], {_protein(gene)}), "
        f"sbol3.Participation([sbol3.SBO_INHIBITED], feature({promoter}))]))",
    )


def _dangling(program: list[Line], rng: random.Random) -> None:
    i = _pick(program, "part", rng)
    (name,) = program[i].key
    role = _ROLE_CONSTANTS[library.parts()[name].role]
    _edit(program, i, f'{name} = sbol3.Component("{name}", sbol3.SBO_DNA, roles=[{role}])')


def _shuffled(program: list[Line], rng: random.Random) -> None:
    i = _pick(program, "unit", rng)
    parts = _unit_parts(program[i].text)
    first_rbs = next(j for j, p in enumerate(parts) if library.parts()[p].role == "RBS")
    parts[0], parts[first_rbs] = parts[first_rbs], parts[0]
    _edit(program, i, _with_parts(program[i].text, parts))


def _no_terminator(program: list[Line], rng: random.Random) -> None:
    i = _pick(program, "unit", rng)
    _edit(program, i, _with_parts(program[i].text, _unit_parts(program[i].text)[:-1]))


def _wrong_role(program: list[Line], rng: random.Random) -> None:
    i = _pick(program, "part", rng)
    (name,) = program[i].key
    right = _ROLE_CONSTANTS[library.parts()[name].role]
    wrong = next(c for r, c in _ROLE_CONSTANTS.items() if c != right and r != "CDS")
    _edit(program, i, program[i].text.replace(right, wrong))


def _swapped_production(program: list[Line], rng: random.Random) -> None:
    i = _pick(program, "production", rng)
    (gene,) = program[i].key
    _edit(
        program,
        i,
        "interaction(sbol3.SBO_GENETIC_PRODUCTION, "
        f"[(sbol3.SBO_TEMPLATE, {_protein(gene)}), (sbol3.SBO_PRODUCT, {gene})])",
    )


def _regulates_cds(program: list[Line], rng: random.Random) -> None:
    i = _pick(program, "regulation", rng)
    gene, promoter = program[i].key
    text = program[i].text.replace(f"SBO_INHIBITED, {promoter})", f"SBO_INHIBITED, {gene})")
    _edit(program, i, text)


def _no_production(program: list[Line], rng: random.Random) -> None:
    del program[_pick(program, "production", rng)]


def _flipped(program: list[Line], rng: random.Random) -> None:
    i = _pick(program, "regulation", rng)
    text = program[i].text
    for old, new in (
        ("INHIBITION", "STIMULATION"),
        ("INHIBITOR", "STIMULATOR"),
        ("INHIBITED", "STIMULATED"),
    ):
        text = text.replace(f"sbol3.SBO_{old}", f"sbol3.SBO_{new}")
    _edit(program, i, text)


def _rewired(program: list[Line], rng: random.Random) -> None:
    """Two units trade one promoter each: every part is still used, the wiring is not."""
    catalogue = library.parts()
    units = [(i, _unit_parts(line.text)) for i, line in enumerate(program) if line.kind == "unit"]
    choices = [
        (i, j, x, y)
        for (i, first), (k, second) in itertools.combinations(units, 2)
        for x, p in enumerate(first)
        for y, q in enumerate(second)
        if catalogue[p].role == catalogue[q].role == "promoter"
        and p != q
        and p not in second
        and q not in first
        for j in (k,)
    ]
    i, k, x, y = rng.choice(choices)
    first, second = _unit_parts(program[i].text), _unit_parts(program[k].text)
    first[x], second[y] = second[y], first[x]
    _edit(program, i, _with_parts(program[i].text, first))
    _edit(program, k, _with_parts(program[k].text, second))


_INJECTORS: dict[str, Callable[[list[Line], random.Random], None]] = {
    "typo": _typo,
    "no_doc": _no_doc,
    "participant": _participant,
    "dangling": _dangling,
    "shuffled": _shuffled,
    "wrong_role": _wrong_role,
    "no_terminator": _no_terminator,
    "swapped_production": _swapped_production,
    "regulates_cds": _regulates_cds,
    "no_production": _no_production,
    "flipped": _flipped,
    "rewired": _rewired,
}


def inject(blueprint: Blueprint, defect: Defect, rng: random.Random) -> str:
    """The reference program with one defect (``DEFECTS`` says the level it fails)."""
    program = lines(blueprint)
    _INJECTORS[defect](program, rng)
    return join(program)


TODO = {
    "regulation": "# TODO: one regulation is missing here (see the intended circuit).",
    "unit": "# TODO: a transcription unit, and the production of what it expresses, are missing.",
    "interactions": "# TODO: add every interaction: the genetic productions and the regulations.",
}


def omit(blueprint: Blueprint, omission: Omission, rng: random.Random) -> str:
    """The reference program with a part left out and a TODO comment in its place."""
    program = lines(blueprint)
    if omission == "regulation":
        i = _pick(program, "regulation", rng)
        program[i] = Line(TODO["regulation"])
    elif omission == "unit":
        i = _pick(program, "unit", rng)
        unit_name = program[i].key[0]
        unit = next(u for u in blueprint.design.units if u.name == unit_name)
        genes = [n for n, r in zip(unit.parts, unit.roles, strict=True) if r == "CDS"]
        program[i] = Line(TODO["unit"])
        k = next(j for j, line in enumerate(program) if line.kind == "units")
        kept = [name for name in program[k].key if name != unit_name]
        program[k] = Line(f"for unit in [{', '.join(kept)}]:", "units", tuple(kept))
        program = [
            line for line in program if not (line.kind == "production" and line.key[0] in genes)
        ]
    else:
        first = next(
            i for i, line in enumerate(program) if line.kind in ("production", "regulation")
        )
        program = [line for line in program if line.kind not in ("production", "regulation")]
        program.insert(first, Line(TODO["interactions"]))
    return join(program)


NEUTRAL_NAME = "circuit"


def turtle(blueprint: Blueprint) -> str:
    """The blueprint's document in Turtle, its system named neutrally (for topology tasks).

    The reference program is our own trusted text, so it runs here rather than in the sandbox;
    rdflib's Turtle writer sorts subjects, so the text is the same on every machine."""
    import sbol3  # noqa: PLC0415 - heavy, and only this task kind needs it here

    neutral = replace(blueprint, design=replace(blueprint.design, name=NEUTRAL_NAME))
    namespace: dict[str, object] = {"__name__": "reference"}
    exec(compile(render(neutral, sequences=False), "reference.py", "exec"), namespace)  # noqa: S102
    document = namespace["doc"]
    assert isinstance(document, sbol3.Document)
    graph = document.graph()
    graph.bind("", f"https://example.org/{NEUTRAL_NAME}/")
    graph.bind("SO", "https://identifiers.org/SO:")
    graph.bind("SBO", "https://identifiers.org/SBO:")
    return str(graph.serialize(format="turtle"))
