"""Checking a proof script with ``tamarin-prover FILE`` (batch mode, reference §5).

Without ``--prove`` Tamarin replays every proof in the file and prints the theory back with the
proofs annotated, then a ``summary of summaries`` block with one line per lemma. It does not
reject a bad script: an inapplicable step becomes ``sorry /* invalid proof step encountered */``
(the rest of that branch marked ``/* unannotated */``), an unknown case name is kept but marked
``/* unannotated */`` and the real case added as ``by sorry``. So a verdict reads both the
summary line and the markers in the lemma's reprinted proof.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sandbox import tools
from verifiers.tamarin.proof import ProofSyntaxError, ProofTree, parse_proof, render_proof
from verifiers.tamarin.prover import Prover, ProverNotFound, find_prover, limits
from verifiers.tamarin.script import find_proof_slot, insert_proof, lemma_proof

BatchStatus = Literal["verified", "falsified", "incomplete", "unfinishable", "invalidated"]

INSTALL_HINT = (
    "install Tamarin (https://tamarin-prover.com/manual/master/book/002_installation.html: "
    "Homebrew `brew install tamarin-prover/tap/tamarin-prover`, Nix, or a release binary with "
    "Maude on PATH) or point TAMARIN_PROVER at the binary"
)
_INVALID_STEP = "invalid proof step encountered"
_UNANNOTATED = "/* unannotated */"
_SUMMARY = "summary of summaries:"
_SUMMARY_LINE = re.compile(
    r"^\s+(?P<lemma>[A-Za-z0-9_]+) \((?:all-traces|exists-trace)\): (?P<status>.*?)"
    r"(?: \((?P<steps>\d+) steps?\))?\s*$",
    re.MULTILINE,
)
# Tamarin's parse errors (parsec) name the place: ``"theory.spthy" (line 12, column 3):``.
_ERROR_PLACE = re.compile(r"\(line (\d+), column \d+\)")
# Top-level items of a reprinted theory: where a lemma's section ends (fallback reading).
_NEXT_ITEM = re.compile(
    r"^(?:lemma|rule|restriction|axiom|diffLemma|end\b|/\* All wellformedness|WARNING|={10})",
    re.MULTILINE,
)


class BatchOutputError(ValueError):
    """The prover's output holds no verdict for the lemma."""


class ProverFailed(RuntimeError):
    """The prover ran but gave no verdict (it refused the theory, or crashed)."""


class ProofRejected(ProofSyntaxError):
    """Tamarin refused the theory at a line of the inserted proof: the script's fault."""


@dataclass(frozen=True)
class BatchVerdict:
    """Tamarin's verdict on one lemma's proof in batch mode.

    ``status`` is the summary line's (``falsified`` covers both an attack on an all-traces
    lemma and a proof that no trace exists for an exists-trace lemma); ``steps`` is Tamarin's
    count (every proof step, ``sorry`` included; None when not printed). ``invalid_step``: the
    reprinted proof holds ``invalid proof step encountered``; ``invalid_case``: it holds a
    ``/* unannotated */`` step outside a branch cut off by an invalid step (an unknown case).
    """

    lemma: str
    status: BatchStatus
    steps: int | None
    invalid_step: bool = False
    invalid_case: bool = False

    @property
    def proven(self) -> bool:
        """Tamarin decided the lemma (verified or falsified) and the script holds no step it
        had to mark as invalid."""
        return self.status in ("verified", "falsified") and not (
            self.invalid_step or self.invalid_case
        )


def _status(text: str) -> BatchStatus:
    if text.startswith("verified"):
        return "verified"
    if text.startswith("falsified"):
        return "falsified"
    if text.startswith("analysis incomplete"):
        return "incomplete"
    if text.startswith("analysis cannot be finished"):
        return "unfinishable"
    if "invalidated" in text:
        return "invalidated"
    raise BatchOutputError(f"unknown lemma status {text!r}")


def _tree_markers(tree: ProofTree) -> tuple[bool, bool]:
    """``(invalid step, invalid case)`` from the reprinted proof. Below an invalid step the
    whole old branch is marked ``/* unannotated */``: that is not an unknown case."""
    invalid_step = invalid_case = False
    stack = [tree]
    while stack:
        node = stack.pop()
        method = node.method or ""
        if _INVALID_STEP in method:
            invalid_step = True
            continue
        if _UNANNOTATED in method:
            invalid_case = True
            continue
        stack.extend(child for _, child in node.cases)
    return invalid_step, invalid_case


def _markers(stdout: str, lemma: str) -> tuple[bool, bool]:
    """The markers in ``lemma``'s reprinted proof only (other lemmas' markers do not count)."""
    begin = re.search(r"^theory\s", stdout, re.MULTILINE)
    theory = stdout[begin.start() :] if begin else stdout
    try:
        tree = lemma_proof(theory, lemma)
    except (ValueError, LookupError):
        tree = None
    else:
        return _tree_markers(tree) if tree is not None else (False, False)
    # The proof did not read back (a layout this parser does not know): fall back to the text
    # from the lemma's header to the next top-level item.
    header = re.search(rf"^lemma\s+{re.escape(lemma)}\b", theory, re.MULTILINE)
    if header is None:
        return False, False
    after = _NEXT_ITEM.search(theory, header.end())
    section = theory[header.end() : after.start() if after else len(theory)]
    invalid_step = _INVALID_STEP in section
    return invalid_step, _UNANNOTATED in section and not invalid_step


def parse_batch_output(stdout: str, lemma: str) -> BatchVerdict:
    """``lemma``'s verdict from the stdout of ``tamarin-prover FILE``: its line in the (last)
    ``summary of summaries`` block, and the markers in its reprinted proof.

    Raises BatchOutputError when there is no summary or no line for the lemma.
    """
    at = stdout.rfind(_SUMMARY)
    if at < 0:
        raise BatchOutputError("the prover printed no 'summary of summaries'")
    for line in _SUMMARY_LINE.finditer(stdout, at):
        if line["lemma"] == lemma:
            steps = int(line["steps"]) if line["steps"] is not None else None
            invalid_step, invalid_case = _markers(stdout[:at], lemma)
            return BatchVerdict(lemma, _status(line["status"]), steps, invalid_step, invalid_case)
    raise BatchOutputError(f"the prover's summary has no line for lemma {lemma!r}")


def check_proof(
    theory_text: str,
    lemma: str,
    proof_text: str | ProofTree,
    *,
    timeout_s: float,
    prover: Prover | None = None,
) -> BatchVerdict:
    """Check ``proof_text`` as ``lemma``'s proof: the theory with the proof inserted is written
    to a private temporary directory and replayed by ``tamarin-prover FILE`` (no ``--prove``,
    so nothing is proved for the script).

    Raises ProverNotFound (no binary), ProofSyntaxError (the script does not parse here, or
    ProofRejected: Tamarin refused it), UnknownLemma/TheoryError, TimeoutError (the prover
    was stopped after ``timeout_s``) and ProverFailed (no verdict for another reason).
    """
    binary = prover or find_prover()
    if binary is None:
        raise ProverNotFound(f"no tamarin-prover binary on this machine: {INSTALL_HINT}")
    tree = parse_proof(proof_text) if isinstance(proof_text, str) else proof_text
    text = insert_proof(theory_text, lemma, tree)
    script = render_proof(tree)
    start = text.find(script, find_proof_slot(theory_text, lemma).start)
    first = text.count("\n", 0, start) + 1
    last = first + script.count("\n")
    with tempfile.TemporaryDirectory(prefix="envserver-tamarin-") as directory:
        name = "theory.spthy"
        (Path(directory) / name).write_text(text, encoding="utf-8")
        run = tools.run([binary.path, name], cwd=directory, timeout_s=timeout_s, limits=limits())
    code, out, err = run.exit_code, run.stdout, run.stderr
    try:
        return parse_batch_output(out, lemma)
    except BatchOutputError as exc:
        message = (err.strip() or out.strip())[-600:]
        place = _ERROR_PLACE.search(err) or _ERROR_PLACE.search(out)
        if place is not None and first <= int(place[1]) <= last:
            raise ProofRejected(
                f"Tamarin refused the proof: {message}", int(place[1]) - first + 1
            ) from None
        raise ProverFailed(f"{binary} gave no verdict (exit {code}; {exc}): {message}") from None
