"""Stand-ins for Tamarin built from recorded runs: a loopback HTTP server that replays a recorded
interactive transcript byte for byte, and a ``tamarin-prover`` executable that replays recorded
batch runs (``write_batch_prover``).

The transcripts in ``environments/tamarin/data/`` are real ``tamarin-prover interactive`` 1.8.0
exchanges. This server answers each recorded GET path with the recorded body and content type,
and anything else with 404 and a plain message: it invents nothing, so a driver that makes a
request the real server was never asked fails loudly. It is not Tamarin.
"""

from __future__ import annotations

import hashlib
import json
import stat
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from environments.datafiles import open_text


@dataclass(frozen=True)
class Record:
    """One recorded exchange."""

    method: str
    path: str
    content_type: str
    seconds: float
    body: str


def read_transcript(path: Traversable) -> list[Record]:
    """Records of a JSON Lines transcript, plain or compressed (``.gz``, ``.xz``)."""
    with open_text(path) as lines:
        return [Record(**json.loads(line)) for line in lines if line.strip()]


class ReplayServer:
    """``with ReplayServer(records) as fake: fake.base_url …``; ``fake.requests`` lists the
    paths asked, in order. Paths in ``hang`` are accepted and never answered (until the server
    closes), to play a prover that hangs."""

    def __init__(self, records: Iterable[Record], hang: Iterable[str] = ()) -> None:
        self.routes: dict[str, tuple[str, bytes]] = {}
        for record in records:
            body = (record.content_type, record.body.encode("utf-8"))
            # A path recorded twice (an index re-read) must have answered the same both times.
            assert self.routes.setdefault(record.path, body) == body, record.path
        self.hang = set(hang)
        self.requests: list[str] = []
        self.unrecorded: list[str] = []
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.requests.append(self.path)
                if self.path in fake.hang:
                    fake._closing.wait()
                    return
                found = fake.routes.get(self.path)
                if found is None:
                    fake.unrecorded.append(self.path)
                    self._send(404, "text/plain; charset=utf-8", b"not in the transcript\n")
                else:
                    self._send(200, *found)

            def _send(self, code: int, content_type: str, body: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def serve(records: Iterable[Record], hang: Iterable[str] = ()) -> Iterator[ReplayServer]:
    """A pytest fixture body: yields a running replay server."""
    with ReplayServer(records, hang) as fake:
        yield fake


# --- a stand-in ``tamarin-prover`` binary for batch runs ---------------------------------------

_BATCH_PROVER = '''#!{python}
"""A stand-in tamarin-prover (not Tamarin): answers --version, and for FILE prints the stdout
a real run recorded for that exact file (by SHA-256); an unrecorded file is refused."""
import hashlib, json, sys
if sys.argv[1:] == ["--version"]:
    print("tamarin-prover 1.8.0, (C) David Basin, Cas Cremers, Jannik Dreier, Simon Meier, "
          "Ralf Sasse, Benedikt Schmidt, 2010-2023 (stand-in)")
    sys.exit(0)
runs = json.load(open({runs!r}, encoding="utf-8"))
digest = hashlib.sha256(open(sys.argv[-1], "rb").read()).hexdigest()
if digest not in runs:
    sys.stderr.write("stand-in tamarin-prover: this file was never recorded\\n")
    sys.exit(2)
sys.stdout.write(open(runs[digest], encoding="utf-8").read())
'''


def write_batch_prover(folder: Path, runs: Mapping[str, Path]) -> Path:
    """A stand-in ``tamarin-prover`` executable in ``folder`` that replays recorded batch runs:
    ``runs`` maps the exact text of a theory file (proof inserted) to the file holding what
    ``tamarin-prover FILE`` printed for it. Returns the executable's path."""
    table = folder / "tamarin-runs.json"
    table.write_text(
        json.dumps(
            {hashlib.sha256(text.encode()).hexdigest(): str(out) for text, out in runs.items()}
        ),
        encoding="utf-8",
    )
    script = folder / "tamarin-prover"
    script.write_text(_BATCH_PROVER.format(python=sys.executable, runs=str(table)), "utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script
