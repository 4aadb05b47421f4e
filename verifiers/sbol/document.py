"""Reading the document back (the end of level 1) and level 2, validity.

Runs on the trusted side. The program's document arrives as sorted N-Triples written inside
the sandbox; ``load`` parses it with pySBOL3 (a forged file, or a document whose IRIs do not
survive serialisation such as ``restriction='precedes'``, is no SBOL3 document: level 1 fails).
Level 2 (``check``): ``validate`` runs pySBOL3's object checks and its SHACL
shapes, and every reference to another object (``instanceOf``, ``hasSequence``, ``participant``,
``subject``, ``object``, ``inChildOf``, ``refersTo``) must resolve inside the document to an
object of the right class, which pySBOL3's validation does not check.

pySBOL3's ``Document.validate`` re-parses its 67 kB shapes file and copies it into the data
graph on every call (~0.2 s). ``validate`` here parses the shapes once per process and adds
only the subclass axioms the ``sh:class`` checks need; the shapes graph is kept apart from the
data, so a document cannot switch shapes off (``sh:deactivated``) as it could inside pySBOL3's
merged graph. ``tests/test_sbol_verifier.py`` checks that both report the same errors.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import pyshacl
import rdflib
import sbol3
from rdflib import RDF, RDFS

MAX_DOCUMENT_BYTES = 1 << 20
MAX_TRIPLES = 10_000
MAX_REPORTED = 3

_SBOL = "http://sbols.org/v3#"
_FEATURES = frozenset(
    _SBOL + kind
    for kind in (
        "SubComponent", "ComponentReference", "LocalSubComponent", "ExternallyDefined",
        "SequenceFeature",
    )
)  # fmt: skip
REFERENCES: dict[str, frozenset[str]] = {
    _SBOL + "instanceOf": frozenset({_SBOL + "Component"}),
    _SBOL + "hasSequence": frozenset({_SBOL + "Sequence"}),
    _SBOL + "participant": _FEATURES,
    _SBOL + "subject": _FEATURES,
    _SBOL + "object": _FEATURES,
    _SBOL + "inChildOf": frozenset({_SBOL + "SubComponent"}),
    _SBOL + "refersTo": _FEATURES,
}
"""Reference properties and the classes their targets must have."""


class Unreadable(ValueError):
    """The document cannot be read back as SBOL3."""


def read(text: str) -> sbol3.Document:
    """The document in ``text`` (N-Triples); ``Unreadable`` with the reason."""
    if len(text.encode()) > MAX_DOCUMENT_BYTES:
        raise Unreadable(f"the document is larger than {MAX_DOCUMENT_BYTES >> 20} MiB")
    if text.count("\n") > MAX_TRIPLES:
        raise Unreadable(f"the document has more than {MAX_TRIPLES} triples")
    document = sbol3.Document()
    try:
        document.read_string(text, file_format=sbol3.SORTED_NTRIPLES)
    except Exception as exc:  # rdflib and pySBOL3 raise many kinds on malformed input
        hint = ""
        if "relative" in str(exc).lower() or "<" in str(exc):
            hint = " (an ontology term or restriction given as a bare word instead of a URI?)"
        raise Unreadable(f"{type(exc).__name__}: {str(exc)[:200]}{hint}") from None
    return document


@cache
def _shapes() -> tuple[rdflib.Graph, tuple[Any, ...]]:
    """pySBOL3's SHACL shapes (parsed once) and their ``rdfs:subClassOf`` axioms."""
    shapes = rdflib.Graph()
    with resources.as_file(resources.files(sbol3) / "rdf" / "sbol3-shapes.ttl") as path:
        shapes.parse(path, format="ttl")
    shapes.bind("sbol", _SBOL)  # as in pySBOL3's merged graph: messages name sbol:Feature
    return shapes, tuple(shapes.triples((None, RDFS.subClassOf, None)))


def validate(document: sbol3.Document, data: rdflib.Graph | None = None) -> list[str]:
    """pySBOL3's validation errors (object checks, then SHACL), as ``Document.validate``;
    ``data`` is the document's graph when the caller has it (subclass axioms are added to it)."""
    report = sbol3.ValidationReport()
    for obj in document.objects:
        obj.validate(report)
    shapes, axioms = _shapes()
    data = document.graph() if data is None else data
    for triple in axioms:
        data.add(triple)
    conforms, results, _ = pyshacl.validate(
        data_graph=data,
        shacl_graph=shapes,
        ont_graph=None,
        inference=None,
        abort_on_first=False,
        meta_shacl=False,
        advanced=True,
        inplace=True,
        debug=False,
    )
    if not conforms:
        document.parse_shacl_graph(results, report)
    return [str(error) for error in report.errors]


def unresolved(graph: rdflib.Graph) -> list[str]:
    """References that do not resolve inside the document (``graph``, from ``Document.graph``)
    to an object of the right class."""
    types: dict[Any, set[str]] = {}
    for subject, _, kind in graph.triples((None, RDF.type, None)):
        types.setdefault(subject, set()).add(str(kind))
    found = []
    for predicate, expected in REFERENCES.items():
        for subject, _, target in graph.triples((None, rdflib.URIRef(predicate), None)):
            if not types.get(target, set()) & expected:
                what = "nothing" if target not in types else "a " + _short(min(types[target]))
                want = " or ".join(sorted(_short(e) for e in expected))
                found.append(
                    f"{_short(str(subject))} {_short(predicate)} {_short(str(target))}: it names "
                    f"{what} in the document, not a {want}"
                )
    return sorted(found)


def _readable(message: str) -> str:
    """A validation message with its IRIs shortened."""
    for prefix in (_SBOL, "https://example.org/"):
        message = message.replace(f"<{prefix}", "<").replace(prefix, "")
    return message


def _short(uri: str) -> str:
    for prefix in (_SBOL, "https://example.org/"):
        if uri.startswith(prefix):
            return uri[len(prefix) :]
    return uri


def load(text: str) -> tuple[sbol3.Document | None, str]:
    """The end of level 1: the handed-over text read back as a non-empty SBOL3 document, or
    None and why not (a forged or unserialisable file is no document)."""
    try:
        document = read(text)
    except Unreadable as exc:
        return None, f"the document cannot be read back as SBOL3: {exc}"
    if not document.objects:
        return None, "the document is empty (nothing was added with doc.add)"
    return document, ""


def check(document: sbol3.Document) -> str:
    """Level 2: '' when the document is valid and closed, else the failed check's message."""
    graph = document.graph()
    dangling = unresolved(graph)  # first: validation adds axioms to the graph
    errors = validate(document, graph)
    if errors:
        shown = "; ".join(_readable(error) for error in errors[:MAX_REPORTED])
        more = f" (and {len(errors) - MAX_REPORTED} more)" if len(errors) > MAX_REPORTED else ""
        return f"validate() reports {len(errors)} error(s): {shown}{more}"
    if dangling:
        shown = "; ".join(dangling[:MAX_REPORTED])
        return f"{len(dangling)} reference(s) do not resolve inside the document: {shown}"
    return ""
