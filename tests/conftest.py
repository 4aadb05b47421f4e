"""Shared fixtures: a real uvicorn server on loopback, started as its own process."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from envserver.testing import ROOT, LiveServer
from sandbox.backends import SandboxConfig, open_sandbox
from sandbox.runner import Sandbox

SHARED = ROOT.parent / "shared"
TAMARIN_DATA = SHARED / "data" / "tamarin"
# The tamarin family replays recorded real-Tamarin runs here (no prover binary in CI); every
# process the tests start (servers, workers) inherits this.
os.environ.setdefault("ENVSERVER_TAMARIN_RECORDINGS", str(TAMARIN_DATA))
# The sva family serves FVEval's NL2SVA sets from here.
os.environ.setdefault("ENVSERVER_NL2SVA_DATA", str(SHARED / "data" / "nl2sva"))
# The test servers also load verifiers that hang, spin, crash and raise on purpose.
# Plugins the caller configured (tests/test_guide.py runs the contract tests on its own) stay.
TEST_PLUGINS = {
    "ENVSERVER_PLUGINS": ",".join(
        filter(None, ["tests.plugins.faulty", os.environ.get("ENVSERVER_PLUGINS")])
    ),
    "ENVSERVER_POOL_WORKERS": "2",
}


def make_server(workdir: Path, **env: str) -> LiveServer:
    """A server configured like the shared one, plus ``env``; not started."""
    return LiveServer(workdir, **{**TEST_PLUGINS, **env})


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One shared server for the end-to-end tests (open: no API keys)."""
    with make_server(tmp_path_factory.mktemp("server")) as server:
        yield server


@pytest.fixture(scope="session")
def base_url(live_server: LiveServer) -> str:
    """The shared server's URL."""
    return live_server.base_url


@pytest.fixture(scope="session")
def local_sandbox() -> Iterator[Sandbox]:
    """A sandbox with full isolation (namespaces), shared by the sandbox tests."""
    sandbox = open_sandbox(SandboxConfig(backend="local", workers=2))
    yield sandbox
    sandbox.close()
