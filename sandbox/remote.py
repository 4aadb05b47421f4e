"""The server's sandbox, reachable from its verifier worker processes over a Unix socket.

The server owns one pool of sandbox workers; verifiers run in other processes (the executor's
pool), so they reach it through ``RemoteSandbox``, which has the same methods as ``Sandbox``.
The socket lives in a directory only the server's user can enter. Where the server's sandbox did
not start, they get ``UnavailableSandbox``: every call fails with the reason (so items score
``error``), and nothing starts a sandbox of its own in its place.
"""

from __future__ import annotations

import logging
import socket
import socketserver
import threading
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ValidationError

from sandbox import frames
from sandbox.model import Limits, RunRecord, RunRequest
from sandbox.pool import Overloaded
from sandbox.runner import MatrixRequest, MatrixResult, Sandbox, SandboxInputError, TestRun
from sandbox.testcases import JudgeOptions, TestSuite

log = logging.getLogger("envserver.sandbox")


class _TestCall(BaseModel):
    language: str
    source: str
    suite: TestSuite
    per_test_s: float
    limits: Limits
    options: JudgeOptions


def _dispatch(sandbox: Sandbox, message: dict[str, Any]) -> dict[str, Any]:
    method, params = message.get("method"), message.get("params") or {}
    if method == "run":
        return sandbox.run(RunRequest.model_validate(params)).model_dump()
    if method == "run_many":
        requests = [RunRequest.model_validate(item) for item in params["items"]]
        return {"items": [record.model_dump() for record in sandbox.run_many(requests)]}
    if method == "matrix":
        return sandbox.matrix(MatrixRequest.model_validate(params)).model_dump()
    if method == "test":
        call = _TestCall.model_validate(params)
        run = sandbox.test(
            call.language,
            call.source,
            call.suite,
            per_test_s=call.per_test_s,
            limits=call.limits,
            options=call.options,
        )
        return run.model_dump()
    if method == "isolation":
        return {"isolation": sandbox.isolation}
    raise SandboxInputError(f"unknown method {method!r}")


class SandboxSocketServer:
    """Serves ``sandbox`` on a Unix socket at ``path`` from a thread per connection."""

    def __init__(self, sandbox: Sandbox, path: str) -> None:
        self.path = path
        Path(path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        Path(path).unlink(missing_ok=True)

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                fd = self.request.fileno()
                while True:
                    try:
                        message = frames.read(fd)
                    except (frames.FrameError, OSError):
                        return
                    reply: dict[str, Any]
                    try:
                        reply = {"ok": _dispatch(sandbox, message)}
                    except (SandboxInputError, ValidationError) as exc:
                        reply = {"input_error": str(exc)}
                    except Overloaded as exc:
                        reply = {"overloaded": str(exc)}
                    except Exception as exc:
                        log.exception("sandbox request failed")
                        reply = {"error": f"{type(exc).__name__}: {exc}"}
                    try:
                        frames.write(fd, reply)
                    except OSError:
                        return

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        self.server = Server(path, Handler)
        Path(path).chmod(0o600)
        self.thread = threading.Thread(
            target=self.server.serve_forever, name="sandbox-socket", daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        """Stop serving and remove the socket."""
        self.server.shutdown()
        self.server.server_close()
        Path(self.path).unlink(missing_ok=True)


class RemoteSandbox:
    """``Sandbox``'s methods, executed by the server that owns the socket at ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._local = threading.local()

    def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        for attempt in (1, 2):  # a connection the server closed since the last call: redial once
            sock = getattr(self._local, "sock", None)
            if sock is None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.connect(self.path)
                self._local.sock = sock
            try:
                frames.write(sock.fileno(), {"method": method, "params": params})
                reply = frames.read(sock.fileno())
                break
            except (OSError, frames.FrameError):
                sock.close()
                self._local.sock = None
                if attempt == 2:
                    raise
        if "ok" in reply:
            return dict(reply["ok"])
        if "input_error" in reply:
            raise SandboxInputError(reply["input_error"])
        if "overloaded" in reply:
            raise Overloaded(reply["overloaded"])
        raise OSError(str(reply.get("error")))

    @property
    def isolation(self) -> str:
        return str(self._call("isolation", {})["isolation"])

    def run(self, request: RunRequest) -> RunRecord:
        return RunRecord.model_validate(self._call("run", request.model_dump()))

    def test(
        self,
        language: str,
        source: str,
        suite: TestSuite,
        *,
        per_test_s: float,
        limits: Limits,
        options: JudgeOptions,
    ) -> TestRun:
        params = {
            "language": language,
            "source": source,
            "suite": suite.model_dump(),
            "per_test_s": per_test_s,
            "limits": limits.model_dump(),
            "options": options.model_dump(),
        }
        return TestRun.model_validate(self._call("test", params))

    def run_many(self, requests: list[RunRequest]) -> list[RunRecord]:
        reply = self._call("run_many", {"items": [r.model_dump() for r in requests]})
        return [RunRecord.model_validate(item) for item in reply["items"]]

    def matrix(self, request: MatrixRequest) -> MatrixResult:
        return MatrixResult.model_validate(self._call("matrix", request.model_dump()))


class UnavailableSandbox:
    """``Sandbox``'s methods, each failing with why the server's sandbox did not start."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def _refuse(self) -> NoReturn:
        raise OSError(f"the server's sandbox did not start: {self.reason}")

    @property
    def isolation(self) -> str:
        return "unavailable"

    def run(self, request: RunRequest) -> RunRecord:
        self._refuse()

    def test(
        self,
        language: str,
        source: str,
        suite: TestSuite,
        *,
        per_test_s: float,
        limits: Limits,
        options: JudgeOptions,
    ) -> TestRun:
        self._refuse()

    def run_many(self, requests: list[RunRequest]) -> list[RunRecord]:
        self._refuse()

    def matrix(self, request: MatrixRequest) -> MatrixResult:
        self._refuse()
