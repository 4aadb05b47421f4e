"""Tamarin proofs: a proof script for a lemma of a security-protocol theory, checked by a real
``tamarin-prover`` in batch mode.

The reference of an item is ``{"theory": <.spthy text>, "lemma": <name>}``; the response is a
proof script in Tamarin's syntax (the last fenced block if there is one), e.g.::

    simplify
    solve( Client_1( S, k ) ▶₀ #i )
      case Client_1
      by contradiction /* from formulas */
    qed

The script is parsed here first (a malformed script is ``invalid`` without running anything and
nothing but a proof can enter the theory), put into the theory at the lemma and replayed by
``tamarin-prover FILE``. Reward 1 when Tamarin decides the lemma with it (verified, or falsified
by a found trace) with no step it had to mark invalid; else 0, with Tamarin's status as
components and the step count and proof size as metrics. Without a prover binary the check is
an infrastructure ``error``, never 0.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from verifiers.base import Verifier
from verifiers.numbers import Options
from verifiers.score import Score
from verifiers.tamarin.batch import (
    BatchVerdict,
    ProofRejected,
    ProverFailed,
    check_proof,
)
from verifiers.tamarin.proof import ProofSyntaxError, ProofTree, parse_proof
from verifiers.tamarin.prover import ProverNotFound, locate_prover
from verifiers.tamarin.theory import TheoryError, UnknownLemma, parse_theory

# The last fenced block, with any language tag; the closing fence may be cut off.
_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


class TamarinReference(BaseModel):
    """A theory and the lemma to prove in it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    theory: str = Field(description="The theory's .spthy text.")
    lemma: str = Field(description="The lemma whose proof the response is.")


class TamarinOptions(Options):
    """Limits of the check."""

    prover_timeout_s: float = Field(
        50.0, gt=0, le=55, description="Wall-clock limit of the tamarin-prover run, seconds."
    )


def extract_proof(response: str) -> str:
    """The proof script of a response: its last fenced block, else the whole text."""
    blocks = _FENCE.findall(response)
    return (blocks[-1] if blocks else response).strip()


def _score(verdict: BatchVerdict, tree: ProofTree) -> Score:
    """Reward 1 only for a proof Tamarin accepts as deciding the lemma."""
    decided = tree.is_complete or tree.found_trace
    reward = 1.0 if verdict.proven and decided else 0.0
    detail = f"Tamarin: {verdict.status}"
    if verdict.steps is not None:
        detail += f" ({verdict.steps} steps)"
    if verdict.invalid_step:
        detail += "; a proof step does not apply where it is used"
    if verdict.invalid_case:
        detail += "; a case name is not one the method produces"
    if verdict.status == "incomplete" and not (verdict.invalid_step or verdict.invalid_case):
        detail += "; the proof leaves goals open"
    return Score.ok(
        reward,
        components={
            "verified": float(verdict.status == "verified"),
            "falsified": float(verdict.status == "falsified"),
            "proven": float(verdict.proven),
            "complete": float(tree.is_complete),
            "invalid_step": float(verdict.invalid_step),
            "invalid_case": float(verdict.invalid_case),
        },
        detail=detail,
        extra={"status": verdict.status},
        metrics={
            "steps": float(verdict.steps if verdict.steps is not None else -1),
            "size": float(tree.size),
        },
    )


def _inputs(response: str, reference: Any) -> tuple[TamarinReference, ProofTree] | Score:
    """The reference and the parsed script, or the Score that ends the check early."""
    try:
        ref = TamarinReference.model_validate(reference)
        parse_theory(ref.theory).require_lemma(ref.lemma)
    except ValidationError as exc:
        return Score.bad_reference(
            f"the reference is not a Tamarin reference: {exc.errors()[0]['msg']}"
        )
    except (TheoryError, UnknownLemma) as exc:
        return Score.bad_reference(f"the reference theory is refused: {exc}")
    script = extract_proof(response)
    if not script:
        return Score.invalid("no proof script in the response")
    try:
        return ref, parse_proof(script)
    except ProofSyntaxError as exc:
        return Score.invalid(f"the proof does not parse: {exc}"[:300])


def check(response: str, reference: Any, options: TamarinOptions) -> Score:
    """Check the response's proof script for the reference's lemma with tamarin-prover."""
    inputs = _inputs(response, reference)
    if isinstance(inputs, Score):
        return inputs
    ref, tree = inputs
    try:
        verdict = check_proof(ref.theory, ref.lemma, tree, timeout_s=options.prover_timeout_s)
    except ProverNotFound as exc:  # infrastructure: never a reward of 0
        return Score.error(str(exc))
    except TimeoutError as exc:
        return Score.timeout(str(exc))
    except ProofRejected as exc:
        return Score.invalid(f"{exc}"[:300])
    except (ProverFailed, TheoryError, UnknownLemma, OSError) as exc:
        return Score.error(f"the check could not run: {exc}"[:300])
    return _score(verdict, tree)


# An own small theory whose lemma the empty trace satisfies. Its proof has not been replayed
# by a real binary on the machines this was written on (none has Tamarin), so the example only
# exists where a prover does: the contract tests and the worker warm-up then check it. Whether
# one does is a look on PATH, not a run: this module is imported by the pool's fork server,
# where nothing may start (see verifiers/tamarin/prover.py).
EXAMPLE_THEORY = """theory QuietStart begin

rule Start:
  [ Fr(~n) ] --[ Started(~n) ]-> [ ]

lemma nothing_needs_to_start:
  exists-trace
  "All n #i. Started(n) @ #i ==> F"

end
"""
EXAMPLE_PROOF = "simplify\nSOLVED // trace found"

VERIFIER = Verifier(
    name="tamarin.proof",
    version="1",
    description="Tamarin proof scripts: the response's script is put into the reference "
    "theory at the lemma and replayed by tamarin-prover in batch mode. Reward 1 when Tamarin "
    "decides the lemma with it (verified or falsified) with no invalid step or case; needs a "
    "tamarin-prover binary (status error without one).",
    check=check,
    options_model=TamarinOptions,
    timeout_s=60.0,
    components=(
        "verified",
        "falsified",
        "proven",
        "complete",
        "invalid_step",
        "invalid_case",
    ),
    metrics=("steps", "size"),
    example=(
        (
            f"```\n{EXAMPLE_PROOF}\n```",
            {"theory": EXAMPLE_THEORY, "lemma": "nothing_needs_to_start"},
        )
        if locate_prover() is not None
        else None
    ),
)

INSTALL_FIX = (
    "put tamarin-prover 1.8 or later on PATH, or set TAMARIN_PROVER to its path (release "
    "binaries, Homebrew, Nix, a container image: environments/tamarin/README.md, "
    "'Installing Tamarin')"
)
"""What the catalogue says enables the verifier where no prover is found (the family's
declaration withholds it then); the README's section names every way."""
