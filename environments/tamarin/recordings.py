"""Recorded real-Tamarin proof-search data, read into one graph of nodes per theory.

Two kinds of recording exist (reference §10): an explored tree (``*_tree.json[.gz|.xz]``: nodes
with their constraint system, ranked methods and, for expanded methods, the child node per
case) and transcripts of the interactive server (``*.jsonl[.gz|.xz]``: every HTTP exchange of a
greedy proof). Both are read into ``RecordedNode``s named as the explored tree names them (the
first 12 hex digits of SHA-1 over lemma, system and method texts), so the same real state seen in
both merges into one node, and the transcripts extend the tree where its budget ran out.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from typing import Any
from urllib.parse import unquote

from environments.datafiles import COMPRESSIONS, open_text
from environments.tamarin import html
from environments.tamarin.model import NodeStatus, NodeView, ProofMethod

TREE_SUFFIXES = tuple(f"_tree.json{c}" for c in COMPRESSIONS)
TRANSCRIPT_SUFFIXES = tuple(f".jsonl{c}" for c in COMPRESSIONS)


@dataclass
class RecordedNode:
    """One real proof state and what the recording knows of its successors."""

    lemma: str
    view: NodeView
    expansions: dict[int, dict[str, str]] = field(default_factory=dict)
    """method rank → {case name → child node id}; an empty dict: the method closed the branch."""


@dataclass
class RecordedTheory:
    """Everything recorded about one theory."""

    name: str
    roots: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, RecordedNode] = field(default_factory=dict)
    source: str | None = None
    """The theory text as the recording prover printed it (from a transcript), if any."""

    def add(self, node: RecordedNode) -> str:
        """Add ``node`` (or merge it into the equal node already there); returns its id."""
        node_id = node_id_of(node.lemma, node.view)
        known = self.nodes.setdefault(node_id, node)
        for rank, cases in node.expansions.items():
            known.expansions.setdefault(rank, cases)
        return node_id


def node_id_of(lemma: str, view: NodeView) -> str:
    """The explored tree's node id: SHA-1 over lemma, system text and method texts."""
    key = lemma + "\0" + view.system + "\0" + "\n".join(m.text for m in view.methods)
    return hashlib.sha1(key.encode()).hexdigest()[:12]  # noqa: S324 - the recording's naming


def read_tree(path: Traversable) -> RecordedTheory:
    """Read an explored tree (reference §10.3). Its optional ``source``, the theory's text,
    lets the replay serve the tree (a theory is served only by its own text, byte for byte)."""
    with open_text(path) as text:
        data: dict[str, Any] = json.load(text)
    theory = RecordedTheory(data["theory"], source=data.get("source"))
    for node_id, raw in data["nodes"].items():
        status: NodeStatus = (
            "solved" if raw.get("note") == "Constraint System is Solved" else "open"
        )
        view = NodeView(
            system=raw["system"],
            methods=tuple(ProofMethod(m["text"], m["expl"]) for m in raw["methods"]),
            status=status,
        )
        expansions = {
            int(rank): dict(expansion["cases"])
            for rank, expansion in raw["expansions"].items()
            if "cases" in expansion
        }
        theory.nodes[node_id] = RecordedNode(raw["lemma"], view, expansions)
    theory.roots = {lemma: info["root"] for lemma, info in data["lemmas"].items()}
    return theory


def _proof_route(path: str) -> tuple[int, str, tuple[str, ...], int | None] | None:
    """``(index, lemma, case path, applied rank or None)`` of a main/proof or main/method path."""
    parts = path.split("?", 1)[0].strip("/").split("/")
    if len(parts) < 5 or parts[0] != "thy" or parts[3] != "main":
        return None
    index, route, lemma, rest = int(parts[2]), parts[4], unquote(parts[5]), parts[6:]
    rank = None
    if route == "method":
        rank, rest = int(rest[0]), rest[1:]
    elif route != "proof":
        return None
    return index, lemma, tuple(html.decode_case(unquote(p)) for p in rest), rank


def read_transcript(path: Traversable) -> RecordedTheory:
    """Read a greedy transcript (reference §10.2): the nodes it read and, for every method it
    applied, the cases it listed when it re-read the node at the new theory index."""
    with open_text(path) as lines:
        records = [json.loads(line) for line in lines if line.strip()]
    listing = html.parse_index_page(records[0]["body"])
    start = int(records[1]["path"].split("/")[3])
    name = next(theory for theory, index in listing.items() if index == start)
    theory = RecordedTheory(name)
    first_view: dict[tuple[str, tuple[str, ...]], str] = {}
    # (lemma, case path, theory index after the application) → the rank applied there; the
    # recorder re-reads the node at that index to list the cases the method produced.
    pending: dict[tuple[str, tuple[str, ...], int], int] = {}
    listed: list[tuple[str, tuple[str, ...], int, tuple[str, ...]]] = []
    for record in records[1:]:
        if record["path"].endswith("/source"):
            theory.source = theory.source or record["body"]
            continue
        route = _proof_route(record["path"])
        if route is None:
            continue
        index, lemma, cases, rank = route
        if rank is not None:
            pending[(lemma, cases, html.parse_redirect(json.loads(record["body"])))] = rank
            continue
        page = html.parse_proof_page(json.loads(record["body"]))
        if (lemma, cases, index) in pending:
            listed.append((lemma, cases, pending.pop((lemma, cases, index)), page.cases))
        if (lemma, cases) not in first_view:
            first_view[(lemma, cases)] = theory.add(RecordedNode(lemma, page.view))
            if not cases:
                theory.roots.setdefault(lemma, first_view[(lemma, cases)])
    for lemma, cases, rank, names in listed:
        children = {name: first_view.get((lemma, (*cases, name))) for name in names}
        if all(children.values()):
            node = theory.nodes[first_view[(lemma, cases)]]
            node.expansions.setdefault(rank, {k: v for k, v in children.items() if v})
    return theory


def load_recordings(paths: list[Traversable]) -> dict[str, RecordedTheory]:
    """Every recording under ``paths`` (files, or folders searched one level deep), merged per
    theory name."""
    files: list[Traversable] = []
    for path in paths:
        files.extend(sorted(path.iterdir(), key=lambda f: f.name) if path.is_dir() else [path])
    theories: dict[str, RecordedTheory] = {}
    for file in files:
        if file.name.endswith(TREE_SUFFIXES):
            part = read_tree(file)
        elif file.name.endswith(TRANSCRIPT_SUFFIXES):
            part = read_transcript(file)
        else:
            continue
        merged = theories.setdefault(part.name, RecordedTheory(part.name))
        for node_id, node in part.nodes.items():
            known = merged.nodes.setdefault(node_id, node)
            for rank, cases in node.expansions.items():
                known.expansions.setdefault(rank, cases)
        for lemma, root in part.roots.items():
            merged.roots.setdefault(lemma, root)
        merged.source = merged.source or part.source
    return theories
