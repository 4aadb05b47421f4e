"""Reading the replies of Tamarin's interactive server (``tamarin-prover interactive``, ≥ 1.8).

Three kinds of reply (reference ``tamarin.md`` §3):

* ``main/proof/…`` → JSON ``{"html", "title"}``; the HTML fragment lists the ranked proof
  methods (anchors of class ``internal-link proof-method``, each followed by an ``hl_comment``
  explanation), the constraint system (``<div class="preformatted sequent">``) and the existing
  sub-cases (``<h4>Case NAME</h4>``).
* ``main/method/…`` → JSON ``{"redirect": "/thy/trace/NEW/…"}`` or ``{"alert": "…"}``.
* ``/`` → the HTML index page, one table row per loaded theory.

The HTML is read with the standard library's ``html.parser`` (a tolerant, maintained parser),
never with regular expressions over markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote

from environments.tamarin.model import (
    MethodNotApplicable,
    NodeStatus,
    NodeView,
    ProofMethod,
    ProverCrashed,
    normalise_method,
)

NBSP = "\xa0"
_REDIRECT_INDEX = re.compile(r"^/thy/(?:trace|equiv)/(?P<idx>\d+)/")
_HELP_LINK = re.compile(r"^/thy/trace/(?P<idx>\d+)/overview/help$")


@dataclass(frozen=True)
class ProofPage:
    """One parsed ``main/proof`` reply: the node, the names of the sub-cases that exist below it
    at this theory index (``""`` for an unnamed case; empty while the node is open or when its
    method closed the branch), the page title as text, and Tamarin's note (``Constraint System
    is Solved`` …) when it shows one instead of methods."""

    view: NodeView
    cases: tuple[str, ...]
    title: str
    note: str | None


def _classes(attrs: list[tuple[str, str | None]]) -> set[str]:
    for key, value in attrs:
        if key == "class" and value:
            return set(value.split())
    return set()


class _ProofFragmentParser(HTMLParser):
    """Walks the fragment once, collecting methods, explanations, headings and the sequent."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.methods: list[list[str]] = []  # [text, explanation]
        self.h3: list[str] = []
        self.h4: list[str] = []
        self.sequent: list[str] = []
        self._in_method = False
        self._await_expl = False  # after a method anchor, before the next <br/> or anchor
        self._in_expl = False
        self._heading: list[str] | None = None
        self._heading_tag = ""
        self._div_stack: list[bool] = []  # per open div: is it the sequent div?

    @property
    def _in_sequent(self) -> bool:
        return any(self._div_stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = _classes(attrs)
        if tag == "div":
            self._div_stack.append({"preformatted", "sequent"} <= classes)
        elif tag == "br":
            self._await_expl = False
            if self._in_sequent:
                self.sequent.append("\n")
        elif tag == "a":
            self._await_expl = False
            if {"internal-link", "proof-method"} <= classes:
                self._in_method = True
                self.methods.append(["", ""])
        elif tag == "span" and self._await_expl and "hl_comment" in classes:
            self._in_expl = True
        elif tag in ("h3", "h4"):
            self._heading, self._heading_tag = [], tag

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # ``<br/>`` and ``<img …/>`` arrive here; a self-closed div would not open anything.
        if tag != "div":
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "div":
            if self._div_stack:
                self._div_stack.pop()
            self._await_expl = False
        elif tag == "a" and self._in_method:
            self._in_method = False
            self._await_expl = True
        elif tag == "span" and self._in_expl:
            self._in_expl = False
            self._await_expl = False
        elif tag == self._heading_tag and self._heading is not None:
            text = "".join(self._heading)
            (self.h3 if tag == "h3" else self.h4).append(text)
            self._heading, self._heading_tag = None, ""

    def handle_data(self, data: str) -> None:
        if self._in_method:
            self.methods[-1][0] += data
        elif self._in_expl:
            self.methods[-1][1] += data
        if self._heading is not None:
            self._heading.append(data)
        if self._in_sequent:
            # Line breaks are the <br/> tags; the raw newline the server writes after each
            # <br/> is layout of the HTML source, not part of the text.
            self.sequent.append(data.replace("\n", ""))


def html_to_text(fragment: str) -> str:
    """Text of an HTML fragment: ``<br/>`` → newline, tags removed, entities unescaped, NBSP →
    space, the source's own newlines dropped (the way the explored tree's ``system`` is made)."""
    parser = _TextParser()
    parser.feed(fragment)
    parser.close()
    return "".join(parser.parts).replace(NBSP, " ")


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(data.replace("\n", ""))


def _clean(text: str) -> str:
    return text.replace(NBSP, " ").strip()


def _status(note: str | None, methods: list[ProofMethod]) -> tuple[NodeStatus, list[ProofMethod]]:
    """1.8 shows a heading instead of methods on a finished system; 1.10+/1.11 offer a single
    pseudo-method ``SOLVED // trace found`` or ``UNFINISHABLE`` instead (§3.4): both mean the
    same node status, and neither pseudo-method is a proof step an agent should choose."""
    if note is not None:
        lowered = note.lower()
        if lowered.endswith("solved"):
            return "solved", []
        if lowered.endswith("unfinishable"):
            return "unfinishable", []
    if len(methods) == 1:
        head = normalise_method(methods[0].text).split(" ", 1)[0]
        if head == "SOLVED":
            return "solved", []
        if head == "UNFINISHABLE":
            return "unfinishable", []
    return "open", methods


def _json_object(body: str | bytes, what: str) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as err:
        raise ProverCrashed(f"the prover's {what} reply is not JSON: {str(body)[:200]!r}") from err
    if not isinstance(data, dict):
        raise ProverCrashed(f"the prover's {what} reply is not a JSON object: {str(body)[:200]!r}")
    return data


def parse_proof_fragment(fragment: str, title: str = "") -> ProofPage:
    """Parse the HTML fragment of a ``main/proof`` reply."""
    parser = _ProofFragmentParser()
    parser.feed(fragment)
    parser.close()
    methods = [ProofMethod(_clean(text), _clean(expl)) for text, expl in parser.methods]
    note = next(
        (_clean(h) for h in parser.h3 if _clean(h).lower().startswith("constraint system is")),
        None,
    )
    status, methods = _status(note, methods)
    # ``<h4>Case NAME</h4>``; ``<h4>Case </h4>`` is the unnamed case.
    cases = tuple(_clean(h)[4:].strip() for h in parser.h4 if _clean(h).split(" ", 1)[0] == "Case")
    system = "".join(parser.sequent).replace(NBSP, " ")
    return ProofPage(NodeView(system, tuple(methods), status), cases, _clean(title), note)


def parse_proof_reply(body: str | bytes) -> ProofPage:
    """Parse a ``main/proof`` reply (JSON ``{"html", "title"}``).

    Raises ProverCrashed when the reply is not of that shape.
    """
    return parse_proof_page(_json_object(body, "main/proof"))


def parse_proof_page(data: dict[str, Any]) -> ProofPage:
    """Parse a decoded ``main/proof`` reply ``{"html", "title"}``."""
    fragment, title = data.get("html"), data.get("title", "")
    if not isinstance(fragment, str) or not isinstance(title, str):
        raise ProverCrashed(f"the prover's main/proof reply has no html: {str(data)[:200]!r}")
    return parse_proof_fragment(fragment, html_to_text(title))


def parse_method_reply(body: str | bytes) -> int:
    """The new theory index of a ``main/method`` reply.

    Raises MethodNotApplicable on an ``alert`` (the prover refused the method) and
    ProverCrashed on anything else.
    """
    return parse_redirect(_json_object(body, "main/method"))


def parse_redirect(data: dict[str, Any]) -> int:
    """The new theory index of a decoded ``main/method`` reply (see ``parse_method_reply``)."""
    if "alert" in data:
        raise MethodNotApplicable(f"Tamarin refused the method: {data['alert']}")
    redirect = data.get("redirect")
    match = _REDIRECT_INDEX.match(redirect) if isinstance(redirect, str) else None
    if match is None:
        raise ProverCrashed(f"unexpected main/method reply: {str(data)[:200]!r}")
    return int(match["idx"])


def encode_case(name: str) -> str:
    """One case name as a path element (§3.3): ``""`` → ``_``, a name starting with ``_`` gets
    another ``_``; percent-encoded."""
    element = "_" if name == "" else ("_" + name if name.startswith("_") else name)
    return quote(element, safe="")


def encode_case_path(cases: Iterable[str]) -> str:
    """``/e1/e2…`` for a case path (``""`` for the root)."""
    return "".join("/" + encode_case(name) for name in cases)


def decode_case(element: str) -> str:
    """The case name of an (already percent-decoded) path element; inverse of
    ``encode_case``."""
    if element == "_":
        return ""
    return element[1:] if element.startswith("__") else element


class _IndexParser(HTMLParser):
    """Table rows of the index page: the help link's index and text, and the row's cells."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[tuple[int, str, list[str]]] = []
        self._row: list[str] | None = None
        self._link: tuple[int, list[str]] | None = None
        self._found: tuple[int, str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self._row, self._found = [], None
        elif tag == "td" and self._row is not None:
            self._cell = []
        elif tag == "a":
            href = dict(attrs).get("href") or ""
            match = _HELP_LINK.match(href)
            if match is not None:
                self._link = (int(match["idx"]), [])

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._link is not None:
            self._found = (self._link[0], "".join(self._link[1]).strip())
            self._link = None
        elif tag == "td" and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._found is not None:
                self.rows.append((self._found[0], self._found[1], self._row))
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._link is not None:
            self._link[1].append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse_index_page(page: str) -> dict[str, int]:
    """Theory name → theory index from the server's ``/`` page.

    A name can be listed several times (the original and ``Modified`` copies); the original's
    index wins, then the smallest.
    """
    parser = _IndexParser()
    parser.feed(page)
    parser.close()
    best: dict[str, tuple[bool, int]] = {}
    for idx, name, cells in parser.rows:
        key = ("Original" not in cells, idx)
        if name not in best or key < best[name]:
            best[name] = key
    return {name: key[1] for name, key in best.items()}


parse_index = parse_index_page
