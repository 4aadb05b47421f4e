"""What every task tells the policy: the conventions the checker reads and the parts it may use."""

from __future__ import annotations

from verifiers.sbol import library

CONVENTIONS = """\
Answer with one complete Python program in a ```python block. It uses pySBOL3 (`import sbol3`)
to build the circuit as an SBOL3 document and leaves the document in a module-level variable
named `doc`. It runs in a sandbox with no network and no files; `tyto` answers from an offline
table, but the sbol3 constants (sbol3.SO_PROMOTER, sbol3.SBO_INHIBITION, ...) are simpler.

What the checker reads, level by level:
1. execution: the program runs and leaves `doc`;
2. validity: `doc.validate()` finds no error and every reference resolves inside `doc`;
3. structure: each DNA part is an sbol3.Component typed sbol3.SBO_DNA with one role
   (SO_PROMOTER, SO_RBS, SO_CDS, SO_TERMINATOR); a part of the list below keeps its role
   (name it as the list does, or by its iGEM id; a CDS may be named for its protein);
   sequences are optional; each transcription unit is a DNA Component whose features are
   SubComponents of parts chained by sbol3.SBOL_PRECEDES constraints: promoter(s), RBS, CDS,
   terminator;
4. semantics: each protein (an sbol3.Component typed sbol3.SBO_PROTEIN) is made by a genetic
   production interaction (template: the CDS; product: the protein); a repressor acts by an
   inhibition (inhibitor: its protein; inhibited: its promoter), an activator by a stimulation;
   an inducer (typed sbol3.SBO_SIMPLE_CHEMICAL) inhibits or stimulates a protein. Interactions
   belong to one Component typed sbol3.SBO_FUNCTIONAL_ENTITY and name its features
   (SubComponents of the parts, proteins and inducers);
5. function: the regulatory graph does what the task asks. Tandem promoters before a CDS all
   drive it (OR); a promoter is off while a repressor of it acts, and needs every activator of
   it to act."""


def parts_list(allowed: list[str]) -> str:
    """The allowed parts, grouped by role, with what each promoter and repressor does."""
    names = set(allowed)
    inputs = [f"{p} ({what.split(' ')[0]})" for p, what in library.INPUTS.items() if p in names]
    repressors = [
        f"{r.name} ⊣ {r.promoter}" for r in library.REPRESSORS.values() if r.name in names
    ]
    activators = [f"{a} → {p}" for a, p in library.ACTIVATORS.items() if a in names]
    hybrids = [
        f"{p} ({', '.join(('+' if sign > 0 else '⊣') + r for r, sign in acting)})"
        for p, acting in library.HYBRIDS.items()
        if p in names
    ]
    inducers = [
        f"{c} ({'releases' if sign < 0 else 'activates'} {r})"
        for c, (r, sign) in library.INDUCERS.items()
        if r in names
    ]
    rows = [
        ("input promoters (on when their input is present)", inputs),
        ("constitutive promoters", [p for p in library.CONSTITUTIVE if p in names]),
        ("repressors (CDS ⊣ the promoter it represses)", repressors),
        ("activators (CDS → the promoter it activates)", activators),
        ("hybrid promoters (+ activated by, ⊣ repressed by)", hybrids),
        ("inducers (small molecules)", inducers),
        ("reporters (CDS)", [r for r in library.REPORTERS if r in names]),
        ("RBSs", [r for r in library.RBSS if r in names]),
        ("terminators", [t for t in library.TERMINATORS if t in names]),
    ]
    lines = ["Parts you may use (by name):"]
    lines += [f"- {title}: {', '.join(items)}" for title, items in rows if items]
    return "\n".join(lines)


def compose(task: str, allowed: list[str], *sections: str) -> str:
    """A prompt: the task, its material, the conventions and the parts list."""
    return "\n\n".join([task, *sections, CONVENTIONS, parts_list(allowed)])
