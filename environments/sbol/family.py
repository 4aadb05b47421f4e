"""The SBOL task families: one single-turn environment per task kind (``sbol/<kind>``)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from environments.base import EnvironmentInputError
from environments.sbol import program
from environments.sbol.circuits import ACTIVATED, Blueprint, Difficulty, Split, draw
from environments.sbol.tasks import BUILDERS, TaskKind
from environments.single_turn import Task, TaskFamily
from verifiers.numbers import Options
from verifiers.sbol import VERIFIER
from verifiers.sbol.design import CIRCUIT_TYPES, CircuitType

VERSION = "1"
ACTION = (
    "One complete Python program in a ```python block that builds the circuit with pySBOL3 and "
    "leaves the SBOL3 document in a module-level variable named doc."
)


CircuitChoice = Literal[
    "any", "not_gate", "toggle_switch", "repressilator", "cascade", "feed_forward_loop",
    "logic_gate",
]  # fmt: skip


class SbolOptions(Options):
    """What selects a task besides its seed."""

    circuit: CircuitChoice = Field(
        "any", description="The circuit type; 'any' draws one of the six from the seed."
    )
    difficulty: Difficulty = Field(
        "medium",
        description="Circuit size (cascade 2/3/4 repressors, repressilator 3/3+reporter/5, "
        "gates NOR-NAND/OR-AND/NIMPLY-XNOR) and task hardness (repair: syntactic, structural, "
        "semantic bugs; completion: one regulation, a unit, every interaction).",
    )
    split: Split = Field(
        "id",
        description="'id': in-distribution repressors only; 'ood': every circuit uses at least "
        "one held-out repressor (AmtR, HlyIIR, LitR, PsrA), as Cello-OOD.",
    )
    activation: bool = Field(
        False,
        description="Circuits with activators, inducers and hybrid promoters: coherent and "
        "incoherent feed-forward loops, an AND gate of two activators (design and completion "
        "tasks, split 'id').",
    )


ACTIVATED_KINDS: tuple[TaskKind, ...] = ("design", "completion")


@dataclass(frozen=True)
class SbolTask(Task):
    """A task that also holds its reference circuit (for ``expert_response``; never sent)."""

    answer: Blueprint | None = None


class _SbolTasks(TaskFamily[SbolOptions]):
    """Shared generation: the circuit, then the task kind's builder."""

    kind: TaskKind
    version = VERSION
    verifier = VERIFIER
    action_format = ACTION

    def generate(self, seed: int, options: SbolOptions) -> SbolTask:
        """The task ``(seed, options)`` names, identical in every process."""
        types = tuple(ACTIVATED) if options.activation else CIRCUIT_TYPES
        circuit: CircuitType = (
            random.Random(f"{self.id}@{VERSION}/{seed}/circuit").choice(types)
            if options.circuit == "any"
            else options.circuit
        )
        if options.activation:
            _check_activation(self.kind, circuit, options)
        variant = "/activation" if options.activation else ""  # old task ids keep their draws
        rng = random.Random(
            f"{self.id}@{VERSION}/{seed}/{circuit}/{options.difficulty}/{options.split}{variant}"
        )
        blueprint = draw(
            circuit, rng, options.difficulty, options.split, activation=options.activation
        )
        built = BUILDERS[self.kind](blueprint, rng, options.difficulty, options.split)
        metadata: dict[str, Any] = {
            "task": self.kind,
            "difficulty": options.difficulty,
            "split": options.split,
            **built.metadata,
        }
        if self.kind != "topology":  # there, naming the type would give the answer away
            metadata["circuit"] = circuit
        return SbolTask(
            prompt=built.prompt,
            reference=built.spec.model_dump(mode="json"),
            metadata=metadata,
            answer=built.answer,
        )

    def expert_response(self, task: Task) -> str:
        """The reference program in a fenced block."""
        if not isinstance(task, SbolTask) or task.answer is None:
            raise TypeError("expert_response needs a task this family generated")
        return f"```python\n{program.render(task.answer)}```"


def _check_activation(kind: TaskKind, circuit: CircuitType, options: SbolOptions) -> None:
    if kind not in ACTIVATED_KINDS:
        raise EnvironmentInputError(
            f"activation circuits are offered for sbol/{' and sbol/'.join(ACTIVATED_KINDS)}"
        )
    if circuit not in ACTIVATED:
        raise EnvironmentInputError(
            f"activation variants exist for {' and '.join(ACTIVATED)}, not {circuit}"
        )
    if options.split != "id":
        raise EnvironmentInputError("activation circuits have no held-out split: use split 'id'")


class DesignTasks(_SbolTasks):
    """De novo design from a functional specification."""

    id = "sbol/design"
    kind = "design"
    description = (
        "SBOL genetic circuits (GenCircuit-RL): design a circuit (NOT gate, toggle switch, "
        "repressilator, cascade, feed-forward loop, logic gate) from a functional specification "
        "as a pySBOL3 program; scored by the five-level sbol.circuit verifier."
    )


class RepairTasks(_SbolTasks):
    """Code repair: one bug, the intended circuit shown."""

    id = "sbol/repair"
    kind = "repair"
    description = (
        "SBOL genetic circuits: fix a pySBOL3 program with one bug (execution, validity, "
        "structure, semantics or function) so that it builds the intended circuit."
    )


class CompletionTasks(_SbolTasks):
    """Code completion: fill in what a TODO marks."""

    id = "sbol/completion"
    kind = "completion"
    description = (
        "SBOL genetic circuits: complete a pySBOL3 program with a regulation, a transcription "
        "unit or every interaction left out, so that it builds the intended circuit."
    )


class SubstitutionTasks(_SbolTasks):
    """Part substitution: swap repressors, keep the rest."""

    id = "sbol/substitution"
    kind = "substitution"
    description = (
        "SBOL genetic circuits: swap one repressor (two at hard) of a working pySBOL3 program "
        "for another, with its promoter and regulation, keeping the circuit's function."
    )


class AssignmentTasks(_SbolTasks):
    """Gate assignment: an abstract netlist onto a repressor pool."""

    id = "sbol/assignment"
    kind = "assignment"
    description = (
        "SBOL genetic circuits: assign distinct repressors from a pool to an abstract netlist "
        "(Cello's gate assignment) and build the circuit as a pySBOL3 program."
    )


class TopologyTasks(_SbolTasks):
    """Topology identification: rebuild a circuit shown only as SBOL with new repressors."""

    id = "sbol/topology"
    kind = "topology"
    description = (
        "SBOL genetic circuits: identify the topology of a circuit given as an SBOL3 document "
        "(Turtle) and rebuild it with other repressors as a pySBOL3 program."
    )


FAMILIES = (
    DesignTasks(), RepairTasks(), CompletionTasks(), SubstitutionTasks(), AssignmentTasks(),
    TopologyTasks(),
)  # fmt: skip
