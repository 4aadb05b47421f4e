"""``JsonApiBackend``: the research fork ``tamarin-prover-json``'s stateless routes (§2).

The fork (niklasmedinger/Tamarin-ML-API, used by the paper's TamRL) adds
``GET /thy/trace/{idx}/initialcs/{lemma}`` and ``POST /thy/trace/{idx}/executemethod/{lemma}``
(form fields ``proofmethod``, ``system``): the client carries each constraint system as an
opaque base64 blob, so a node's handle *is* its blob and the server keeps nothing between calls.
This backend caches ``(lemma, Path) → System`` per theory and replays a path it has not seen
from the nearest cached ancestor, choosing each step's method by its text.

A System reply: ``{prettyMethods?: [str], proofMethods?: [{name, goal}], encodedMethods: [b64],
encodedSys: b64, status: "Solved" | "Contradictory" | "Undetermined"}``. Method texts come from
``prettyMethods`` when the fork sends them; otherwise they are rendered from the structured
``proofMethods`` (an approximation of Tamarin's printing, marked as such in the text).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from environments.tamarin.interactive import Launcher, ServerPool, TamarinLauncher, _key, _Server
from environments.tamarin.model import (
    MethodNotApplicable,
    NodeStatus,
    NodeView,
    Path,
    PathError,
    ProofMethod,
    ProverCrashed,
    ProverUnavailable,
    normalise_method,
)
from verifiers.tamarin.prover import find_prover
from verifiers.tamarin.theory import Theory

JSON_PROVER = "tamarin-prover-json"


@dataclass(frozen=True)
class System:
    """One constraint system as the fork returns it: the view, and the blobs to send back."""

    view: NodeView
    encoded_methods: tuple[str, ...]
    encoded_sys: str
    status: str


def _method_text(raw: Any) -> str:
    """A structured ``{name, goal: {type, args}}`` method as text (only used when the fork
    sends no ``prettyMethods``)."""
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, dict):
        return str(raw)
    name = str(raw.get("name", ""))
    simple = {"Simplify": "simplify", "Induction": "induction", "Solved": "SOLVED"}
    if name in simple:
        return simple[name]
    if name.startswith("Contradiction"):
        return "contradiction"
    goal = raw.get("goal")
    if isinstance(goal, dict):
        args = goal.get("args", [])
        body = ", ".join(str(a) for a in args) if isinstance(args, list) else str(args)
        return f"solve( {body} )  /* {goal.get('type', '?')} goal, rendered from JSON */"
    return name


def parse_system(data: Any) -> System:
    """A System object of the fork's replies; raises ProverCrashed on another shape."""
    if not isinstance(data, dict) or "encodedSys" not in data:
        raise ProverCrashed(f"not a System object from the JSON fork: {str(data)[:200]!r}")
    encoded = tuple(str(m) for m in data.get("encodedMethods", []))
    pretty = data.get("prettyMethods")
    texts = (
        [str(t) for t in pretty]
        if isinstance(pretty, list)
        else [_method_text(m) for m in data.get("proofMethods", [])]
    )
    if len(texts) != len(encoded):
        raise ProverCrashed(f"{len(texts)} method texts for {len(encoded)} encoded methods")
    status_text = str(data.get("status", "Undetermined"))
    # ``Contradictory`` systems stay open: closing one is the ``contradiction`` method's job,
    # which the fork lists; ``Solved`` is a found trace.
    status: NodeStatus = "solved" if status_text == "Solved" else "open"
    methods = () if status == "solved" else tuple(ProofMethod(t.strip()) for t in texts)
    system_text = data.get("prettySystem") or data.get("constraintSystem") or ""
    return System(
        NodeView(str(system_text), methods, status),
        () if status == "solved" else encoded,
        str(data["encodedSys"]),
        status_text,
    )


class JsonApiBackend(ServerPool):
    """``ProofBackend`` over ``tamarin-prover-json interactive``."""

    @staticmethod
    def _default_launcher() -> Launcher:
        found = find_prover(JSON_PROVER)
        if found is None:
            raise ProverUnavailable(f"no {JSON_PROVER} binary on PATH (the paper's research fork)")
        return TamarinLauncher(found)

    @staticmethod
    def _parse_index(reply: httpx.Response) -> dict[str, int]:
        """The fork's ``/`` is JSON: ``{name: {theoryIndex, …}}`` (or a list per name)."""
        try:
            data = reply.json()
        except ValueError as err:
            raise ProverCrashed(f"the JSON fork's / is not JSON: {reply.text[:200]!r}") from err
        found: dict[str, int] = {}
        for name, entry in data.items() if isinstance(data, dict) else []:
            entries = entry if isinstance(entry, list) else [entry]
            indices = [e["theoryIndex"] for e in entries if isinstance(e, dict)]
            if indices:
                found[str(name)] = min(int(i) for i in indices)
        return found

    @property
    def name(self) -> str:
        """``json-api``."""
        return "json-api"

    def observe(self, theory: Theory, lemma: str, path: Path) -> NodeView:
        """The node at ``path``."""
        theory.require_lemma(lemma)
        server = self._server(theory)
        with server.lock:
            return self._locate(server, lemma, path).view

    def apply(self, theory: Theory, lemma: str, path: Path, rank: int) -> tuple[str, ...]:
        """Apply method ``rank`` at ``path``; the resulting case names in the fork's order."""
        theory.require_lemma(lemma)
        server = self._server(theory)
        with server.lock:
            system = self._locate(server, lemma, path)
            return self._execute(server, lemma, _key(path), system, rank)

    def _initial(self, server: _Server, lemma: str) -> System:
        url = f"/thy/trace/{server.theory_index}/initialcs/{quote(lemma, safe='')}"
        reply = self._get(server, url)
        if reply.status_code != 200:
            raise ProverCrashed(f"{url} answered {reply.status_code}: {reply.text[:300]}")
        return parse_system(_json(reply))

    def _execute(
        self, server: _Server, lemma: str, key: Path, system: System, rank: int
    ) -> tuple[str, ...]:
        if not 1 <= rank <= len(system.view.methods):
            raise MethodNotApplicable(
                f"no method {rank}: the node offers {len(system.view.methods)} "
                f"(status {system.view.status})"
            )
        text = normalise_method(system.view.methods[rank - 1].text)
        url = f"/thy/trace/{server.theory_index}/executemethod/{quote(lemma, safe='')}"
        form = {"proofmethod": system.encoded_methods[rank - 1], "system": system.encoded_sys}
        reply = self._get(server, url, form)
        if reply.status_code != 200:
            raise MethodNotApplicable(f"the prover refused method {rank}: {reply.text[:300]}")
        cases = _json(reply)
        if not isinstance(cases, list):
            raise ProverCrashed(f"executemethod answered no case list: {reply.text[:200]!r}")
        names: list[str] = []
        for case in cases:
            if not isinstance(case, dict):
                raise ProverCrashed(f"executemethod answered a bad case: {str(case)[:200]!r}")
            name = str(case.get("caseName", ""))
            names.append(name)
            self._remember(server, (lemma, (*key, (text, name))), parse_system(case.get("system")))
        return tuple(names)

    def _remember(self, server: _Server, key: tuple[str, Path], system: System) -> None:
        server.handles[key] = system
        server.handles.move_to_end(key)
        if len(server.handles) > self._max_cached:
            server.handles.popitem(last=False)

    def _locate(self, server: _Server, lemma: str, path: Path) -> System:
        key = _key(path)
        depth = len(key)
        while depth >= 0 and (lemma, key[:depth]) not in server.handles:
            depth -= 1
        if depth < 0:
            self._remember(server, (lemma, ()), self._initial(server, lemma))
            depth = 0
        system: System = server.handles[(lemma, key[:depth])]
        for method, case in key[depth:]:
            ranks = [
                i
                for i, m in enumerate(system.view.methods, 1)
                if normalise_method(m.text) == method
            ]
            if not ranks:
                raise MethodNotApplicable(f"{method!r} is not offered at this node")
            children = self._execute(server, lemma, key[:depth], system, ranks[0])
            if case not in children:
                listed = ", ".join(repr(c) for c in children) or "none: the method closed it"
                raise PathError(f"{method!r} has no case {case!r} (cases: {listed})")
            depth += 1
            system = server.handles[(lemma, key[:depth])]
        return system


def _json(reply: httpx.Response) -> Any:
    try:
        return json.loads(reply.content)
    except ValueError as err:
        raise ProverCrashed(f"the JSON fork answered no JSON: {reply.text[:200]!r}") from err
