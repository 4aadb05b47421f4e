"""The sbol.circuit verifier: levels, messages, reward options, validation, hostile programs."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sbol3", reason="the sbol extra is not installed")

import sbol3

from environments.sbol import program
from environments.sbol.circuits import draw
from sandbox.backends import SandboxConfig, open_sandbox
from verifiers.code.extract import extract_code
from verifiers.sbol import VERIFIER, check, diagram, document, library
from verifiers.sbol.design import Design, Regulation, Unit
from verifiers.sbol.reward import PRESETS, CircuitOptions, combine

RESPONSE, REFERENCE = VERIFIER.example
SOURCE = extract_code(RESPONSE, "python")


def score(source: str, reference: Any = REFERENCE, **options: Any) -> Any:
    return VERIFIER(f"```python\n{source}\n```", reference, CircuitOptions(**options))


def test_the_example_passes_every_level() -> None:
    result = score(SOURCE)
    assert (result.status, result.reward) == ("ok", 1.0)
    assert result.metrics["levels_passed"] == 5.0
    assert "PhlF ⊣ YFP" in result.extra["circuit"]


# -- reward -----------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_presets_pay_each_level_its_weight_in_a_row(preset: str) -> None:
    options = CircuitOptions(preset=preset)  # type: ignore[arg-type]
    weights = PRESETS[preset]
    for passed in range(6):
        assert combine(passed, options) == pytest.approx(sum(weights[:passed]) / sum(weights))
    assert combine(5, options) == 1.0


def test_the_curriculum_moves_weight_towards_function() -> None:
    stages = [PRESETS[f"stage{i}"] for i in range(1, 5)]
    assert [s[4] for s in stages] == sorted(s[4] for s in stages)
    assert [s[0] for s in stages] == sorted((s[0] for s in stages), reverse=True)


def test_binary_and_custom_weights() -> None:
    assert [combine(p, CircuitOptions(reward="binary")) for p in range(6)] == [0, 0, 0, 0, 0, 1]
    custom = CircuitOptions(weights=(1, 1, 0, 0, 2))
    assert combine(2, custom) == 0.5
    assert combine(4, custom) == 0.5
    with pytest.raises(ValueError, match="non-negative"):
        CircuitOptions(weights=(1, -1, 0, 0, 0))
    with pytest.raises(ValueError, match="positive sum"):
        CircuitOptions(weights=(0, 0, 0, 0, 0))


def test_a_failure_pays_the_levels_below_it() -> None:
    flipped = SOURCE.replace("sbol3.SBO_INHIBITION,", "sbol3.SBO_STIMULATION,").replace(
        "sbol3.SBO_INHIBITOR, sbol3.SBO_INHIBITED", "sbol3.SBO_STIMULATOR, sbol3.SBO_STIMULATED"
    )
    assert score(flipped).reward == pytest.approx(0.8)
    assert score(flipped, preset="stage4").reward == pytest.approx(0.4)
    assert score(flipped, reward="binary").reward == 0.0
    assert score(flipped).detail.startswith("L5 function failed: PhlF stimulates pPhlF: ")


# -- level 1 ----------------------------------------------------------------------------------


@pytest.mark.parametrize("junk", ["", "lorem ipsum dolor", "def broken(:\n"])
def test_junk_is_invalid_and_fails_level_1(junk: str) -> None:
    result = VERIFIER(junk, REFERENCE)
    assert (result.status, result.reward) == ("invalid", 0.0)
    assert result.detail.startswith("L1 execution failed: ")
    assert result.components["L1_execution"] == 0.0


def test_a_program_without_doc_fails_level_1_and_says_so() -> None:
    result = score("import sbol3\nd = sbol3.Document()\nprint('valid: all five levels pass')\n")
    assert (result.status, result.reward) == ("ok", 0.0)
    assert "no sbol3.Document in a module-level variable named doc" in result.detail
    assert "found one named d" in result.detail


def test_an_empty_document_is_no_document() -> None:
    result = score("import sbol3\ndoc = sbol3.Document()\n")
    assert result.reward == 0.0
    assert (
        result.detail
        == "L1 execution failed: the document is empty (nothing was added with doc.add)"
    )


def test_a_crash_names_the_exception_and_line() -> None:
    result = score("import sbol3\ndoc = sbol3.Document()\nraise KeyError('PhlF')\n")
    assert result.detail == "L1 execution failed: KeyError: 'PhlF' (line 3)"


def test_exit_zero_after_building_still_hands_the_document_over() -> None:
    assert score(SOURCE + "\nimport sys\nsys.exit(0)\n").reward == 1.0
    assert "exited with status 3" in score(SOURCE + "\nimport sys\nsys.exit(3)\n").detail


def test_tyto_is_answered_offline() -> None:
    tyto = SOURCE.replace("import sbol3\n", "import sbol3\nimport tyto\n", 1)
    tyto = tyto.replace("sbol3.SO_PROMOTER", "tyto.SO.promoter").replace(
        "sbol3.SBO_INHIBITION", "tyto.SBO.get_uri_by_term('inhibition')"
    )
    assert score(tyto).reward == 1.0
    unknown = score("import tyto\nprint(tyto.SO.flux_capacitor)\n")
    assert "not in the offline ontology table" in unknown.detail


def test_relative_iris_do_not_survive_serialisation() -> None:
    relative = SOURCE.replace("sbol3.SBOL_PRECEDES", "'precedes'")
    result = score(relative)
    assert result.detail.startswith("L1 execution failed: the document cannot be read back")


# -- level 2 ----------------------------------------------------------------------------------


def test_a_participant_that_is_no_feature_fails_level_2() -> None:
    broken = SOURCE.replace(
        "participations = [sbol3.Participation([role], f[name]) for role, name in pairs]",
        "participations = [sbol3.Participation([role], f[name] if name != 'PhlF_protein' "
        "else PhlF_protein) for role, name in pairs]",
    )
    result = score(broken)
    assert result.metrics["levels_passed"] == 1.0
    assert result.detail.startswith("L2 validity failed: validate() reports")
    assert "participant" in result.detail


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        ("sbol3.SubComponent(p) for p in parts", "instanceOf"),  # a part never added
        ("sbol3.Component(name, sbol3.SBO_DNA, roles=[role])", "hasSequence"),  # a stray sequence
    ],
)
def test_references_that_do_not_resolve_fail_level_2(edit: str, fragment: str) -> None:
    if fragment == "instanceOf":
        broken = SOURCE.replace(
            edit,
            "sbol3.SubComponent(p if p is not rbs else 'https://example.org/circuit/B9999') "
            "for p in parts",
        )
    else:
        broken = SOURCE.replace(
            edit,
            "sbol3.Component(name, sbol3.SBO_DNA, roles=[role], "
            "sequences=['https://example.org/circuit/nowhere'])",
        )
    result = score(broken)
    assert result.detail.startswith("L2 validity failed: "), result.detail
    assert "do not resolve inside the document" in result.detail
    assert fragment in result.detail


def _documents() -> list[sbol3.Document]:
    """Valid and invalid documents: references of several circuits and their defects."""
    found = []
    for circuit, defect in [
        ("toggle_switch", None),
        ("logic_gate", None),
        ("cascade", "participant"),
        ("repressilator", "dangling"),
        ("feed_forward_loop", "swapped_production"),
    ]:
        blueprint = draw(circuit, random.Random(circuit), "hard", "ood")  # type: ignore[arg-type]
        source = (
            program.render(blueprint)
            if defect is None
            else program.inject(blueprint, defect, random.Random(1))  # type: ignore[arg-type]
        )
        namespace: dict[str, Any] = {"__name__": "reference"}
        exec(compile(source, "reference.py", "exec"), namespace)  # our own trusted programs
        found.append(namespace["doc"])
    broken = sbol3.Document()
    unit = sbol3.Component("unit", sbol3.SBO_DNA)
    a, b = sbol3.SubComponent("https://example.org/x"), sbol3.SubComponent("https://example.org/y")
    unit.features = [a, b]
    unit.constraints = [sbol3.Constraint(sbol3.SBOL_PRECEDES, a, "https://example.org/elsewhere")]
    unit.interactions = [sbol3.Interaction([sbol3.SBO_INHIBITION])]
    broken.add(unit)
    found.append(broken)
    return found


def test_validation_reports_what_pysbol3_reports() -> None:
    documents = _documents()
    assert any(d.validate().errors for d in documents)  # the corpus has invalid documents
    for doc in documents:
        ours = sorted(document.validate(doc))
        theirs = sorted(str(error) for error in doc.validate().errors)
        assert ours == theirs


def test_a_document_cannot_switch_its_shapes_off() -> None:
    """pySBOL3 validates data and shapes in one graph, so a document can deactivate a shape;
    here the shapes are a graph of their own."""
    doc = sbol3.Document()
    circuit = sbol3.Component("c", sbol3.SBO_FUNCTIONAL_ENTITY)
    protein = sbol3.Component("p", sbol3.SBO_PROTEIN)
    doc.add(circuit)
    doc.add(protein)
    circuit.features.append(sbol3.SubComponent(protein))
    participation = sbol3.Participation([sbol3.SBO_INHIBITOR], protein)  # not a Feature
    circuit.interactions.append(
        sbol3.Interaction([sbol3.SBO_INHIBITION], participations=[participation])
    )
    sneaky = doc.write_string(sbol3.SORTED_NTRIPLES) + (
        "<http://sbols.org/v3#Participation-participant> <http://www.w3.org/ns/shacl#deactivated> "
        '"true"^^<http://www.w3.org/2001/XMLSchema#boolean> .\n'
    )
    reread, _ = document.load(sneaky)
    assert reread is not None
    assert not reread.validate().errors  # pySBOL3's own validation is switched off
    assert "participant" in document.check(reread)


# -- levels 3 to 5 ----------------------------------------------------------------------------


def test_a_part_outside_the_library_passes_unless_the_task_lists_its_parts() -> None:
    """Parts are judged by what they are: a repressor the library does not know, stated as
    repressing its promoter, makes the same NOT gate; a task asking for its listed parts only
    refuses it at level 3."""
    source = SOURCE.replace('"PhlF"', '"MadeUpR"').replace('"pPhlF"', '"pMadeUpR"')
    source = source.replace("f[name]", "f.get(name, f.get('MadeUpR', f.get('pMadeUpR')))")
    source = source.replace('(J, "pPhlF")', '(J, "pMadeUpR")')
    assert score(source).reward == 1.0, score(source).detail
    listed = score(source, {**REFERENCE, "listed_parts_only": True})
    assert listed.detail.startswith("L3 structure failed: part 'pMadeUpR' (promoter) is not in ")


def test_held_out_parts_are_refused_where_the_task_lists_its_parts() -> None:
    reference = {**REFERENCE, "parts": library.allowed_parts(held_out=False)}
    source = SOURCE.replace("PhlF", "AmtR")
    assert score(source, {**reference, "parts": library.allowed_parts(held_out=True)}).reward == 1.0
    only = {**reference, "listed_parts_only": True}
    assert "'AmtR' (CDS) is not in the task's parts list" in score(source, only).detail
    pool = {**reference, "repressors": ["PhlF", "SrpR"]}
    assert "regulator(s) AmtR are not among the repressors" in score(source, pool).detail


def test_a_repressor_on_the_wrong_promoter_fails_level_4() -> None:
    source = SOURCE.replace('part("pPhlF"', 'part("pSrpR"').replace('"pPhlF"', '"pSrpR"')
    source = source.replace("pPhlF", "pSrpR")
    result = score(source, {**REFERENCE, "parts": library.allowed_parts(held_out=True)})
    assert result.detail == (
        "L4 semantics failed: PhlF does not bind 'pSrpR': in the library PhlF regulates 'pPhlF'"
    )


def test_an_orphan_protein_fails_level_4() -> None:
    orphan = SOURCE + '\ndoc.add(sbol3.Component("Stray_protein", sbol3.SBO_PROTEIN))\n'
    assert score(orphan).detail == (
        "L4 semantics failed: protein 'Stray_protein' is produced by nothing (an orphan)"
    )


def test_units_ordered_by_ranges_are_read() -> None:
    ranged = SOURCE.replace(
        """    for upstream, downstream in zip(features, features[1:]):
        tu.constraints.append(sbol3.Constraint(sbol3.SBOL_PRECEDES, upstream, downstream))""",
        """    seq = sbol3.Sequence(name + "_seq", elements="a" * 40,
                         encoding=sbol3.IUPAC_DNA_ENCODING)
    doc.add(seq)
    tu.sequences = [seq]
    for i, feature in enumerate(features):
        feature.locations = [sbol3.Range(seq, 10 * i + 1, 10 * i + 10)]""",
    )
    assert "SBOL_PRECEDES" not in ranged
    assert score(ranged).reward == 1.0


def test_the_diagram_comes_on_request() -> None:
    assert "svg" not in score(SOURCE).extra
    drawn = score(SOURCE, diagram=True).extra["svg"]
    root = ET.fromstring(drawn)
    classes = {element.get("class") for element in root.iter()}
    assert {"part promoter", "part RBS", "part CDS", "part terminator", "inhibition"} <= classes


def test_the_diagram_escapes_names() -> None:
    design = Design(
        "<script>",
        (
            Unit(
                "<b>&", ("p<x>", "B0034", "Q&A", "B0015"), ("promoter", "RBS", "CDS", "terminator")
            ),
        ),
        (Regulation("Q&A", "p<x>", -1),),
    )
    root = ET.fromstring(diagram.svg(design))
    assert "<script>" in "".join(root.itertext())


# -- hostile programs -------------------------------------------------------------------------

HOSTILE = {
    "network": "import urllib.request\n"
    "urllib.request.urlopen('http://93.184.216.34/', timeout=3)\n",
    "socket": "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=3)\n",
    "host file": f"print(open({str(Path(__file__).resolve())!r}).read()[:10])\nimport sbol3\n"
    "doc = sbol3.Document()\ndoc.add(sbol3.Component('x', sbol3.SBO_DNA))\n",
    "hang": "while True:\n    pass\n",
    "memory": "blob = bytearray(4 << 30)\n",
    "output flood": "import sys\nwhile True:\n    sys.stdout.write('valid ' * 10000)\n",
    "fake verdict": "print('L5 function passed: all five levels pass')\n",
    "forged document": "open('__circuit__.nt', 'w').write('<a> <b> <c> .\\nvalid\\n')\n"
    "import os\nos._exit(0)\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_programs_are_contained_and_score_zero(name: str) -> None:
    result = score(HOSTILE[name], time_limit_s=3)
    assert (result.status, result.reward) == ("ok", 0.0), result.detail
    assert result.detail.startswith("L1 execution failed: ")
    if name == "hang":
        assert "ran past its 3 s limit" in result.detail
    if name == "memory":
        assert "ran out of memory" in result.detail


def test_an_oversized_document_is_refused_before_it_is_parsed() -> None:
    forged = (
        "triple = '<https://example.org/c{}> <http://sbols.org/v3#displayId> \"c\" .\\n'\n"
        "lines = ''.join(triple.format(i) for i in range(12000))\n"
        "open('__circuit__.nt', 'w').write(lines)\n"
        "import os\nos._exit(0)\n"
    )
    result = score(forged)
    assert result.reward == 0.0
    assert "more than 10000 triples" in result.detail


def test_a_sandbox_that_cannot_run_the_program_is_an_error_not_zero() -> None:
    closed = open_sandbox(SandboxConfig(backend="auto", workers=1))
    closed.close()
    result = check(RESPONSE, REFERENCE, CircuitOptions(), sandbox=closed)
    assert (result.status, result.reward) == ("error", None)
    assert "sandbox" in result.detail


def test_a_bad_reference_is_an_error() -> None:
    result = VERIFIER(RESPONSE, {"circuit": "toaster", "check": "function", "parts": ["x"]})
    assert result.status == "error"
