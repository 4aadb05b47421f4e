"""The NL2SVA environments as single-turn task families: FVEval's two sets and the generator."""

from __future__ import annotations

from environments.base import EnvironmentUnavailable
from environments.single_turn import Task, TaskFamily
from environments.sva.generator import LEVELS, GeneratedOptions, generate_task
from environments.sva.loader import DATA_ENV, DataUnavailable, Split, dataset
from environments.sva.prompt import fenced, nl2sva_prompt
from verifiers.base import Unavailable
from verifiers.numbers import Options
from verifiers.sva import NL2SVA

VERSION = "1"
_DATA_FIX = f"check the files {DATA_ENV} names, or unset it to serve the packaged sets"


class DatasetOptions(Options):
    """A dataset task is selected by its seed alone."""


ACTION_FORMAT = (
    "An SVA assertion, `assert property (@(posedge clk) ...);`, in a ```systemverilog fenced "
    "block (the first block holding an assertion is read; bare text is read too)."
)


class Nl2SvaDataset(TaskFamily[DatasetOptions]):
    """FVEval NL2SVA-Human or -Machine: seed ``s`` is served row ``s mod n`` (rows that do not
    parse or are tautologies are not served; ``environments.sva.loader`` reports them)."""

    version = VERSION
    verifier = NL2SVA
    action_format = ACTION_FORMAT
    observation_format = "chat"

    def __init__(self, split: Split) -> None:
        self.split = split
        self.id = f"sva/nl2sva-{split}"
        what = (
            "79 human-written tasks over 13 testbenches (arbiters, FIFOs, RAM, counters, FSMs)"
            if split == "human"
            else "300 synthetic tasks over free signals sig_A..sig_J"
        )
        self.description = (
            f"FVEval NL2SVA-{split.capitalize()}: {what}. Translate an English sentence "
            "into an SVA assertion; scored by design-free property equivalence with the "
            "reference (1 equivalent, partial credit one-way, 0 otherwise)."
        )

    def generate(self, seed: int, options: DatasetOptions) -> Task:
        """The row seed ``seed`` names, its FVEval prompt and its reference."""
        try:
            rows = dataset(self.split).rows
        except DataUnavailable as exc:  # the server's data, not the caller's input
            raise EnvironmentUnavailable(Unavailable(str(exc), _DATA_FIX)) from None
        row = rows[seed % len(rows)]
        human = self.split == "human"
        return Task(
            prompt=nl2sva_prompt(row.sentence, row.testbench if human else None, human=human),
            reference={
                "assertion": row.reference,
                "testbench": row.testbench,
                "signals": None if row.signals is None else list(row.signals),
                "widths": None,
            },
            metadata={
                "fveval_task": row.name,
                "signals": list(row.mentioned),
            },
        )

    def expert_response(self, task: Task) -> str:
        """The reference assertion in the requested format."""
        return fenced(task.reference["assertion"])


class GeneratedFamily(TaskFamily[GeneratedOptions]):
    """Seeded NL2SVA-Machine-style tasks (``environments.sva.generator``)."""

    id = "sva/generated"
    version = VERSION
    description = (
        "Generated NL2SVA tasks in NL2SVA-Machine's style: a random well-formed property "
        "over sig_A..sig_J with declared widths, rendered to English by templates, with "
        "bounded delays (##[m:n], |-> vs |=>) and liveness (s_eventually, strong(##[0:$]), "
        f"until) over-represented; levels {', '.join(LEVELS)} (option 'level'). Every "
        "reference parses and is neither a tautology nor vacuous."
    )
    verifier = NL2SVA
    action_format = ACTION_FORMAT
    observation_format = "chat"

    def generate(self, seed: int, options: GeneratedOptions) -> Task:
        """The task ``(seed, level)`` names."""
        generated = generate_task(seed, options.level, VERSION)
        return Task(
            prompt=nl2sva_prompt(generated.sentence, generated.testbench, human=False),
            reference={
                "assertion": generated.assertion,
                "testbench": generated.testbench,
                "signals": [name for name, _ in generated.widths],
                "widths": None,
            },
            metadata={
                "level": generated.level,
                "form": generated.form,
                "widths": dict(generated.widths),
            },
        )

    def expert_response(self, task: Task) -> str:
        """The reference assertion in the requested format."""
        return fenced(task.reference["assertion"])


__all__ = ["DatasetOptions", "GeneratedFamily", "Nl2SvaDataset"]
