"""Proof scripts inside theories: where a lemma's proof sits, reading it, replacing it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifiers.tamarin.proof import ProofTree, parse_proof, parse_proof_at, render_proof
from verifiers.tamarin.theory import TheoryError, UnknownLemma, strip_comments

# Words a proof can begin with; no other top-level item of a theory begins with one.
_PROOF_START = re.compile(
    r"(?:by|SOLVED|sorry|simplify|solve|contradiction|induction|INVALIDATED|UNFINISHABLE)\b"
)
_QUANTIFIER = re.compile(r"\s*(?:all-traces|exists-trace)?\s*")


@dataclass(frozen=True)
class ProofSlot:
    """Where a lemma's proof goes in a theory text: a new proof is inserted at ``start``
    (after the formula and Tamarin's ``/* guarded formula … */`` comment), replacing
    ``text[start:end]`` (empty when the lemma has no proof yet)."""

    start: int
    end: int
    existing: ProofTree | None


def _header(lemma: str) -> re.Pattern[str]:
    return re.compile(
        rf"^[ \t]*lemma[ \t\r\n]+{re.escape(lemma)}\s*(?:\[[^\]\"]*\])?\s*:", re.MULTILINE
    )


def _skip_blanks(text: str, pos: int) -> tuple[int, int]:
    """Skip whitespace and comments from ``pos``: the first offset after them, and the offset
    after the last ``/* guarded formula … */`` comment directly after ``pos`` (else ``pos``)."""
    after_guarded, guarded_run = pos, True
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
        elif text.startswith("/*", pos):
            end = text.find("*/", pos + 2)
            end = len(text) if end < 0 else end + 2
            # Tamarin prints the guarded formula after the lemma's; a proof follows it.
            if guarded_run and text[pos + 2 : end].lstrip().startswith("guarded formula"):
                after_guarded = end
            else:
                guarded_run = False
            pos = end
        elif text.startswith("//", pos):
            guarded_run = False
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
        else:
            break
    return pos, after_guarded


def find_proof_slot(theory_text: str, lemma: str) -> ProofSlot:
    """Locate ``lemma``'s proof in ``theory_text`` (an original theory or one Tamarin printed).

    Raises UnknownLemma when there is no such lemma, TheoryError when its formula or its
    existing proof cannot be read.
    """
    bare = strip_comments(theory_text)
    header = _header(lemma).search(bare)
    if header is None:
        raise UnknownLemma(f"the theory has no lemma {lemma!r}")
    before = _QUANTIFIER.match(bare, header.end())
    assert before is not None  # every part of the pattern is optional
    if not bare.startswith('"', before.end()):
        raise TheoryError(f"lemma {lemma}: expected its formula in double quotes")
    close = bare.find('"', before.end() + 1)
    if close < 0:
        raise TheoryError(f"lemma {lemma}: its formula has no closing quote")
    pos, after_guarded = _skip_blanks(theory_text, close + 1)
    if not _PROOF_START.match(theory_text, pos):
        return ProofSlot(after_guarded, after_guarded, None)
    try:
        tree, end = parse_proof_at(theory_text, pos, 1 + theory_text.count("\n", 0, pos))
    except ValueError as exc:
        raise TheoryError(f"lemma {lemma}: its proof does not parse: {exc}") from None
    return ProofSlot(pos, end, tree)


def lemma_proof(theory_text: str, lemma: str) -> ProofTree | None:
    """The proof written in the theory for ``lemma``, or None when it has none."""
    return find_proof_slot(theory_text, lemma).existing


def insert_proof(theory_text: str, lemma: str, proof: str | ProofTree) -> str:
    """``theory_text`` with ``proof`` as ``lemma``'s proof, after the formula (and Tamarin's
    guarded-formula comment), replacing any proof there (such as ``by sorry``).

    A script is parsed first and inserted in Tamarin's own layout, so nothing but a proof can
    enter the theory. Raises UnknownLemma, ProofSyntaxError, TheoryError.
    """
    tree = parse_proof(proof) if isinstance(proof, str) else proof
    script = render_proof(tree)
    slot = find_proof_slot(theory_text, lemma)
    if slot.existing is not None:
        return theory_text[: slot.start] + script + theory_text[slot.end :]
    rest = theory_text[slot.start :]
    tail = "" if rest.startswith(("\n", "\r\n")) else "\n"
    return theory_text[: slot.start] + "\n" + script + tail + rest
