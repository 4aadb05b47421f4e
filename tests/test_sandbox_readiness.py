"""A server whose configured sandbox cannot start is not ready, says why and what to do, and
runs no program anywhere: its verifier workers do not start a sandbox of their own in its
place, so code items score ``error`` (never a reward from another backend, never 0).
``ENVSERVER_SANDBOX_BACKEND=none`` is the way to serve without a sandbox, and is ready.

Real servers on loopback; the docker backend is pointed at an engine socket that does not exist
(so the test means the same with or without an engine on the machine).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from envserver.testing import SOURCE
from tests.conftest import make_server

CODE_ITEM = {
    "response": "```python\nprint(sum(map(int, input().split())))\n```",
    "reference": {"tests": {"kind": "stdin", "items": [{"stdin": "2 3", "stdout": "5"}]}},
}


@contextmanager
def started(workdir: Path, **env: str) -> Iterator[httpx.Client]:
    """A server that has finished starting (``/healthz`` answers 200), ready or not: a client
    on its URL."""
    server = make_server(workdir, ENVSERVER_POOL_WORKERS="1", **env)
    with server.log.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "envserver.cli", "serve"],
            cwd=SOURCE,
            env=server.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server.process = process
    try:
        with httpx.Client(base_url=server.base_url, timeout=60) as client:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                assert process.poll() is None, server.log.read_text()
                try:
                    if client.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
            else:
                pytest.fail(f"the server did not start:\n{server.log.read_text()}")
            yield client
    finally:
        server.stop()


def _verify(client: httpx.Client) -> dict[str, Any]:
    reply = client.post("/v1/verify", json={"verifier": "code", "items": [CODE_ITEM]})
    assert reply.status_code == 200, reply.text
    result: dict[str, Any] = reply.json()["results"][0]
    return result


def test_a_docker_backend_without_an_engine_leaves_the_server_unready(tmp_path: Path) -> None:
    env = {
        "ENVSERVER_SANDBOX_BACKEND": "docker",
        "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock",
    }
    with started(tmp_path, **env) as client:
        ready = client.get("/readyz")
        assert ready.status_code == 503, ready.text
        detail = ready.json()["detail"]
        assert "docker backend is unavailable" in detail, detail
        assert "ENVSERVER_SANDBOX_BACKEND" in detail, detail  # the fix is named
        assert ready.json()["sandbox"] == "unavailable"
        health = client.get("/healthz").json()  # alive (a restart would not help), degraded
        assert health["degraded"] and "docker backend is unavailable" in health["detail"], health
        assert client.post("/v1/sandbox/run", json={"source": "print(1)"}).status_code == 503
        result = _verify(client)  # no worker ran it in a sandbox of its own
        assert (result["status"], result["reward"]) == ("error", None), result
        assert "did not start" in result["detail"], result
        assert "isolation" not in result["extra"], result


def test_backend_none_serves_without_a_sandbox_and_is_ready(tmp_path: Path) -> None:
    with started(tmp_path, ENVSERVER_SANDBOX_BACKEND="none") as client:
        ready = client.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["sandbox"] == "none"
        assert not client.get("/healthz").json()["degraded"]
        result = _verify(client)
        assert (result["status"], result["reward"]) == ("error", None), result
        assert "ENVSERVER_SANDBOX_BACKEND=none" in result["detail"], result


def test_a_server_that_stops_puts_its_process_sandbox_back(tmp_path: Path) -> None:
    # An app run in a process that goes on (a test's) must not leave that process's sandbox
    # pointing at a socket that is gone, or failing every call with the stopped server's reason.
    from fastapi.testclient import TestClient

    import sandbox
    from envserver.app import create_app
    from envserver.config import Settings

    before = {name: os.environ.get(name) for name in (sandbox.SOCKET_ENV, sandbox.UNAVAILABLE_ENV)}
    settings = Settings(data_dir=tmp_path, pool_workers=1, warm_up=False, sandbox_backend="none")
    with TestClient(create_app(settings)):
        assert os.environ.get(sandbox.UNAVAILABLE_ENV)  # its own threads reach no sandbox
    after = {name: os.environ.get(name) for name in before}
    assert after == before
