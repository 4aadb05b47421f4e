"""Levels 3 and 4: the circuit's structure and semantics, read from a valid document.

A part is judged by what the document says it is (its Sequence Ontology role, the interactions
it takes part in), not by its name. Names matter only where the library knows the part: a part
the library recognises (``library.canonical``: its own name, an iGEM ``BBa_`` id, a CDS named
by its protein, other capitalisation) goes by the library's name, and what the library knows
about it is checked; any other part goes by its display id.

Level 3 (structure): every DNA part (a Component with a promoter, RBS, CDS or terminator role)
is typed DNA, has the library's role if the library knows it, is in the task's parts list if the
task restricts parts to it, and has IUPAC DNA sequences if any; every transcription unit (a DNA
Component whose features instantiate parts) is totally ordered by ``precedes`` constraints (or,
failing those, by ``Range`` locations) and reads promoter(s) → RBS → CDS (→ RBS → CDS…) →
terminator, possibly repeated; the required parts occur in units. RDF keeps no list order: the
features' listing order counts for nothing.

Level 4 (semantics): every interaction is a genetic production (template: a CDS part; product: a
protein), an inhibition or a stimulation of a promoter part by a protein, or of a protein by a
small molecule (an inducer), whose participants are features of the interaction's own
component; every protein is produced by exactly one CDS, every CDS of a unit produces one
protein, regulated promoters and produced CDSs sit in units, and where the library knows both a
regulator and what it acts on, the document agrees with the library. The result is a
``Design`` for level 5.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import sbol3

from verifiers.sbol import library, ontology
from verifiers.sbol.design import Design, Induction, Regulation, Unit
from verifiers.sbol.library import Role
from verifiers.sbol.spec import CircuitSpec

_IUPAC_DNA = re.compile(r"[ACGTRYSWKMBDHVN]*", re.IGNORECASE)
_UNIT = re.compile(r"(P+(RC)+T)+")
_LETTER: dict[Role, str] = {"promoter": "P", "RBS": "R", "CDS": "C", "terminator": "T"}
_INTERACTIONS = {
    ontology.PRODUCTION: "genetic production",
    ontology.INHIBITION: "inhibition",
    ontology.STIMULATION: "stimulation",
}
_MAX_DEPTH = 8  # ComponentReference chains followed before giving up


class Failed(Exception):
    """A level's check failed; the message names the check."""


@dataclass
class _Index:
    """The document's objects by identity, and its parts by identity."""

    document: sbol3.Document
    objects: dict[str, sbol3.Identified] = field(default_factory=dict)
    parts: dict[str, tuple[str, Role]] = field(default_factory=dict)  # identity -> (name, role)
    products: dict[str, list[sbol3.Component]] = field(default_factory=dict)  # CDS -> proteins

    def __post_init__(self) -> None:
        self.document.traverse(lambda obj: self.objects.setdefault(obj.identity, obj))
        for component in self.components():  # what each CDS makes, to name it by its protein
            for interaction in component.interactions:
                if [str(t) for t in interaction.types] != [ontology.PRODUCTION]:
                    continue
                roles = {
                    str(role): _target(self, self.objects.get(str(p.participant)))
                    for p in interaction.participations
                    for role in p.roles
                }
                template, product = roles.get(ontology.TEMPLATE), roles.get(ontology.PRODUCT)
                if template is not None and product is not None:
                    self.products.setdefault(template.identity, []).append(product)

    def components(self) -> list[sbol3.Component]:
        return [obj for obj in self.document.objects if isinstance(obj, sbol3.Component)]

    def name(self, identity: str) -> str:
        obj = self.objects.get(identity)
        return str(obj.display_id) if obj is not None else identity

    def canonical(self, component: sbol3.Component) -> str:
        """The library's name for the component if the library recognises it (by its display
        id, its name or, for a CDS, its protein's), else its display id."""
        aliases = [str(component.display_id), *([str(component.name)] if component.name else [])]
        for product in self.products.get(component.identity, []):
            aliases += [str(product.display_id), *([str(product.name)] if product.name else [])]
        return library.canonical(aliases) or str(component.display_id)


def _part_role(component: sbol3.Component) -> Role | None:
    roles = [ontology.PART_ROLES[r] for r in component.roles if r in ontology.PART_ROLES]
    if len(roles) > 1:
        raise Failed(
            f"component {component.display_id!r} has more than one part role ({', '.join(roles)})"
        )
    return roles[0] if roles else None  # type: ignore[return-value]


def _check_parts(index: _Index, spec: CircuitSpec) -> None:
    allowed = set(spec.parts)
    catalogue = library.parts()
    for component in index.components():
        role = _part_role(component)
        if role is None:
            continue
        name = index.canonical(component)
        shown = repr(name) if name == component.display_id else f"{component.display_id!r} ({name})"
        index.parts[component.identity] = (name, role)
        if ontology.DNA not in component.types:
            raise Failed(f"part {shown} ({role}) is not typed DNA (sbol3.SBO_DNA)")
        known = catalogue.get(name)
        if spec.listed_parts_only and name not in allowed:
            raise Failed(
                f"part {shown} ({role}) is not in the task's parts list, and this task asks "
                "for its parts only"
            )
        if known is not None and known.role != role:
            raise Failed(
                f"part {shown} has role {role}, but the library's {name} is a {known.role}"
            )
        for reference in component.sequences:
            sequence = index.objects.get(str(reference))
            if not isinstance(sequence, sbol3.Sequence):
                continue  # level 2 has made sure it resolves
            if sequence.encoding != ontology.IUPAC_DNA or not _IUPAC_DNA.fullmatch(
                str(sequence.elements or "")
            ):
                raise Failed(
                    f"the sequence of part {name!r} is not IUPAC DNA (encoding "
                    "sbol3.IUPAC_DNA_ENCODING, letters ACGT and IUPAC ambiguity codes)"
                )


def _order(unit: sbol3.Component, members: dict[str, str]) -> list[str] | None:
    """The unit's part features in order (identities), by ``precedes`` or else by ranges."""
    following: dict[str, str] = {}
    preceding: dict[str, str] = {}
    for constraint in unit.constraints:
        if str(constraint.restriction) != ontology.PRECEDES:
            continue
        subject, obj = str(constraint.subject), str(constraint.object)
        if subject not in members or obj not in members:
            continue
        if following.get(subject, obj) != obj or preceding.get(obj, subject) != subject:
            raise Failed(
                f"unit {unit.display_id!r} is not ordered: a part has two different neighbours "
                "in its precedes constraints"
            )
        following[subject], preceding[obj] = obj, subject
    if following:
        heads = [m for m in members if m not in preceding]
        chain: list[str] = []
        current = heads[0] if len(heads) == 1 else None
        while current is not None and current not in chain:
            chain.append(current)
            current = following.get(current)
        return chain if len(chain) == len(members) else None
    starts: dict[str, int] = {}
    for feature in unit.features:
        ranges = [loc for loc in feature.locations if isinstance(loc, sbol3.Range)]
        if feature.identity in members and len(ranges) == 1:
            starts[feature.identity] = int(ranges[0].start)
    if len(starts) == len(members) and len(set(starts.values())) == len(starts):
        return sorted(members, key=starts.__getitem__)
    return None


def _units(index: _Index) -> list[Unit]:
    units: list[Unit] = []
    for component in index.components():
        if component.identity in index.parts or ontology.DNA not in component.types:
            continue
        members = {
            feature.identity: str(feature.instance_of)
            for feature in component.features
            if isinstance(feature, sbol3.SubComponent) and str(feature.instance_of) in index.parts
        }
        if not members:
            continue
        name = str(component.display_id)
        order = _order(component, members)
        if order is None:
            raise Failed(
                f"unit {name!r} is not ordered: chain all of its parts with precedes constraints "
                "(sbol3.Constraint(sbol3.SBOL_PRECEDES, upstream, downstream)) from promoter to "
                "terminator"
            )
        named = [index.parts[members[identity]] for identity in order]
        letters = "".join(_LETTER[role] for _, role in named)
        if not _UNIT.fullmatch(letters):
            found = ", ".join(f"{n} ({r})" for n, r in named)
            raise Failed(
                f"unit {name!r} is not ordered promoter → RBS → CDS → terminator: found {found}"
            )
        units.append(Unit(name, tuple(n for n, _ in named), tuple(r for _, r in named)))
    return units


def structure(document: sbol3.Document, spec: CircuitSpec) -> tuple[_Index, list[Unit]]:
    """Level 3; raises ``Failed`` with the failed check."""
    index = _Index(document)
    _check_parts(index, spec)
    units = _units(index)
    if not units:
        raise Failed(
            "the document has no transcription unit (a DNA component whose features are "
            "SubComponents of promoter, RBS, CDS and terminator parts, chained by precedes)"
        )
    used = {name for unit in units for name in unit.parts}
    for required in spec.required:
        if required not in used:
            role = library.parts()[required].role if required in library.parts() else "part"
            raise Failed(f"required part {required!r} ({role}) is in no transcription unit")
    return index, units


def _target(index: _Index, feature: sbol3.Identified | None) -> sbol3.Component | None:
    """The component a feature stands for (following ComponentReferences)."""
    for _ in range(_MAX_DEPTH):
        if isinstance(feature, sbol3.SubComponent):
            found = index.objects.get(str(feature.instance_of))
            return found if isinstance(found, sbol3.Component) else None
        if isinstance(feature, sbol3.ComponentReference):
            feature = index.objects.get(str(feature.refers_to))
            continue
        return None
    return None


@dataclass
class _Reading:
    productions: dict[str, str] = field(default_factory=dict)  # protein identity -> CDS name
    produced_by: dict[str, str] = field(default_factory=dict)  # CDS name -> protein identity
    regulations: list[tuple[str, str, int]] = field(default_factory=list)  # protein, promoter
    inductions: list[tuple[str, str, int]] = field(default_factory=list)  # chemical, protein
    system: str = ""


def _participants(
    index: _Index, owner: sbol3.Component, interaction: sbol3.Interaction, kind: str
) -> dict[str, list[sbol3.Component]]:
    features = {feature.identity for feature in owner.features}
    by_role: dict[str, list[sbol3.Component]] = {}
    label = f"{kind} {interaction.display_id!r} in {owner.display_id!r}"
    for participation in interaction.participations:
        participant = str(participation.participant)
        if participant not in features:
            raise Failed(
                f"{label}: participant {index.name(participant)!r} is not a feature of "
                f"{owner.display_id!r}"
            )
        target = _target(index, index.objects.get(participant))
        if target is None:
            raise Failed(
                f"{label}: participant {index.name(participant)!r} does not stand for a "
                "Component (use a SubComponent of the part or protein)"
            )
        for role in participation.roles:
            by_role.setdefault(str(role), []).append(target)
    return by_role


def _one(by_role: dict[str, list[sbol3.Component]], role: str, label: str) -> sbol3.Component:
    found = by_role.get(role, [])
    if len(found) != 1:
        raise Failed(
            f"{label}: expected one {ontology.label(role)} participant, found {len(found)}"
        )
    return found[0]


def _read_interaction(
    index: _Index, owner: sbol3.Component, interaction: sbol3.Interaction, reading: _Reading
) -> None:
    kinds = [t for t in interaction.types if str(t) in _INTERACTIONS]
    if len(kinds) != 1 or len(interaction.types) != 1:
        found = ", ".join(ontology.label(str(t)) for t in interaction.types) or "none"
        raise Failed(
            f"interaction {interaction.display_id!r} in {owner.display_id!r} has type(s) {found}; "
            "expected exactly one of genetic production, inhibition, stimulation"
        )
    kind = _INTERACTIONS[str(kinds[0])]
    label = f"{kind} {interaction.display_id!r} in {owner.display_id!r}"
    by_role = _participants(index, owner, interaction, kind)
    if kind == "genetic production":
        template = _one(by_role, ontology.TEMPLATE, label)
        product = _one(by_role, ontology.PRODUCT, label)
        cds = index.parts.get(template.identity)
        if cds is None or cds[1] != "CDS" or ontology.PROTEIN not in product.types:
            raise Failed(
                f"{label}: the template must be a CDS part and the product a protein; found "
                f"template {template.display_id!r} ({_kind(index, template)}) and product "
                f"{product.display_id!r} ({_kind(index, product)})"
            )
        known = reading.productions.get(product.identity)
        if known is not None and known != cds[0]:
            raise Failed(f"protein {product.display_id!r} is produced by two CDSs")
        if reading.produced_by.get(cds[0], product.identity) != product.identity:
            raise Failed(f"CDS {cds[0]!r} produces two different proteins")
        reading.productions[product.identity] = cds[0]
        reading.produced_by[cds[0]] = product.identity
        return
    actor_role, acted_role, sign = (
        (ontology.INHIBITOR, ontology.INHIBITED, -1)
        if kind == "inhibition"
        else (ontology.STIMULATOR, ontology.STIMULATED, 1)
    )
    actor = _one(by_role, actor_role, label)
    acted = _one(by_role, acted_role, label)
    promoter = index.parts.get(acted.identity)
    if ontology.SIMPLE_CHEMICAL in actor.types and ontology.PROTEIN in acted.types:
        chemical = library.canonical([str(actor.display_id), str(actor.name or "")])
        reading.inductions.append((chemical or str(actor.display_id), acted.identity, sign))
        return
    if ontology.PROTEIN not in actor.types or promoter is None or promoter[1] != "promoter":
        raise Failed(
            f"{label}: the {ontology.label(actor_role)} must be a protein and the "
            f"{ontology.label(acted_role)} a promoter part (or a small molecule and a protein); "
            f"found {actor.display_id!r} ({_kind(index, actor)}) and {acted.display_id!r} "
            f"({_kind(index, acted)})"
        )
    reading.regulations.append((actor.identity, promoter[0], sign))


def _kind(index: _Index, component: sbol3.Component) -> str:
    if component.identity in index.parts:
        return index.parts[component.identity][1]
    if ontology.PROTEIN in component.types:
        return "protein"
    if ontology.SIMPLE_CHEMICAL in component.types:
        return "small molecule"
    return "a " + ", ".join(ontology.label(str(t)) for t in component.types) or "untyped"


def semantics(index: _Index, units: list[Unit]) -> Design:
    """Level 4; raises ``Failed`` with the failed check, else the circuit's ``Design``."""
    reading = _Reading()
    for component in index.components():
        if component.interactions and not reading.system:
            reading.system = str(component.display_id)
        for interaction in component.interactions:
            _read_interaction(index, component, interaction, reading)
    in_units = {name for unit in units for name in unit.parts}
    unit_genes = {
        name
        for unit in units
        for name, role in zip(unit.parts, unit.roles, strict=True)
        if role == "CDS"
    }
    for cds in sorted(unit_genes - reading.produced_by.keys()):
        raise Failed(f"CDS {cds!r} is in a unit but no genetic production says what it makes")
    for cds in sorted(reading.produced_by.keys() - in_units):
        raise Failed(f"CDS {cds!r} produces a protein but is in no transcription unit")
    regulations: set[Regulation] = set()
    for protein, promoter, sign in reading.regulations:
        gene = reading.productions.get(protein)
        if gene is None:
            raise Failed(
                f"protein {index.name(protein)!r} regulates {promoter!r} but no CDS in the "
                "circuit produces it (add its genetic production)"
            )
        if promoter not in in_units:
            raise Failed(f"promoter {promoter!r} is regulated but is in no transcription unit")
        _agrees(gene, promoter)
        regulations.add(Regulation(gene, promoter, sign))
    induced = _inductions(index, reading)
    for component in index.components():
        if ontology.PROTEIN in component.types and component.identity not in reading.productions:
            raise Failed(f"protein {component.display_id!r} is produced by nothing (an orphan)")
    ordered = tuple(sorted(regulations, key=lambda r: (r.regulator, r.promoter, r.sign)))
    proteins = {gene: index.name(p) for gene, p in reading.produced_by.items()}
    return Design(reading.system or "circuit", tuple(units), ordered, proteins, induced)


def _inductions(index: _Index, reading: _Reading) -> tuple[Induction, ...]:
    """The inducers' actions on the circuit's proteins, checked against the library's."""
    found: set[Induction] = set()
    for chemical, protein, sign in reading.inductions:
        gene = reading.productions.get(protein)
        if gene is None:
            raise Failed(
                f"{chemical} acts on protein {index.name(protein)!r}, but no CDS in the circuit "
                "produces it (add its genetic production)"
            )
        known = library.INDUCERS.get(chemical)
        if known is not None and gene in library.parts() and known != (gene, sign):
            verb = "releases" if known[1] < 0 else "is needed by"
            raise Failed(
                f"{chemical} does not act so on {gene}: in the library it {verb} {known[0]}"
            )
        found.add(Induction(chemical, gene, sign))
    return tuple(sorted(found, key=lambda i: (i.chemical, i.regulator, i.sign)))


def _agrees(gene: str, promoter: str) -> None:
    """Where the library knows the regulator, it must be a transcription factor; where it knows
    both sides, it must regulate that promoter."""
    if gene not in library.parts():
        return
    targets = library.regulation(gene)
    if not targets:
        raise Failed(f"{gene} is not a transcription factor: it regulates no promoter")
    if promoter in library.parts() and promoter not in targets:
        raise Failed(
            f"{gene} does not bind {promoter!r}: in the library {gene} regulates "
            f"{', '.join(repr(t) for t in sorted(targets))}"
        )
