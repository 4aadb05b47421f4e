"""``InteractiveBackend``: proofs driven through an unmodified ``tamarin-prover interactive``.

How the server is used (reference ``tamarin.md`` §3): every method application creates a new,
persistent theory index and old indices stay valid, so a node is named on the server by
``(theory index, lemma, case path)``. This backend caches, per theory digest, the handle of
every node it has seen: ``(lemma, Path) → (theory index, case path)``, with the index at which
the node was first reached; it addresses the node at the newest index where it is still
untouched (no later application at it or an ancestor on the way), else at that first index,
where it is still open, so any of its methods can be applied: that is how tree search branches.
A path missing from the cache is replayed from the nearest cached ancestor, one method
application per step, choosing each step's method by its text. The cache is an optimisation; the
path is the source of truth.

One server process per theory digest, reused across calls; at most ``max_servers`` live (the
least recently used one is stopped, and its cache entries go with it). A request that runs
past ``request_timeout_s`` stops and reaps the process and raises ``ProverTimeout``; the next
call starts a fresh server and replays.

The ``Launcher`` seam starts a server and says where it listens: ``TamarinLauncher`` spawns the
real binary; tests use a launcher that points at an already running (fake) server.
"""

from __future__ import annotations

import atexit
import socket
import subprocess
import tempfile
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any, Protocol, Self
from urllib.parse import quote

import httpx

from environments.tamarin.backend import Quantifier
from environments.tamarin.html import (
    ProofPage,
    encode_case_path,
    parse_index_page,
    parse_method_reply,
    parse_proof_reply,
)
from environments.tamarin.model import (
    MethodNotApplicable,
    NodeView,
    Path,
    PathError,
    ProverCrashed,
    ProverTimeout,
    ProverUnavailable,
    normalise_method,
)
from sandbox import tools
from verifiers.tamarin.prover import Prover, find_prover
from verifiers.tamarin.prover import limits as prover_limits
from verifiers.tamarin.theory import Theory, TheoryError

CasePath = tuple[str, ...]
"""Case names from the lemma's root as the server addresses them (``""`` = unnamed case)."""

_PORT_CLASH = ("address already in use", "resource busy")
_START_ATTEMPTS = 5


def _key(path: Path) -> Path:
    """A path with its method texts normalised, as the caches key it."""
    return tuple((normalise_method(method), case) for method, case in path)


@dataclass
class LaunchedServer:
    """A running interactive server: where it listens and, when this backend owns it, the
    process (stopped and reaped by ``stop``)."""

    base_url: str
    process: subprocess.Popen[bytes] | None = None
    output: tools.Tail | None = None
    workdir: tempfile.TemporaryDirectory[str] | None = None

    def exit_code(self) -> int | None:
        """The process's exit status once it has exited, else None (always None when this
        backend does not own the server)."""
        return None if self.process is None else self.process.poll()

    def output_tail(self) -> str:
        """The last lines the process printed ("" when not owned)."""
        return "" if self.output is None else self.output.text(wait_s=1.0)

    def stop(self) -> None:
        """Kill and reap the process (its whole session) and remove its files; idempotent."""
        if self.process is not None:
            tools.stop(self.process)
        if self.workdir is not None:
            self.workdir.cleanup()
            self.workdir = None


class Launcher(Protocol):
    """Starts an interactive server for one theory."""

    @property
    def prover(self) -> str:
        """The prover's name and version, e.g. ``tamarin-prover 1.8.0``."""
        ...

    def launch(self, theory: Theory) -> LaunchedServer:
        """Start a server that loads ``theory`` (it need not be ready yet)."""
        ...


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class TamarinLauncher:
    """Spawns ``tamarin-prover interactive --interface=127.0.0.1 --port=P DIR`` with the theory
    alone in a private temporary directory, through ``sandbox.tools`` (the prover's limits, own
    session, dies with us)."""

    def __init__(self, prover: Prover | None = None, extra_args: Iterable[str] = ()) -> None:
        found = prover or find_prover()
        if found is None:
            raise ProverUnavailable(
                "no tamarin-prover binary: install Tamarin ≥ 1.8 and put it on PATH, or name it "
                "in $TAMARIN_PROVER"
            )
        self._binary = found
        self._extra = tuple(extra_args)

    @property
    def prover(self) -> str:
        """The binary's name and version."""
        return str(self._binary)

    def launch(self, theory: Theory) -> LaunchedServer:
        """Write the theory to a fresh directory and start the server on a free port."""
        workdir = tempfile.TemporaryDirectory(prefix="tamarin-")
        try:
            FsPath(workdir.name, f"{theory.name}.spthy").write_text(theory.text, encoding="utf-8")
            port = _free_port()
            args = [
                self._binary.path,
                "interactive",
                "--interface=127.0.0.1",
                f"--port={port}",
                *self._extra,
                workdir.name,
            ]
            process = tools.start(args, cwd=workdir.name, limits=prover_limits())
        except BaseException:
            workdir.cleanup()
            raise
        tail = tools.Tail((process.stdout, process.stderr))
        return LaunchedServer(f"http://127.0.0.1:{port}", process, tail, workdir)


class ExistingServer:
    """A launcher for a server someone else runs (a test fake, a shared server): returns its
    URL and owns no process."""

    def __init__(self, base_url: str, prover: str = "tamarin-prover (external server)") -> None:
        self._base_url = base_url
        self._prover = prover

    @property
    def prover(self) -> str:
        """What the caller says answers at the URL."""
        return self._prover

    def launch(self, theory: Theory) -> LaunchedServer:
        """Nothing to start."""
        return LaunchedServer(self._base_url)


@dataclass
class _Server:
    """One live server and what we know about its theory indices."""

    launched: LaunchedServer
    client: httpx.Client
    theory_index: int
    latest_index: int
    nodes: OrderedDict[tuple[str, Path], tuple[int, CasePath]] = field(default_factory=OrderedDict)
    # A theory index never changes once made, so a page read at one is cached for good.
    pages: OrderedDict[tuple[int, str, CasePath], ProofPage] = field(default_factory=OrderedDict)
    # new index → (the index it was made from, lemma, case path the method was applied at)
    parents: OrderedDict[int, tuple[int, str, CasePath]] = field(default_factory=OrderedDict)
    # (lemma, Path) → a backend's own node handle (the JSON fork's constraint-system blobs).
    handles: OrderedDict[tuple[str, Path], Any] = field(default_factory=OrderedDict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def close(self) -> None:
        self.client.close()
        self.launched.stop()


_LIVE: weakref.WeakSet[ServerPool] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:  # pragma: no cover - runs at interpreter exit
    for backend in list(_LIVE):
        backend.close()


class ServerPool:
    """Prover servers, one per theory digest, at most ``max_servers`` live (LRU), started
    through a ``Launcher``; requests with a time limit and error mapping. The base of the
    interactive and JSON-fork backends."""

    def __init__(
        self,
        launcher: Launcher | None = None,
        *,
        max_servers: int = 4,
        request_timeout_s: float = 120.0,
        startup_timeout_s: float = 120.0,
        max_cached_nodes: int = 50_000,
    ) -> None:
        self._launcher: Launcher = launcher if launcher is not None else self._default_launcher()
        self._max_servers = max_servers
        self._request_timeout_s = request_timeout_s
        self._startup_timeout_s = startup_timeout_s
        self._max_cached = max_cached_nodes
        self._servers: OrderedDict[str, _Server] = OrderedDict()
        self._lock = threading.Lock()
        self.requests = 0
        """HTTP requests made to prover servers (for tests and benchmarks)."""
        _LIVE.add(self)

    @staticmethod
    def _default_launcher() -> Launcher:
        return TamarinLauncher()

    @staticmethod
    def _parse_index(reply: httpx.Response) -> dict[str, int]:
        """Theory name → index from the server's ``/`` reply."""
        return parse_index_page(reply.text)

    @property
    def prover(self) -> str:
        """The prover's name and version."""
        return self._launcher.prover

    def lemmas(self, theory: Theory) -> dict[str, Quantifier]:
        """The lemmas as the theory text names them."""
        return dict(theory.lemmas)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every server this backend started; idempotent."""
        with self._lock:
            servers = list(self._servers.values())
            self._servers.clear()
        for server in servers:
            server.close()

    # -- servers --------------------------------------------------------------------------

    def _server(self, theory: Theory) -> _Server:
        with self._lock:
            server = self._servers.get(theory.digest)
            if server is not None:
                if server.launched.exit_code() is None:
                    self._servers.move_to_end(theory.digest)
                    return server
                # It died since the last call: report it once; the next call restarts.
                del self._servers[theory.digest]
                tail = server.launched.output_tail()
                server.close()
                raise ProverCrashed(f"the Tamarin server exited; its last output:\n{tail}")
            while len(self._servers) >= self._max_servers:
                _, old = self._servers.popitem(last=False)
                old.close()
            server = self._start(theory)
            self._servers[theory.digest] = server
            return server

    def _start(self, theory: Theory) -> _Server:
        for _ in range(_START_ATTEMPTS):
            launched = self._launcher.launch(theory)
            try:
                idx = self._wait_ready(launched, theory)
            except _PortClash:
                launched.stop()
                continue
            except BaseException:
                launched.stop()
                raise
            client = httpx.Client(base_url=launched.base_url, timeout=self._request_timeout_s)
            return _Server(launched, client, idx, idx)
        raise ProverUnavailable(f"no free port for a Tamarin server after {_START_ATTEMPTS} tries")

    def _wait_ready(self, launched: LaunchedServer, theory: Theory) -> int:
        """Poll ``GET /`` until the theory is listed; returns its index."""
        deadline = time.monotonic() + self._startup_timeout_s
        with httpx.Client(base_url=launched.base_url) as client:
            while True:
                code = launched.exit_code()
                if code is not None:
                    tail = launched.output_tail()
                    if any(word in tail.lower() for word in _PORT_CLASH):
                        raise _PortClash
                    raise TheoryError(
                        f"tamarin-prover exited with status {code} while loading theory "
                        f"{theory.name}; its last output:\n{tail}"
                    )
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ProverTimeout(
                        f"the Tamarin server did not start within {self._startup_timeout_s:g} s"
                    )
                try:
                    reply = client.get("/", timeout=min(5.0, max(left, 0.1)))
                    self.requests += 1
                except httpx.TransportError:
                    time.sleep(0.05)
                    continue
                if reply.status_code == 200:
                    listed = self._parse_index(reply)
                    if theory.name in listed:
                        return listed[theory.name]
                    # The server loads its theories before it listens: not listed = refused.
                    tail = launched.output_tail()
                    raise TheoryError(
                        f"Tamarin did not load theory {theory.name} (it lists "
                        f"{', '.join(listed) or 'no theory'}); its last output:\n{tail}"
                    )
                time.sleep(0.05)

    def _drop(self, server: _Server) -> None:
        with self._lock:
            for digest, live in list(self._servers.items()):
                if live is server:
                    del self._servers[digest]
        server.close()

    def _get(self, server: _Server, url: str, form: dict[str, str] | None = None) -> httpx.Response:
        """One GET (or a POST of ``form``); maps transport failures to ProverTimeout /
        ProverCrashed and forgets a server that failed (the next call starts a new one and
        replays). Answers other than 200 are returned to the caller."""
        try:
            reply = server.client.get(url) if form is None else server.client.post(url, data=form)
            self.requests += 1
        except httpx.TimeoutException:
            self._drop(server)
            raise ProverTimeout(
                f"Tamarin did not answer {url} within {self._request_timeout_s:g} s; the server "
                "was stopped"
            ) from None
        except httpx.TransportError as err:
            tail = server.launched.output_tail() if server.launched.exit_code() is not None else ""
            self._drop(server)
            raise ProverCrashed(f"the Tamarin server failed on {url}: {err}\n{tail}") from err
        return reply


class InteractiveBackend(ServerPool):
    """``ProofBackend`` over ``tamarin-prover interactive`` (≥ 1.8; 1.10+ rendering accepted)."""

    @property
    def name(self) -> str:
        """``interactive``."""
        return "interactive"

    def observe(self, theory: Theory, lemma: str, path: Path) -> NodeView:
        """The node at ``path`` (replayed from the nearest known ancestor when not cached)."""
        theory.require_lemma(lemma)
        server = self._server(theory)
        with server.lock:
            idx, cases = self._locate(server, lemma, path)
            return self._read(server, idx, lemma, cases).view

    def apply(self, theory: Theory, lemma: str, path: Path, rank: int) -> tuple[str, ...]:
        """Apply method ``rank`` at ``path``; the child cases in Tamarin's order."""
        theory.require_lemma(lemma)
        server = self._server(theory)
        with server.lock:
            idx, cases = self._locate(server, lemma, path)
            return self._apply(server, lemma, _key(path), idx, cases, rank)

    # -- low-level access by theory index, for callers that branch on indices themselves ---

    def theory_index(self, theory: Theory) -> int:
        """The index the server gave the freshly loaded theory."""
        return self._server(theory).theory_index

    def read(
        self, theory: Theory, idx: int, lemma: str, cases: CasePath, *, fresh: bool = False
    ) -> ProofPage:
        """``main/proof`` at theory index ``idx`` and case path ``cases``; ``fresh`` asks the
        server again instead of using the page cached for that index."""
        server = self._server(theory)
        with server.lock:
            if fresh:
                server.pages.pop((idx, lemma, cases), None)
            return self._read(server, idx, lemma, cases)

    def apply_at(self, theory: Theory, idx: int, lemma: str, rank: int, cases: CasePath) -> int:
        """``main/method``: apply method ``rank`` at index ``idx``; returns the new index."""
        server = self._server(theory)
        with server.lock:
            page = self._read(server, idx, lemma, cases)
            self._check_rank(page, rank, lemma, cases)
            return self._method(server, idx, lemma, rank, cases)

    def _get_ok(self, server: _Server, url: str) -> httpx.Response:
        reply = self._get(server, url)
        if reply.status_code == 404:
            raise PathError(f"the Tamarin server has no {url}: {reply.text[:200]}")
        if reply.status_code != 200:
            raise ProverCrashed(
                f"Tamarin answered {reply.status_code} to {url}: {reply.text[:300]}"
            )
        return reply

    # -- nodes ----------------------------------------------------------------------------

    def _read(self, server: _Server, idx: int, lemma: str, cases: CasePath) -> ProofPage:
        key = (idx, lemma, cases)
        page = server.pages.get(key)
        if page is None:
            url = f"/thy/trace/{idx}/main/proof/{quote(lemma, safe='')}{encode_case_path(cases)}"
            page = parse_proof_reply(self._get_ok(server, url).content)
            server.pages[key] = page
            if len(server.pages) > self._max_cached:
                server.pages.popitem(last=False)
        else:
            server.pages.move_to_end(key)
        return page

    def _method(self, server: _Server, idx: int, lemma: str, rank: int, cases: CasePath) -> int:
        url = (
            f"/thy/trace/{idx}/main/method/{quote(lemma, safe='')}/{rank}{encode_case_path(cases)}"
        )
        new = parse_method_reply(self._get_ok(server, url).content)
        server.latest_index = max(server.latest_index, new)
        server.parents[new] = (idx, lemma, cases)
        if len(server.parents) > self._max_cached:
            server.parents.popitem(last=False)
        return new

    @staticmethod
    def _newest(server: _Server, lemma: str, found: int, cases: CasePath) -> int:
        """The newest index at which the node first seen at ``found`` is still untouched: the
        latest index, when every application between the two was made outside the node and
        its ancestors (another branch, a sibling, another lemma); else ``found``.

        Reading at the newest index is what Tamarin's GUI and the recorder do (§10.2); any
        index where the node is untouched shows the same node.
        """
        current = server.latest_index
        while current > found:
            parent = server.parents.get(current)
            if parent is None:
                return found
            current, at_lemma, at_cases = parent
            if at_lemma == lemma and cases[: len(at_cases)] == at_cases:
                return found  # the node or one of its ancestors was changed on the way
        return server.latest_index if current == found else found

    @staticmethod
    def _check_rank(page: ProofPage, rank: int, lemma: str, cases: CasePath) -> None:
        count = len(page.view.methods)
        if not 1 <= rank <= count:
            where = "/".join(cases) or "the root"
            raise MethodNotApplicable(
                f"no method {rank} at {where} of {lemma}: the node offers {count} "
                f"(status {page.view.status})"
            )

    def _remember(
        self, server: _Server, key: tuple[str, Path], handle: tuple[int, CasePath]
    ) -> None:
        server.nodes[key] = handle
        server.nodes.move_to_end(key)
        if len(server.nodes) > self._max_cached:
            server.nodes.popitem(last=False)

    def _apply(  # noqa: PLR0917 - private; the node's parts travel together
        self, server: _Server, lemma: str, key: Path, idx: int, cases: CasePath, rank: int
    ) -> tuple[str, ...]:
        page = self._read(server, idx, lemma, cases)
        self._check_rank(page, rank, lemma, cases)
        text = normalise_method(page.view.methods[rank - 1].text)
        new = self._method(server, idx, lemma, rank, cases)
        # The sub-cases exist at the new index: read the same node there.
        children = self._read(server, new, lemma, cases).cases
        for name in children:
            self._remember(server, (lemma, (*key, (text, name))), (new, (*cases, name)))
        return children

    def _locate(self, server: _Server, lemma: str, path: Path) -> tuple[int, CasePath]:
        """The server handle of ``path``, replaying the steps below the nearest cached
        ancestor."""
        key = _key(path)
        depth = len(key)
        while depth >= 0 and (lemma, key[:depth]) not in server.nodes:
            depth -= 1
        if depth < 0:
            # A root we have not seen: the newest index holds every lemma's root.
            self._remember(server, (lemma, ()), (server.latest_index, ()))
            depth = 0
        idx, cases = self._handle(server, lemma, key[:depth])
        for method, case in key[depth:]:
            page = self._read(server, idx, lemma, cases)
            ranks = [
                i for i, m in enumerate(page.view.methods, 1) if normalise_method(m.text) == method
            ]
            if not ranks:
                offered = "; ".join(m.text for m in page.view.methods) or "none"
                raise MethodNotApplicable(
                    f"{method!r} is not offered at {'/'.join(cases) or 'the root'} of {lemma} "
                    f"(status {page.view.status}; offered: {offered})"
                )
            children = self._apply(server, lemma, key[:depth], idx, cases, ranks[0])
            if case not in children:
                listed = ", ".join(repr(c) for c in children) or "none: the method closed it"
                raise PathError(f"{method!r} has no case {case!r} (cases: {listed})")
            depth += 1
            idx, cases = self._handle(server, lemma, key[:depth])
        return idx, cases

    def _handle(self, server: _Server, lemma: str, key: Path) -> tuple[int, CasePath]:
        found, cases = server.nodes[(lemma, key)]
        server.nodes.move_to_end((lemma, key))
        return self._newest(server, lemma, found, cases), cases


class _PortClash(Exception):
    """The server could not bind its port (another process took it first)."""
