"""SBOL circuit verification: warm sandbox workers against a cold interpreter per rollout.

Side by side in one run, on the same rollouts (the reference programs of benchmark tasks, one
per task kind x circuit type): verified rollouts per second

- **warm**: the service's path, ``verifiers.sbol.check``: the program runs in a sandbox worker
  that imported pySBOL3 once (``python-sbol3``), then levels 2-5 run in this process, whose
  SHACL shapes are parsed once;
- **cold**: one fresh interpreter per rollout that imports pySBOL3 and the verifier, runs the
  same wrapper around the program and the same levels 2-5 (what one process per rollout pays);

and, for the warm path, the share of time spent in validation (reading the document back,
SHACL, closure) and pySBOL3's own ``Document.validate`` on the same documents for
comparison. Target (issue 16): warm >= 5x cold.

    .venv/bin/python -m benchmarks.sbol_verify [--per-cell 1] [--rounds 2] [--no-sequences]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from environments.sbol import program
from environments.sbol.family import FAMILIES, SbolOptions
from sandbox import default as default_sandbox
from sandbox.model import Limits
from verifiers.sbol import VERIFIER, document, execution, extract, function
from verifiers.sbol.design import CIRCUIT_TYPES
from verifiers.sbol.spec import CircuitSpec

COLD = """
import json, os, sys, tempfile
payload = json.loads(sys.stdin.read())
import sbol3
from verifiers.sbol import document, execution, extract, function
from verifiers.sbol.spec import CircuitSpec
spec = CircuitSpec.model_validate(payload["spec"])
os.chdir(tempfile.mkdtemp())
with open(execution.PROGRAM_FILE, "w") as handle:
    handle.write(payload["source"])
try:
    exec(compile(execution.WRAPPER, "main.py", "exec"), {"__name__": "__main__"})
except SystemExit:
    pass
levels = 0
if os.path.exists(execution.DOCUMENT_FILE):
    doc, problem = document.load(open(execution.DOCUMENT_FILE).read())
    if doc is not None and not document.check(doc):
        index, units = extract.structure(doc, spec)
        function.check(extract.semantics(index, units), spec)
        levels = 5
print(json.dumps({"levels": levels}))
"""


def rollouts(per_cell: int, *, sequences: bool = True) -> list[tuple[str, dict[str, object]]]:
    """``(program, spec)`` of reference answers over every task kind x circuit type (with or
    without the parts' sequences: the prompts call them optional)."""
    items = []
    for family in FAMILIES:
        for circuit in CIRCUIT_TYPES:
            for seed in range(per_cell):
                task = family.generate(seed, SbolOptions(circuit=circuit))
                assert task.answer is not None
                source = program.render(task.answer, sequences=sequences)
                items.append((source, dict(task.reference)))  # type: ignore[arg-type]
    return items


def warm(items: list[tuple[str, dict[str, object]]]) -> tuple[float, float, float]:
    """Seconds for all items through the verifier; seconds in level 2; pySBOL3's validate."""
    started = time.perf_counter()
    for source, spec in items:
        score = VERIFIER(f"```python\n{source}```", spec)
        assert score.reward == 1.0, score.detail
    total = time.perf_counter() - started
    validation = native = 0.0
    sandbox = default_sandbox()
    for source, spec in items:
        text = execution.run(source, limits=Limits(), sandbox=sandbox).document
        assert text is not None
        began = time.perf_counter()
        doc, problem = document.load(text)
        assert doc is not None, problem
        assert not document.check(doc)
        validation += time.perf_counter() - began
        index, units = extract.structure(doc, CircuitSpec.model_validate(spec))
        function.check(extract.semantics(index, units), CircuitSpec.model_validate(spec))
        began = time.perf_counter()
        assert not document.read(text).validate().errors
        native += time.perf_counter() - began
    return total, validation, native


def cold(items: list[tuple[str, dict[str, object]]]) -> float:
    """Seconds for all items, one fresh interpreter each."""
    root = str(Path(__file__).resolve().parent.parent)
    started = time.perf_counter()
    for source, spec in items:
        done = subprocess.run(
            [sys.executable, "-c", COLD],
            input=json.dumps({"source": source, "spec": spec}),
            capture_output=True,
            text=True,
            check=True,
            cwd=tempfile.gettempdir(),
            env={"PYTHONPATH": root, "PATH": "/usr/bin:/bin"},
        )
        assert json.loads(done.stdout)["levels"] == 5, done.stderr[-500:]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-cell", type=int, default=1, help="tasks per kind x circuit type")
    parser.add_argument("--rounds", type=int, default=2, help="alternating warm/cold rounds")
    parser.add_argument(
        "--no-sequences", action="store_true", help="programs without the parts' sequences"
    )
    args = parser.parse_args()
    items = rollouts(args.per_cell, sequences=not args.no_sequences)
    for source, spec in items[:4]:  # every sandbox worker imports pySBOL3 once, before timing
        VERIFIER(f"```python\n{source}```", spec)
    warm_s = cold_s = validation_s = native_s = 0.0
    for _ in range(args.rounds):
        total, validation, native = warm(items)
        warm_s += total
        validation_s += validation
        native_s += native
        cold_s += cold(items)
    count = len(items) * args.rounds
    kind = "without" if args.no_sequences else "with"
    print(
        f"{count} verified rollouts per side ({len(items)} programs {kind} sequences x "
        f"{args.rounds} rounds)"
    )
    print(f"warm  {count / warm_s:7.2f} rollouts/s  ({1000 * warm_s / count:6.1f} ms each)")
    print(f"cold  {count / cold_s:7.2f} rollouts/s  ({1000 * cold_s / count:6.1f} ms each)")
    print(f"warm / cold: {cold_s / warm_s:.2f}x")
    print(
        f"validation (level 2) in the warm path: {1000 * validation_s / count:.1f} ms per "
        f"rollout, {100 * validation_s / warm_s:.0f}% of its time; pySBOL3's own "
        f"Document.validate on the same documents: {1000 * native_s / count:.1f} ms"
    )


if __name__ == "__main__":
    main()
