"""The interactive-server driver and its HTML parser, on recorded real Tamarin 1.8.0 output.

The fake server (``tests/tamarin_fake.py``) replays the recorded transcripts byte for byte and
answers 404 to anything the recorder never asked, so "the driver reproduces the greedy proof"
means: every request it made is a recorded one, in the recorded order. Bodies said to be in
1.11 style are *constructed* here from recorded 1.8 bodies by the rules of reference §3.4/§7;
they are labelled so and are not Tamarin output.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qsl

import pytest

from environments.datafiles import open_text
from environments.tamarin.html import (
    decode_case,
    encode_case,
    parse_index_page,
    parse_method_reply,
    parse_proof_fragment,
    parse_proof_reply,
)
from environments.tamarin.interactive import (
    ExistingServer,
    InteractiveBackend,
    LaunchedServer,
    TamarinLauncher,
)
from environments.tamarin.jsonapi import JsonApiBackend
from environments.tamarin.model import (
    MethodNotApplicable,
    NodeView,
    PathError,
    ProverTimeout,
)
from environments.tamarin.model import (
    Path as ProofPath,
)
from environments.tamarin.provers import RECORDINGS
from tests.conftest import TAMARIN_BATCH
from tests.tamarin_fake import Record, ReplayServer, read_transcript
from verifiers.tamarin.prover import Prover, find_prover
from verifiers.tamarin.theory import Theory, TheoryError, UnknownLemma, parse_theory

ROOT = Path(__file__).resolve().parents[1]


def _transcript(name: str) -> list[Record]:
    return read_transcript(RECORDINGS / f"{name}_interactive_greedy.jsonl.xz")


@pytest.fixture(scope="module")
def tutorial() -> list[Record]:
    return _transcript("tutorial")


@pytest.fixture(scope="module")
def tree() -> dict[str, Any]:
    with open_text(RECORDINGS / "tutorial_explored_tree.json.xz") as file:
        loaded: dict[str, Any] = json.load(file)
    return loaded


def _theory_of(records: list[Record]) -> Theory:
    """The theory as Tamarin printed it (its ``source`` reply): the lemma order the recorder
    walked."""
    source = next(r.body for r in records if r.path.endswith("/source"))
    return parse_theory(source, trusted=True)


def _node_id(lemma: str, system: str, methods: list[str]) -> str:
    """The explored tree's node id (reference §10.3)."""
    key = lemma + "\0" + system + "\0" + "\n".join(methods)
    return hashlib.sha1(key.encode()).hexdigest()[:12]


@pytest.fixture
def fake_tutorial(tutorial: list[Record]) -> Iterator[ReplayServer]:
    with ReplayServer(tutorial) as fake:
        yield fake


def _backend(fake: ReplayServer, **kwargs: Any) -> InteractiveBackend:
    return InteractiveBackend(ExistingServer(fake.base_url, "tamarin-prover 1.8.0"), **kwargs)


# -- greedy reproduction -----------------------------------------------------------------------


def greedy(
    backend: InteractiveBackend,
    theory: Theory,
    lemma: str,
    views: dict[ProofPath, NodeView] | None = None,
) -> list[tuple[ProofPath, str, tuple[str, ...]]]:
    """The recorder's walk (§10.2 "Record order"): depth-first with a stack of paths from the
    root; read the node; skip it when it lists no methods; else apply method 1 and push each
    child case, in reverse so the first case is explored first. Returns the applications."""
    steps: list[tuple[ProofPath, str, tuple[str, ...]]] = []
    stack: list[ProofPath] = [()]
    while stack and len(steps) < 500:
        path = stack.pop()
        view = backend.observe(theory, lemma, path)
        if views is not None:
            views[path] = view
        if not view.methods:
            continue
        method = view.methods[0].text
        cases = backend.apply(theory, lemma, path, 1)
        steps.append((path, method, cases))
        stack.extend((*path, (method, case)) for case in reversed(cases))
    return steps


def _recorded_requests(records: list[Record], lemmas: list[str]) -> list[str]:
    """The recorded requests of the greedy walk over ``lemmas`` (``/`` once, no ``source``)."""
    wanted = []
    for record in records[1:]:
        parts = record.path.split("/")
        if len(parts) > 6 and parts[4] == "main" and parts[6] in lemmas:
            wanted.append(record.path)
    return ["/", *wanted]


def _recorded_methods(records: list[Record], lemma: str) -> list[str]:
    """For each recorded application in ``lemma``, the text of the method it applied."""
    pages: dict[str, Any] = {}
    chosen = []
    for record in records:
        parts = record.path.split("/")
        if len(parts) <= 6 or parts[6] != lemma:
            continue
        if parts[5] == "proof":
            pages[record.path] = parse_proof_reply(record.body)
        elif parts[5] == "method":
            rank = int(parts[7])
            at = "/".join([*parts[:5], "proof", lemma, *parts[8:]])
            chosen.append(pages[at].view.methods[rank - 1].text)
    return chosen


TUTORIAL_LEMMAS = {
    "Client_session_key_secrecy": 5,
    "Client_auth": 11,
    "Client_auth_injective": 15,
    "Client_session_key_honest_setup": 10,
}


def test_tutorial_greedy_proofs_are_reproduced(
    tutorial: list[Record], fake_tutorial: ReplayServer
) -> None:
    theory = parse_theory((TAMARIN_BATCH / "Tutorial.spthy").read_text(), trusted=True)
    assert list(theory.lemmas) == list(TUTORIAL_LEMMAS)
    backend = _backend(fake_tutorial)
    try:
        for lemma, size in TUTORIAL_LEMMAS.items():
            steps = greedy(backend, theory, lemma)
            assert len(steps) == size, lemma
            demo = 2 if lemma == "Client_auth" else 0  # the branching demo's two applications
            assert [m for _, m, _ in steps] == _recorded_methods(tutorial, lemma)[:size], lemma
            assert len(_recorded_methods(tutorial, lemma)) == size + demo
    finally:
        backend.close()
    assert fake_tutorial.unrecorded == []
    # Every request, in order, is the recorded one (the branching demo and ``source`` aside).
    assert fake_tutorial.requests == _recorded_requests(tutorial[:-5], list(TUTORIAL_LEMMAS))


def test_tutorial_case_names_and_solved_leaf(fake_tutorial: ReplayServer) -> None:
    theory = parse_theory((TAMARIN_BATCH / "Tutorial.spthy").read_text(), trusted=True)
    with_backend = _backend(fake_tutorial)
    try:
        steps = greedy(with_backend, theory, "Client_session_key_secrecy")
        assert [cases for _, _, cases in steps] == [
            ("",),
            ("Client_1",),
            ("Client_1",),
            ("Reveal_ltk",),
            (),  # contradiction closes the branch
        ]
        assert steps[-1][1].startswith("contradiction")
        for lemma in ("Client_auth", "Client_auth_injective"):
            greedy(with_backend, theory, lemma)
        honest = "Client_session_key_honest_setup"
        views: dict[ProofPath, NodeView] = {}
        greedy(with_backend, theory, honest, views)
        solved = [p for p, view in views.items() if view.status == "solved"]
        # The exists-trace lemma's witness: one solved leaf, below Serv_1's case Client_1.
        assert [[case for _, case in p] for p in solved] == [["", "Client_1", "Serv_1", "Client_1"]]
    finally:
        with_backend.close()


@pytest.mark.parametrize(
    ("name", "counts"),
    [
        (
            "minimal_loop",
            {
                "Start_before_Loop": 8,
                "Start_before_Stop": 4,
                "Loop_before_Stop": 9,
                "Stop_unique": 12,
                "Satisfied_by_empty_trace_only": 4,
            },
        ),
        ("keyreneg", {"Secret_reachable": 10, "secrecy": 23}),
        ("nslpk3", {"types": None}),  # its first lemma; all four replay too (about 7 s)
    ],
)
def test_other_transcripts_are_reproduced(name: str, counts: dict[str, int | None]) -> None:
    records = _transcript(name)
    theory = _theory_of(records)
    with ReplayServer(records) as fake:
        backend = _backend(fake)
        try:
            for lemma, size in counts.items():
                steps = greedy(backend, theory, lemma)
                recorded = _recorded_methods(records, lemma)
                assert [m for _, m, _ in steps] == recorded
                assert size is None or len(steps) == size
        finally:
            backend.close()
        assert fake.unrecorded == []
        assert fake.requests == _recorded_requests(records, list(counts))


def test_branching_demo_at_an_older_index(
    tutorial: list[Record], fake_tutorial: ReplayServer
) -> None:
    """The last five records: from a fresh server's index 1, apply method 1 at Client_auth's
    root (→ 43), then method **2** at ``_`` (→ 44), and re-read ``_`` at 43: unchanged. The
    recorder did not re-read the root after the first application, so this runs through the
    driver's index-level calls (same URLs, same parser) instead of ``apply``."""
    theory = parse_theory((TAMARIN_BATCH / "Tutorial.spthy").read_text(), trusted=True)
    backend = _backend(fake_tutorial)
    try:
        idx = backend.theory_index(theory)
        assert idx == 1
        root = backend.read(theory, idx, "Client_auth", ())
        assert root.title == "Lemma: Client_auth" and root.view.methods[0].text == "simplify"
        after_simplify = backend.apply_at(theory, idx, "Client_auth", 1, ())
        assert after_simplify == 43
        before = backend.read(theory, 43, "Client_auth", ("",))
        assert before.title == "Method: sorry"
        branched = backend.apply_at(theory, 43, "Client_auth", 2, ("",))
        assert branched == 44
        again = backend.read(theory, 43, "Client_auth", ("",), fresh=True)
        assert again == before
    finally:
        backend.close()
    assert fake_tutorial.requests == [r.path for r in tutorial[:1] + tutorial[-5:]]


# -- HTML parser ------------------------------------------------------------------------------


def test_parsed_system_equals_the_explored_trees(
    tutorial: list[Record], tree: dict[str, Any]
) -> None:
    """The same real nodes, read from the transcript and from the explored tree: the parsed
    text, methods, explanations and solved note equal the tree's."""
    matched = 0
    for record in tutorial:
        parts = record.path.split("/")
        if len(parts) <= 6 or parts[5] != "proof":
            continue
        page = parse_proof_reply(record.body)
        texts = [m.text for m in page.view.methods]
        node = tree["nodes"].get(_node_id(parts[6], page.view.system, texts))
        if node is None:
            continue  # a node the budgeted exploration never reached
        matched += 1
        assert page.view.system == node["system"]
        assert [(m.text, m.explanation) for m in page.view.methods] == [
            (m["text"], m["expl"]) for m in node["methods"]
        ]
        assert page.note == node["note"]
        assert page.view.status == ("solved" if node["note"] else "open")
    assert matched >= 70


def test_parser_details_on_recorded_bodies(tutorial: list[Record]) -> None:
    pages = {r.path: r.body for r in tutorial}
    root = parse_proof_reply(pages["/thy/trace/1/main/proof/Client_session_key_secrecy"])
    assert [m.text for m in root.view.methods] == ["simplify", "induction"]
    assert root.cases == () and root.title == "Lemma: Client_session_key_secrecy"
    assert root.view.system.startswith("last: none\n\nformulas:\n  ∃ S k #i #j.")
    node = parse_proof_reply(pages["/thy/trace/2/main/proof/Client_session_key_secrecy/_"])
    assert [(m.text, m.explanation) for m in node.view.methods] == [
        ("solve( Client_1( S, k ) ▶₀ #i )", "// nr. 3 (from rule Client_2)"),
        ("solve( !KU( h(k) ) @ #vk )", "// nr. 4 (probably constructible)"),
    ]
    assert node.view.methods[0].goal is not None
    assert node.view.methods[0].goal.kind == "premise"
    assert parse_proof_reply(pages["/thy/trace/2/main/proof/Client_session_key_secrecy"]).cases == (
        "",
    )
    two = parse_proof_reply(pages["/thy/trace/9/main/proof/Client_auth/_/Client_1"])
    assert two.cases == ("Serv_1", "c_h")
    solved = parse_proof_reply(
        pages["/thy/trace/36/main/proof/Client_session_key_honest_setup/_/Client_1/Serv_1/Client_1"]
    )
    assert solved.view.status == "solved" and solved.view.methods == ()
    assert solved.note == "Constraint System is Solved"
    # 1.8.0 lists a contradiction first and still the other goals.
    closed = parse_proof_reply(
        pages["/thy/trace/5/main/proof/Client_session_key_secrecy/_/Client_1/Client_1/Reveal_ltk"]
    )
    assert closed.view.methods[0].kind == "contradiction" and len(closed.view.methods) == 2
    assert closed.view.status == "open"
    assert parse_method_reply(pages["/thy/trace/1/main/method/Client_session_key_secrecy/1"]) == 2
    assert parse_index_page(tutorial[0].body) == {"Tutorial": 1}
    with pytest.raises(MethodNotApplicable, match="failed on the selected method"):
        parse_method_reply('{"alert":"Sorry, but the prover failed on the selected method!"}')


def test_index_page_with_modified_copies() -> None:
    page = _transcript("keyreneg")[0].body
    listed = parse_index_page(page)
    assert listed["KeyRenegotiation_Minimal"] == 4
    assert listed["Minimal_Loop_Example"] == 2  # the original, not the Modified copies 38-41


def test_case_path_elements() -> None:
    assert encode_case("") == "_"
    assert encode_case("_x") == "__x"
    assert encode_case("a b/c") == "a%20b%2Fc"
    for name in ("", "_x", "Client_1", "__y"):
        assert decode_case(encode_case(name)) == name


def _fragment(records: list[Record], path: str) -> str:
    html: str = json.loads(next(r.body for r in records if r.path == path))["html"]
    return html


def test_constructed_1_11_style_bodies(tutorial: list[Record]) -> None:
    """CONSTRUCTED, not Tamarin output: 1.11 offers a finished system only
    ``contradiction /* … */``, ``SOLVED // trace found`` or ``UNFINISHABLE`` (reference §3.4,
    §7). Built from recorded 1.8 bodies by cutting the method list to what 1.11 would list."""
    closed = _fragment(
        tutorial,
        "/thy/trace/5/main/proof/Client_session_key_secrecy/_/Client_1/Client_1/Reveal_ltk",
    )
    head, rest = closed.split('<div class="preformatted methods">', 1)
    methods, tail = rest.split("</div>", 1)
    only_first = methods.split("<br/>", 1)[0]
    page = parse_proof_fragment(f'{head}<div class="preformatted methods">{only_first}</div>{tail}')
    assert [m.kind for m in page.view.methods] == ["contradiction"]
    assert page.view.status == "open"

    solved = _fragment(
        tutorial,
        "/thy/trace/36/main/proof/Client_session_key_honest_setup/_/Client_1/Serv_1/Client_1",
    )
    before, after = solved.split("<h3>Constraint System is Solved</h3>", 1)
    for anchor_text, status in (
        ('<span class="hl_keyword">SOLVED</span>', "solved"),
        ("UNFINISHABLE", "unfinishable"),
    ):
        listing = (
            "<h3>Applicable Proof Methods: </h3><br/>\n"
            '<div class="preformatted methods">1. <a class="internal-link proof-method" '
            f'href="/thy/trace/36/main/method/x/1">{anchor_text}</a> '
            '<span class="hl_comment">// trace found</span></div>'
        )
        page = parse_proof_fragment(before + listing + after)
        assert page.view.status == status and page.view.methods == ()
        assert page.view.system == parse_proof_fragment(solved).view.system
    unfinishable = solved.replace(
        "Constraint System is Solved", "Constraint System is Unfinishable"
    )
    assert parse_proof_fragment(unfinishable).view.status == "unfinishable"


# -- errors -----------------------------------------------------------------------------------


def test_errors_at_nodes(fake_tutorial: ReplayServer) -> None:
    theory = parse_theory((TAMARIN_BATCH / "Tutorial.spthy").read_text(), trusted=True)
    backend = _backend(fake_tutorial)
    lemma = "Client_session_key_secrecy"
    try:
        with pytest.raises(UnknownLemma, match="no lemma 'nope'"):
            backend.observe(theory, "nope", ())
        assert fake_tutorial.requests == []  # refused before any server was asked
        with pytest.raises(MethodNotApplicable, match="no method 9"):
            backend.apply(theory, lemma, (), 9)
        with pytest.raises(MethodNotApplicable, match="not offered"):
            backend.observe(theory, lemma, (("solve( nothing )", ""),))
        # Replays ``simplify`` (recorded) and finds no case ``Nope`` below it.
        with pytest.raises(PathError, match="no case 'Nope'"):
            backend.observe(theory, lemma, (("simplify", "Nope"),))
        steps = greedy(backend, theory, lemma)
        closed_at, contradiction, cases = steps[-1]
        assert cases == ()
        with pytest.raises(PathError, match="closed"):
            backend.observe(theory, lemma, (*closed_at, (contradiction, "x")))
    finally:
        backend.close()
    assert fake_tutorial.unrecorded == []


def test_path_cache_miss_replays(tutorial: list[Record], fake_tutorial: ReplayServer) -> None:
    """A second backend (another replica) continues a path it has never seen."""
    theory = parse_theory((TAMARIN_BATCH / "Tutorial.spthy").read_text(), trusted=True)
    first = _backend(fake_tutorial)
    lemma = "Client_session_key_secrecy"
    try:
        steps = greedy(first, theory, lemma)
    finally:
        first.close()
    deep_path, contradiction, _ = steps[4]  # Reveal_ltk, closed by a contradiction
    replica = _backend(fake_tutorial)
    try:
        view = replica.observe(theory, lemma, deep_path)
        assert view.methods[0].text == contradiction
        assert view.methods[0].kind == "contradiction"
    finally:
        replica.close()
    assert fake_tutorial.unrecorded == []


def test_hung_server_times_out(tutorial: list[Record]) -> None:
    theory = parse_theory((TAMARIN_BATCH / "Tutorial.spthy").read_text(), trusted=True)
    hang = "/thy/trace/1/main/proof/Client_session_key_secrecy"
    with ReplayServer(tutorial, hang=[hang]) as fake:
        backend = InteractiveBackend(ExistingServer(fake.base_url), request_timeout_s=0.5)
        started = time.monotonic()
        with pytest.raises(ProverTimeout, match="did not answer"):
            backend.observe(theory, "Client_session_key_secrecy", ())
        assert time.monotonic() - started < 3
        backend.close()


class _Recording:
    """Wraps a launcher and keeps what it launched, to check the processes were reaped."""

    def __init__(self, inner: TamarinLauncher) -> None:
        self.inner = inner
        self.launched: list[LaunchedServer] = []

    @property
    def prover(self) -> str:
        return self.inner.prover

    def launch(self, theory: Theory) -> LaunchedServer:
        server = self.inner.launch(theory)
        self.launched.append(server)
        return server


def _fake_prover(tmp_path: Path, body: str) -> Prover:
    """A stand-in *binary* (not Tamarin): a shell script with the given behaviour."""
    script = tmp_path / "fake-tamarin"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return Prover(str(script), "0.0-fake")


def _reaped(server: LaunchedServer) -> bool:
    assert server.process is not None
    if server.process.returncode is None:
        return False
    try:
        os.waitpid(server.process.pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


TINY = 'theory Tiny\nbegin\nlemma l: "All #i. True"\nend\n'


def test_prover_that_exits_at_start(tmp_path: Path) -> None:
    fake = _fake_prover(
        tmp_path, 'echo "Tiny.spthy:3:9: unexpected \\"True\\" (parse error)" >&2\nexit 1\n'
    )
    launcher = _Recording(TamarinLauncher(fake))
    backend = InteractiveBackend(launcher, startup_timeout_s=10)
    with pytest.raises(TheoryError, match=r"exited with status 1.*\n.*parse error"):
        backend.observe(parse_theory(TINY), "l", ())
    assert len(launcher.launched) == 1 and _reaped(launcher.launched[0])
    assert launcher.launched[0].workdir is None  # its temporary directory is gone
    backend.close()


def test_prover_that_never_listens(tmp_path: Path) -> None:
    fake = _fake_prover(tmp_path, "exec sleep 30\n")
    launcher = _Recording(TamarinLauncher(fake))
    backend = InteractiveBackend(launcher, startup_timeout_s=0.5)
    with pytest.raises(ProverTimeout, match="did not start"):
        backend.observe(parse_theory(TINY), "l", ())
    assert _reaped(launcher.launched[0])
    backend.close()


# -- a real binary ------------------------------------------------------------------------------


def test_real_tamarin_proves_a_shipped_theory() -> None:
    found = find_prover()
    if found is None:
        pytest.skip(
            "no tamarin-prover on PATH (or $TAMARIN_PROVER): the real-binary test needs one"
        )
    text = (ROOT / "environments" / "tamarin" / "theories" / "challenge_response.spthy").read_text()
    theory = parse_theory(text)
    backend = InteractiveBackend(TamarinLauncher(found), request_timeout_s=120)
    try:
        assert str(found.version) in backend.prover
        views: dict[ProofPath, NodeView] = {}
        steps = greedy(backend, theory, "key_secrecy", views)
        assert 0 < len(steps) < 500
        # Greedy closes every branch of a verified all-traces lemma: no solved leaf below.
        assert all(view.status == "open" for view in views.values())
        # A fresh backend (another replica) replays the deepest path and sees the same node.
        deepest = max(views, key=len)
        with InteractiveBackend(TamarinLauncher(found)) as replica:
            assert replica.observe(theory, "key_secrecy", deepest) == views[deepest]
    finally:
        backend.close()


# -- the JSON fork's stateless routes: a PROTOCOL test against a made-up server ------------------


class _JsonProtocolFake:
    """NOT Tamarin and not recorded data: a loopback server that speaks the fork's §2 wire
    format over four made-up opaque "systems", to test the client side of the protocol only."""

    SYSTEMS: ClassVar[dict[str, dict[str, Any]]] = {
        "S0": {"prettyMethods": ["simplify", "induction"], "status": "Undetermined"},
        "S1": {"prettyMethods": ["solve( A( x ) @ #i )"], "status": "Undetermined"},
        "S2": {"prettyMethods": ["contradiction"], "status": "Contradictory"},
        "S3": {"prettyMethods": [], "status": "Solved"},
    }
    STEPS: ClassVar[dict[tuple[str, str], list[tuple[str, str]]]] = {
        ("S0", "S0#1"): [("", "S1")],
        ("S0", "S0#2"): [("empty_trace", "S2"), ("non_empty_trace", "S1")],
        ("S1", "S1#1"): [("case_1", "S2"), ("case_2", "S3")],
        ("S2", "S2#1"): [],
    }

    @classmethod
    def system(cls, name: str) -> dict[str, Any]:
        spec = cls.SYSTEMS[name]
        return {
            **spec,
            "encodedMethods": [f"{name}#{i}" for i in range(1, len(spec["prettyMethods"]) + 1)],
            "encodedSys": name,
        }

    def __init__(self) -> None:
        self.requests: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.requests.append(self.path)
                if self.path == "/":
                    self._json(
                        {"Toy": {"theoryIndex": 1, "theoryKind": "trace", "theoryName": "Toy"}}
                    )
                elif self.path == "/thy/trace/1/initialcs/l":
                    self._json(fake.system("S0"))
                else:
                    self._json({"error": "no such route"}, 404)

            def do_POST(self) -> None:
                fake.requests.append(self.path)
                length = int(self.headers["Content-Length"])
                form = dict(parse_qsl(self.rfile.read(length).decode()))
                cases = fake.STEPS.get((form.get("system", ""), form.get("proofmethod", "")))
                if self.path != "/thy/trace/1/executemethod/l" or cases is None:
                    self._json({"error": "method not applicable"}, 400)
                    return
                self._json([{"caseName": c, "system": fake.system(s)} for c, s in cases])

            def _json(self, data: Any, code: int = 200) -> None:
                body = json.dumps(data).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_json_api_protocol_against_a_made_up_server() -> None:
    fake = _JsonProtocolFake()
    toy = parse_theory('theory Toy\nbegin\nlemma l: "All #i. True"\nend\n')
    try:
        with JsonApiBackend(ExistingServer(fake.base_url, "protocol fake")) as backend:
            assert backend.name == "json-api"
            root = backend.observe(toy, "l", ())
            assert [m.text for m in root.methods] == ["simplify", "induction"]
            assert backend.apply(toy, "l", (), 2) == ("empty_trace", "non_empty_trace")
            assert backend.apply(toy, "l", (), 1) == ("",)
            one = (("simplify", ""),)
            assert backend.apply(toy, "l", one, 1) == ("case_1", "case_2")
            solved = (*one, ("solve( A( x ) @ #i )", "case_2"))
            assert backend.observe(toy, "l", solved).status == "solved"
            closing = (*one, ("solve(  A( x )\n @ #i )", "case_1"))  # white space is folded
            assert backend.apply(toy, "l", closing, 1) == ()
            with pytest.raises(MethodNotApplicable, match="no method 2"):
                backend.apply(toy, "l", closing, 2)
            with pytest.raises(PathError, match="closed"):
                backend.observe(toy, "l", (*closing, ("contradiction", "x")))
            with pytest.raises(PathError, match="no case 'nope'"):
                backend.observe(toy, "l", (("simplify", "nope"),))
            with pytest.raises(UnknownLemma):
                backend.observe(toy, "m", ())
        asked = len(fake.requests)
        # A fresh backend (another replica) replays a deep path: initialcs + two executions.
        with JsonApiBackend(ExistingServer(fake.base_url, "protocol fake")) as replica:
            assert replica.observe(toy, "l", solved).status == "solved"
        assert len(fake.requests) - asked == 4  # /, initialcs, simplify, solve
    finally:
        fake.close()
