"""The six task kinds: from a blueprint, a prompt, the reference specification and the answer.

=============  ===================================================  ===========================
kind           the policy gets                                       level 5 checks
=============  ===================================================  ===========================
design         a functional specification and a pool of repressors  type, size, truth table
repair         a program with one bug and the intended circuit      the exact signed graph
completion     a program with a part left out (TODO)                the exact signed graph
substitution   a working program and repressor(s) to swap in        the exact swapped graph
assignment     an abstract netlist (G1, G2...) and a repressor pool  isomorphism, truth table
topology       a circuit's SBOL3 document (Turtle), type unnamed     isomorphism with new parts
=============  ===================================================  ===========================

Difficulty sizes the circuit (``circuits.py``) and the task: repair bugs are syntactic at easy
(L1-L2), structural at medium (L3-L4), semantic at hard (L4-L5); completion leaves out one
regulation, a whole unit, or every interaction; substitution swaps one repressor, two at hard.
The out-of-distribution split uses at least one held-out repressor in every circuit.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from environments.sbol import program, prompt
from environments.sbol.circuits import Blueprint, Difficulty, Split, repressor_pool
from verifiers.sbol import library, render
from verifiers.sbol.design import Design, Regulation, Unit
from verifiers.sbol.spec import CircuitSpec

TaskKind = Literal["design", "repair", "completion", "substitution", "assignment", "topology"]
TASK_KINDS: tuple[TaskKind, ...] = (
    "design", "repair", "completion", "substitution", "assignment", "topology",
)  # fmt: skip

REPAIR_DEFECTS: dict[Difficulty, tuple[program.Defect, ...]] = {
    "easy": ("typo", "no_doc", "participant", "dangling"),
    "medium": ("shuffled", "wrong_role", "no_terminator", "swapped_production", "no_production"),
    "hard": ("regulates_cds", "flipped", "rewired"),
}
OMISSIONS: dict[Difficulty, program.Omission] = {
    "easy": "regulation",
    "medium": "unit",
    "hard": "interactions",
}
EXTRA_CHOICES = 2  # repressors offered beyond what the circuit needs


@dataclass(frozen=True)
class Built:
    """A generated task: its prompt, its specification, the reference answer's circuit, and
    what may be shown."""

    prompt: str
    spec: CircuitSpec
    answer: Blueprint
    metadata: dict[str, str]


def _allowed(split: Split) -> list[str]:
    return library.allowed_parts(held_out=split == "ood")


def _used(blueprint: Blueprint) -> list[str]:
    seen: dict[str, None] = {}
    for unit in blueprint.design.units:
        for name in unit.parts:
            seen.setdefault(name)
    return list(seen)


def _named_parts(blueprint: Blueprint) -> list[str]:
    """The parts a specification names: its input promoters (not inducers) and its reporter."""
    inputs = [name for name in blueprint.inputs if name not in library.INDUCERS]
    return [*inputs, *([blueprint.output] if blueprint.output else [])]


def _sensors(blueprint: Blueprint) -> bool:
    return not blueprint.inputs


def _offer(blueprint: Blueprint, rng: random.Random, split: Split, exclude: set[str]) -> list[str]:
    """The circuit's repressors plus a few others of its split, shuffled."""
    pool = [r for r in repressor_pool(split, sensors=_sensors(blueprint)) if r not in exclude]
    extra = rng.sample(pool, min(EXTRA_CHOICES, len(pool)))
    offered = sorted({*blueprint.repressors, *extra})
    rng.shuffle(offered)
    return offered


def _held_out(split: Split, names: list[str]) -> list[str]:
    return sorted(set(names) & library.HELD_OUT) if split == "ood" else []


def _exact_spec(blueprint: Blueprint, split: Split, **extra: object) -> CircuitSpec:
    return CircuitSpec(
        circuit=blueprint.circuit,
        check="exact",
        parts=_allowed(split),
        required=_used(blueprint),
        inputs=list(blueprint.inputs),
        output=blueprint.output,
        edges=sorted(blueprint.design.edges(blueprint.inputs)),
        activation=blueprint.activation,
        **extra,
    )


def _circuit_text(blueprint: Blueprint) -> str:
    return "Intended circuit:\n" + render.circuit(blueprint.design, blueprint.inputs)


def _fenced(source: str) -> str:
    return f"```python\n{source}```"


def _rows(blueprint: Blueprint) -> str:
    table = blueprint.truth_table() or []
    names = ", ".join(blueprint.inputs)
    rows = [f"{format(i, f'0{len(blueprint.inputs)}b')} → {bit}" for i, bit in enumerate(table)]
    return f"truth table ({names} → {blueprint.output}): " + ", ".join(rows)


def _specification(blueprint: Blueprint, offered: list[str]) -> str:
    """The functional specification of a design task."""
    pool = ", ".join(offered)
    out = blueprint.output
    reporter = f" Express the reporter {out} from the promoter of one of them." if out else ""
    kind = blueprint.circuit
    if kind == "not_gate":
        body = (
            f"a NOT gate: {out} is expressed when the input promoter {blueprint.inputs[0]} is "
            f"off and not when it is on, through one repressor."
        )
    elif kind == "toggle_switch":
        body = f"a toggle switch: two repressors that repress each other's promoters.{reporter}"
    elif kind == "repressilator":
        body = (
            f"a repressilator: a ring of {blueprint.size} repressors, each repressing the "
            f"promoter that drives the next.{reporter}"
        )
    elif kind == "cascade":
        body = (
            f"a transcriptional cascade of {blueprint.size} repressors: the input promoter "
            f"{blueprint.inputs[0]} drives the first, each represses the promoter driving the "
            f"next, and the last represses the promoter driving {out}."
        )
    elif kind == "feed_forward_loop" and blueprint.activation:
        body = (
            f"a {blueprint.feed_forward} feed-forward loop with input arabinose and reporter "
            f"{out}: the activator X (AraC, made constitutively, active with arabinose) activates "
            "the promoter of a regulator Y and a hybrid promoter driving the reporter, which Y "
            f"{'also activates' if blueprint.feed_forward == 'coherent' else 'represses'}."
        )
    elif kind == "feed_forward_loop":
        z = "the reporter itself"
        if blueprint.design.genes()[-1] != out or len(blueprint.repressors) > 2:
            z = f"a repressor that represses the promoter driving {out}"
        upstream = (
            " X is driven through another repressor W (the input drives W, W represses X)."
            if len(blueprint.repressors) > 3
            else " The input drives X."
        )
        body = (
            f"a feed-forward loop with input promoter {blueprint.inputs[0]} and reporter {out}: "
            "a repressor X represses a repressor Y, and X and Y both repress Z (Z's unit has "
            f"both their promoters in tandem), where Z is {z}.{upstream}"
        )
    else:
        article = "an" if str(blueprint.gate)[0] in "AOX" else "a"
        over = "inducers" if blueprint.activation else "input promoters"
        body = (
            f"{article} {blueprint.gate} gate over {over} "
            f"{', '.join(blueprint.inputs)} with output {out}, {_rows(blueprint)}."
        )
    if blueprint.activation:
        return f"Design {body} Use regulators from: {pool}."
    return f"Design {body} Use repressors from: {pool}; each at most once."


def design(blueprint: Blueprint, rng: random.Random, difficulty: Difficulty, split: Split) -> Built:
    """De novo design from a functional specification."""
    offered = _offer(blueprint, rng, split, set())
    table = (
        blueprint.truth_table()
        if blueprint.circuit in ("not_gate", "cascade", "logic_gate")
        else None
    )
    spec = CircuitSpec(
        circuit=blueprint.circuit,
        check="function",
        parts=_allowed(split),
        required=_named_parts(blueprint),
        inputs=list(blueprint.inputs),
        output=blueprint.output,
        truth_table=table,
        size=blueprint.size if blueprint.circuit in ("repressilator", "cascade") else None,
        repressors=offered,
        at_least_one_of=_held_out(split, offered),
        activation=blueprint.activation,
        feed_forward=blueprint.feed_forward,
    )
    task = _specification(blueprint, offered)
    if spec.at_least_one_of:
        task += f" Use at least one of {', '.join(spec.at_least_one_of)}."
    return Built(prompt.compose(task, spec.parts), spec, blueprint, {})


def repair(blueprint: Blueprint, rng: random.Random, difficulty: Difficulty, split: Split) -> Built:
    """Code repair: one defect, the intended circuit shown."""
    defect = rng.choice(REPAIR_DEFECTS[difficulty])
    broken = program.inject(blueprint, defect, rng)
    task = (
        "The program below should build the intended circuit, but it has one bug that makes "
        "the checker reject it. Return the corrected program, whole."
    )
    spec = _exact_spec(blueprint, split)
    body = prompt.compose(task, spec.parts, _circuit_text(blueprint), _fenced(broken))
    return Built(body, spec, blueprint, {"defect": defect})


def completion(
    blueprint: Blueprint, rng: random.Random, difficulty: Difficulty, split: Split
) -> Built:
    """Code completion: a part of the program replaced by a TODO."""
    partial = program.omit(blueprint, OMISSIONS[difficulty], rng)
    task = (
        "Complete the program below (where the TODO says) so that it builds the intended "
        "circuit. Return the whole program."
    )
    spec = _exact_spec(blueprint, split)
    body = prompt.compose(task, spec.parts, _circuit_text(blueprint), _fenced(partial))
    return Built(body, spec, blueprint, {"omitted": OMISSIONS[difficulty]})


def substitution(
    blueprint: Blueprint, rng: random.Random, difficulty: Difficulty, split: Split
) -> Built:
    """Part substitution: swap repressor(s) for others, everything else unchanged."""
    count = 2 if difficulty == "hard" and len(blueprint.repressors) >= 2 else 1
    old = rng.sample(blueprint.repressors, count)
    pool = [r for r in repressor_pool(split, sensors=False) if r not in blueprint.repressors]
    held = [r for r in pool if r in library.HELD_OUT]
    if split == "ood" and held:
        new = rng.sample(held, 1) + rng.sample([r for r in pool if r not in held], count - 1)
    else:
        new = rng.sample(pool, count)
    mapping = dict(zip(old, new, strict=True))
    swapped = blueprint.renamed(mapping)
    forbidden = sorted({*old, *(library.REPRESSORS[r].promoter for r in old)})
    spec = _exact_spec(swapped, split, forbidden=forbidden)
    swaps = "; ".join(
        f"{a} by {b} (and its promoter {library.REPRESSORS[a].promoter} by "
        f"{library.REPRESSORS[b].promoter})"
        for a, b in mapping.items()
    )
    task = (
        f"The program below builds the circuit shown. Replace the repressor {swaps}: the CDS, "
        "its protein, its promoter wherever it is used, and its regulation, keeping everything "
        "else as it is. Return the whole program."
    )
    shown = "Circuit:\n" + render.circuit(blueprint.design, blueprint.inputs)
    body = prompt.compose(task, spec.parts, shown, _fenced(program.render(blueprint)))
    return Built(body, spec, swapped, {"replace": ", ".join(old)})


def abstract(blueprint: Blueprint) -> tuple[Design, dict[str, str]]:
    """The circuit with its repressors renamed G1, G2... (their promoters pG1, pG2...)."""
    names = {r: f"G{i}" for i, r in enumerate(blueprint.repressors, 1)}
    parts = dict(names)
    parts.update({library.REPRESSORS[r].promoter: f"p{g}" for r, g in names.items()})
    units = tuple(
        Unit(
            f"tu_{parts.get(u.name[3:], u.name[3:])}",
            tuple(parts.get(p, p) for p in u.parts),
            u.roles,
        )
        for u in blueprint.design.units
    )
    regulations = tuple(
        sorted(
            (
                Regulation(parts[r.regulator], parts[r.promoter], r.sign)
                for r in blueprint.design.regulations
            ),
            key=lambda r: int(r.regulator[1:]),
        )
    )
    return Design("circuit", units, regulations), names


def _isomorphic_spec(blueprint: Blueprint, split: Split, repressors: list[str]) -> CircuitSpec:
    shape, _ = abstract(blueprint)
    table = blueprint.truth_table() if blueprint.circuit == "logic_gate" else None
    return CircuitSpec(
        circuit=blueprint.circuit,
        check="isomorphic",
        parts=_allowed(split),
        required=_named_parts(blueprint),
        inputs=list(blueprint.inputs),
        output=blueprint.output,
        truth_table=table,
        edges=sorted(shape.edges(blueprint.inputs)),
        repressors=repressors,
        at_least_one_of=_held_out(split, repressors),
    )


def assignment(
    blueprint: Blueprint, rng: random.Random, difficulty: Difficulty, split: Split
) -> Built:
    """Gate assignment: map the abstract nodes of a netlist to repressors under constraints."""
    offered = _offer(blueprint, rng, split, set())
    spec = _isomorphic_spec(blueprint, split, offered)
    shape, _ = abstract(blueprint)
    task = (
        "Assign repressors to the abstract circuit below: each node G1, G2... becomes a distinct "
        f"repressor from {', '.join(offered)}, its promoter pG1, pG2... that repressor's own "
        "promoter. Build the resulting circuit with these inputs, reporter, units and "
        "regulations (RBSs and terminators may be any from the list)."
    )
    if spec.at_least_one_of:
        task += f" Use at least one of {', '.join(spec.at_least_one_of)}."
    netlist = "Abstract circuit:\n" + render.circuit(shape, blueprint.inputs, with_type=False)
    body = prompt.compose(task, spec.parts, netlist)
    return Built(body, spec, blueprint, {})


def topology(
    blueprint: Blueprint, rng: random.Random, difficulty: Difficulty, split: Split
) -> Built:
    """Topology identification: rebuild a circuit shown only as SBOL, with other repressors."""
    pool = [
        r
        for r in repressor_pool(split, sensors=_sensors(blueprint))
        if r not in blueprint.repressors
    ]
    count = len(blueprint.repressors)
    if len(pool) < count:
        pool = repressor_pool(split, sensors=_sensors(blueprint))
    fresh = rng.sample(pool, count)
    if split == "ood" and not set(fresh) & library.HELD_OUT:
        fresh[0] = rng.choice(sorted(library.HELD_OUT - set(fresh)))
    target = blueprint.renamed(dict(zip(blueprint.repressors, fresh, strict=True)))
    spec = _isomorphic_spec(blueprint, split, sorted(fresh))
    extras = []
    if blueprint.inputs:
        extras.append(f"the same input promoters ({', '.join(blueprint.inputs)})")
    if blueprint.output:
        extras.append(f"the same reporter ({blueprint.output})")
    same = (", ".join(extras) + ", ") if extras else ""
    task = (
        "The SBOL3 document below (Turtle) describes a genetic circuit. Work out its topology "
        f"and build a circuit with the same topology — {same}the same signed regulations "
        f"between repressors, units wired the same way — using the repressors "
        f"{', '.join(sorted(fresh))} (each once) in place of the ones it uses."
    )
    document = "```turtle\n" + program.turtle(blueprint) + "```"
    body = prompt.compose(task, spec.parts, document)
    return Built(body, spec, target, {})


BUILDERS = {
    "design": design,
    "repair": repair,
    "completion": completion,
    "substitution": substitution,
    "assignment": assignment,
    "topology": topology,
}
