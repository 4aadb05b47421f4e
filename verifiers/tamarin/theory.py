"""Theory texts: identity (digest), lemma listing, and refusal of what a user may not ask for."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

MAX_THEORY_BYTES = 512 * 1024


class TheoryError(ValueError):
    """The theory text is refused: it does not parse, or it asks for something unsafe."""


class UnknownLemma(LookupError):
    """The theory has no lemma of that name."""


_THEORY = re.compile(r"^\s*theory\s+(?P<name>[A-Za-z0-9_]+)\s+begin\b", re.MULTILINE)
_END = re.compile(r"^\s*end\s*$", re.MULTILINE)
_LEMMA = re.compile(
    r"^[ \t]*lemma\s+(?P<name>[A-Za-z0-9_]+)\s*(?:\[(?P<attrs>[^\]]*)\])?\s*:\s*"
    r"(?P<quantifier>all-traces|exists-trace)?",
    re.MULTILINE,
)
# Tamarin spawns an oracle program named by the theory (``heuristic: o "path"``, per lemma
# ``[heuristic=O]``) for every ranking; a user theory naming one would run a program of its
# choice on the server. ``#include`` reads server files. Both are refused in user theories.
_ORACLE = re.compile(r"heuristic\s*[:=]\s*\"?[A-Za-z{}]*[oO]")
_INCLUDE = re.compile(r"^\s*#\s*include\b", re.MULTILINE)


@dataclass(frozen=True)
class Theory:
    """A theory's text and what identifies it."""

    name: str
    text: str

    @property
    def digest(self) -> str:
        """SHA-256 of the text: a theory's identity in states and caches."""
        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def lemmas(self) -> dict[str, Literal["all-traces", "exists-trace"]]:
        """Lemma names in order with their quantifier (all-traces unless stated), read from the
        text without comments; the prover's own listing is authoritative."""
        found: dict[str, Literal["all-traces", "exists-trace"]] = {}
        for match in _LEMMA.finditer(strip_comments(self.text)):
            found[match["name"]] = (
                "exists-trace" if match["quantifier"] == "exists-trace" else "all-traces"
            )
        return found

    def require_lemma(self, lemma: str) -> None:
        """Raises UnknownLemma, listing the lemmas there are."""
        if lemma not in self.lemmas:
            names = ", ".join(self.lemmas) or "none"
            raise UnknownLemma(f"theory {self.name} has no lemma {lemma!r}; its lemmas: {names}")


def strip_comments(text: str) -> str:
    """``text`` with ``/* … */`` and ``// …`` comments blanked (line breaks kept) outside
    double-quoted formulas and single-quoted constants; offsets are preserved, so a match in
    the result is a match at the same position in ``text``."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in "\"'":
            end = text.find(char, i + 1)
            end = n if end < 0 else end + 1
            out.append(text[i:end])
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        else:
            out.append(char)
            i += 1
    return "".join(out)


def parse_theory(text: str, *, trusted: bool = False) -> Theory:
    """Read a theory's name and check its shape; user theories (``trusted=False``) may not
    name an oracle program or include files.

    Raises TheoryError with a message a user can act on. The prover still parses the theory
    properly when it loads it; this is a guard, not a parser.
    """
    if len(text.encode()) > MAX_THEORY_BYTES:
        raise TheoryError(f"the theory is larger than {MAX_THEORY_BYTES // 1024} KiB")
    if "\x00" in text:
        raise TheoryError("the theory contains a NUL character")
    bare = strip_comments(text)
    header = _THEORY.search(bare)
    if header is None:
        raise TheoryError("no 'theory NAME begin' header: this is not a Tamarin theory")
    if not _END.search(bare, header.end()):
        raise TheoryError(f"theory {header['name']} has no closing 'end'")
    if not trusted:
        if _ORACLE.search(bare):
            raise TheoryError("oracle heuristics run programs on the server and are refused")
        if _INCLUDE.search(bare):
            raise TheoryError("#include reads server files and is refused")
    theory = Theory(header["name"], text)
    if not theory.lemmas:
        raise TheoryError(f"theory {theory.name} has no lemma to prove")
    return theory
