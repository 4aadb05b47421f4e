"""The sbol/<task> families: every task kind x circuit type, seeded, with references that reach
level 5 and defects that fail exactly the level they target, each message naming its check."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sbol3", reason="the sbol extra is not installed")

from environments.base import EnvironmentInputError
from environments.sbol import FAMILY, program
from environments.sbol.bench import bench_task_ids, family_for
from environments.sbol.circuits import GATE_TABLES, draw
from environments.sbol.evaluate import Attempt, aggregate, format_report
from environments.sbol.family import FAMILIES, SbolOptions, SbolTask
from environments.sbol.tasks import TASK_KINDS
from environments.task_id import TaskId
from verifiers.sbol import VERIFIER, document, extract, function, library
from verifiers.sbol.design import CIRCUIT_TYPES, classify
from verifiers.sbol.spec import CircuitSpec

ROOT = Path(__file__).resolve().parent.parent
CELLS = [(family, circuit) for family in FAMILIES for circuit in CIRCUIT_TYPES]
CELL_IDS = [f"{family.kind}-{circuit}" for family, circuit in CELLS]
LEVEL_DEFECTS = {
    "participant": (2, "L2 validity failed: validate() reports"),
    "shuffled": (3, "L3 structure failed: unit "),
    "swapped_production": (4, "L4 semantics failed: genetic production "),
    "flipped": (5, "L5 function failed: "),
}
L5_CHECKS = {
    "function": "stimulates",
    "exact": "the regulatory graph differs from the intended one",
    "isomorphic": "the topology differs",
}

ENVIRONMENTS = FAMILY.load().environments


def _task(family: Any, circuit: str, seed: int, **options: Any) -> SbolTask:
    task = family.generate(seed, SbolOptions(circuit=circuit, **options))
    assert isinstance(task, SbolTask)
    return task


def _in_process(source: str, reference: dict[str, Any]) -> int:
    """Levels passed by one of our own reference programs, run in this process (it is trusted
    text; model code only ever runs in the sandbox): the same checks as the verifier's."""
    namespace: dict[str, Any] = {"__name__": "reference"}
    exec(compile(source, "reference.py", "exec"), namespace)
    text = namespace["doc"].write_string("sorted nt")
    doc, problem = document.load(text)
    assert doc is not None, problem
    assert document.check(doc) == ""
    spec = CircuitSpec.model_validate(reference)
    index, units = extract.structure(doc, spec)
    function.check(extract.semantics(index, units), spec)
    return 5


def test_six_environments_with_plain_metadata() -> None:
    assert [env.spec.id for env in ENVIRONMENTS] == [f"sbol/{kind}" for kind in TASK_KINDS]
    for family in FAMILIES:
        assert type(family).__dict__["id"] == family.id  # a plain class attribute
        assert family.verifier is VERIFIER
        assert family.options_model is SbolOptions


@pytest.mark.parametrize(("family", "circuit"), CELLS, ids=CELL_IDS)
def test_every_cell_reference_reaches_level_5_and_each_defect_fails_its_level(
    family: Any, circuit: str
) -> None:
    """Through the real verifier (sandbox included): the reference, junk, and one defect per
    level 2-5, each failing exactly there."""
    task = _task(family, circuit, 2, difficulty="hard", split="ood")
    result = VERIFIER(family.expert_response(task), task.reference)
    assert (result.status, result.reward) == ("ok", 1.0), result.detail
    junk = VERIFIER("print('all five levels pass')", task.reference)
    assert (junk.reward, junk.detail[:22]) == (0.0, "L1 execution failed: t")
    assert task.answer is not None
    spec = CircuitSpec.model_validate(task.reference)
    for defect, (level, start) in LEVEL_DEFECTS.items():
        broken = program.inject(task.answer, defect, random.Random(3))  # type: ignore[arg-type]
        result = VERIFIER(f"```python\n{broken}```", task.reference)
        assert result.metrics["levels_passed"] == level - 1, (defect, result.detail)
        assert result.detail.startswith(start), (defect, result.detail)
        if level == 5:
            assert L5_CHECKS[spec.check] in result.detail, result.detail


@pytest.mark.parametrize(("family", "circuit"), CELLS, ids=CELL_IDS)
def test_references_reach_level_5_on_many_seeds(family: Any, circuit: str) -> None:
    """Six more seeds over every difficulty and split (levels 2-5 in process: see
    ``_in_process``; the test above runs the same programs in the sandbox)."""
    for seed in range(100, 106):
        difficulty, split = ("easy", "medium", "hard")[seed % 3], ("id", "ood")[seed % 2]
        task = _task(family, circuit, seed, difficulty=difficulty, split=split)
        assert task.answer is not None
        assert _in_process(program.render(task.answer), task.reference) == 5


def test_every_defect_fails_its_level_on_every_circuit() -> None:
    for circuit in CIRCUIT_TYPES:
        family = FAMILIES[1]  # repair: the exact check
        task = _task(family, circuit, 5, difficulty="hard")
        assert task.answer is not None
        for defect, level in program.DEFECTS.items():
            broken = program.inject(task.answer, defect, random.Random(7))
            result = VERIFIER(f"```python\n{broken}```", task.reference)
            assert result.metrics["levels_passed"] == level - 1, (circuit, defect, result.detail)
            assert result.detail.startswith(f"L{level} "), result.detail


def test_repair_tasks_carry_a_defect_of_their_difficulty() -> None:
    family = FAMILIES[1]
    levels = {"easy": {1, 2}, "medium": {3, 4}, "hard": {4, 5}}
    for difficulty, expected in levels.items():
        for seed in range(6):
            task = _task(family, "cascade", seed, difficulty=difficulty)
            defect = str(task.metadata["defect"])
            assert program.DEFECTS[defect] in expected  # type: ignore[index]
            assert "```python" in str(task.prompt)


def test_completion_prompts_leave_a_todo_and_do_not_pass() -> None:
    family = FAMILIES[2]
    for difficulty in ("easy", "medium", "hard"):
        task = _task(family, "toggle_switch", 4, difficulty=difficulty)
        prompt = str(task.prompt)
        partial = prompt[
            prompt.index("```python\n") + 10 : prompt.index("```", prompt.index("```python\n") + 10)
        ]
        assert "# TODO" in partial
        assert VERIFIER(f"```python\n{partial}```", task.reference).reward < 1.0


def test_topology_tasks_do_not_name_the_type() -> None:
    family = FAMILIES[5]
    for circuit in CIRCUIT_TYPES:
        task = _task(family, circuit, 0)
        assert "circuit" not in task.metadata
        shown = str(task.prompt)
        document = shown[
            shown.index("```turtle") : shown.index("```", shown.index("```turtle") + 3)
        ]
        for word in ("toggle", "repressilator", "cascade", "feed", "gate", "inverter", "nor_"):
            assert word not in document.lower()


def test_splits_keep_held_out_repressors_apart() -> None:
    for family, circuit in CELLS:
        for seed in range(3):
            inside = _task(family, circuit, seed, split="id")
            outside = _task(family, circuit, seed, split="ood")
            assert inside.answer is not None and outside.answer is not None
            assert not set(inside.answer.repressors) & library.HELD_OUT
            assert set(outside.answer.repressors) & library.HELD_OUT
            assert not set(inside.reference["parts"]) & library.HELD_OUT  # type: ignore[index]
            for name in library.HELD_OUT:
                assert name not in str(inside.prompt)


def test_blueprints_are_what_they_say() -> None:
    for circuit in CIRCUIT_TYPES:
        for difficulty in ("easy", "medium", "hard"):
            for seed in range(20):
                rng = random.Random(f"test/{circuit}/{difficulty}/{seed}")
                blueprint = draw(circuit, rng, difficulty, "id")  # type: ignore[arg-type]
                assert classify(blueprint.design, blueprint.inputs) == circuit
                if blueprint.gate is not None:
                    assert tuple(blueprint.truth_table() or ()) == GATE_TABLES[blueprint.gate]


def test_same_seed_same_task_in_another_process() -> None:
    code = (
        "import json\n"
        "from environments.sbol.family import FAMILIES, SbolOptions\n"
        "print(json.dumps([[str(t.prompt), t.reference] for t in (f.generate(9, SbolOptions("
        "difficulty='hard', split='ood')) for f in FAMILIES)]))\n"
    )
    here = [
        [str(t.prompt), t.reference]
        for t in (f.generate(9, SbolOptions(difficulty="hard", split="ood")) for f in FAMILIES)
    ]
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin"},
    )
    assert json.loads(done.stdout) == json.loads(json.dumps(here))


def test_task_ids_score_through_the_environment() -> None:
    environment = ENVIRONMENTS[0]
    options = environment.spec.options_model.model_validate({"circuit": "logic_gate"})
    reset = environment.reset(3, options)
    expert = environment.expert_action(reset.state)
    assert environment.score_response(3, options, expert).reward == 1.0
    task_id = TaskId.format("sbol/design", "1", 3, {"circuit": "logic_gate"})
    family, seed, parsed = family_for(task_id)
    assert (family, seed, parsed.circuit) == (FAMILIES[0], 3, "logic_gate")


def test_a_retry_shows_the_failed_level_and_the_next_try_can_pass() -> None:
    environment = ENVIRONMENTS[1]  # repair
    options = environment.spec.options_model.model_validate(
        {"circuit": "toggle_switch", "max_attempts": 3}
    )
    state = environment.reset(2, options).state
    task = FAMILIES[1].generate(2, SbolOptions(circuit="toggle_switch"))
    assert task.answer is not None
    flipped = program.inject(task.answer, "flipped", random.Random(0))
    first = environment.step(state, f"```python\n{flipped}```")
    assert not first.terminated
    assert first.observation.startswith("Attempt 1 of 3 was not accepted: L5 function failed: ")
    second = environment.step(first.state, environment.expert_action(first.state))
    assert second.terminated and second.score.reward == 1.0


def test_bench_split_ids() -> None:
    for split in ("id", "ood"):
        ids = bench_task_ids(split)  # type: ignore[arg-type]
        assert len(ids) == len(set(ids)) == 6 * 6 * 10
        assert all(TaskId.parse(i).options["split"] == split for i in ids)


def test_the_evaluator_aggregates_best_tries() -> None:
    attempts = [
        Attempt("a", "design", "not_gate", "id", 5),
        Attempt("a", "design", "not_gate", "id", 2),
        Attempt("b", "design", "not_gate", "id", 3),
        Attempt("c", "repair", "toggle_switch", "ood", 5),
    ]
    report = aggregate(attempts)
    assert report.cells == {"not_gate": {"design": 50.0}, "toggle_switch": {"repair": 100.0}}
    assert report.splits == {"id": 50.0, "ood": 100.0}
    assert report.overall == pytest.approx(66.7)
    assert report.levels["L1_execution"] == 100.0 and report.levels["L5_function"] == 50.0
    assert "not_gate" in format_report(report)


def test_the_evaluator_reads_answers(tmp_path: Path) -> None:
    rows = []
    for task_id in bench_task_ids("ood", per_cell=1)[::9]:
        family, seed, options = family_for(task_id)
        task = family.generate(seed, options)  # type: ignore[attr-defined]
        rows.append({"task_id": task_id, "responses": ["print(1)", family.expert_response(task)]})  # type: ignore[attr-defined]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(row) + "\n" for row in rows))
    command = [sys.executable, "-c", "from envserver.cli import main; main()", "sbol", "evaluate"]
    run = subprocess.run(
        [*command, str(answers), "--json"], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["overall"] == 100.0 and report["tasks"] == len(rows)
    assert report["levels"]["L1_execution"] == 50.0
    answers.write_text('{"task_id": "opt/tsp@1/1", "response": "x"}\n')
    bad = subprocess.run([*command, str(answers)], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("error:")
    assert asdict(aggregate([]))["tasks"] == 0


BY_ID = {family.id: family for family in FAMILIES}


@pytest.mark.parametrize("kind", ["design", "completion"])
@pytest.mark.parametrize("circuit", ["feed_forward_loop", "logic_gate"])
def test_activation_variants_reach_level_5_and_name_their_parts(kind: str, circuit: str) -> None:
    """The activator variants (coherent and incoherent loops, the AND of two activators): the
    reference passes, the prompt lists the activators, hybrid promoters and inducers."""
    family = BY_ID[f"sbol/{kind}"]
    kinds = set()
    for seed in range(4):
        task = family.generate(seed, SbolOptions(circuit=circuit, activation=True))
        result = VERIFIER(family.expert_response(task), task.reference)
        assert (result.status, result.reward) == ("ok", 1.0), result.detail
        assert task.reference["activation"] is True
        kinds.add(task.reference.get("feed_forward"))
        assert "activators (CDS → the promoter it activates): AraC → pBAD" in task.prompt
        assert "pBAD_pLux (+AraC, +LuxR)" in task.prompt
    if circuit == "feed_forward_loop" and kind == "design":
        assert kinds == {"coherent", "incoherent"}


def test_activation_is_refused_where_no_variant_exists() -> None:
    with pytest.raises(EnvironmentInputError, match="offered for sbol/design and sbol/completion"):
        BY_ID["sbol/repair"].generate(0, SbolOptions(circuit="logic_gate", activation=True))
    with pytest.raises(EnvironmentInputError, match="not toggle_switch"):
        BY_ID["sbol/design"].generate(0, SbolOptions(circuit="toggle_switch", activation=True))
    with pytest.raises(EnvironmentInputError, match="no held-out split"):
        BY_ID["sbol/design"].generate(
            0, SbolOptions(circuit="logic_gate", activation=True, split="ood")
        )
