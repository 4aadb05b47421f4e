"""Shared fixtures: a real uvicorn server on loopback, started as its own process.

Everything the tests read ships with the project: the families' data inside the package
(``environments/*/data``), test-only fixtures under ``tests/fixtures``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.backends import SandboxConfig, open_sandbox
from sandbox.runner import Sandbox
from tests.postgres_support import PostgresUnavailable, postgres_server
from tests.server import LiveServer

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TAMARIN_BATCH = FIXTURES / "tamarin" / "batch"
"""Recorded tamarin-prover batch runs (GPL-3.0 data, see its README)."""
# The test servers also load verifiers that hang, spin, crash and raise on purpose.
# Plugins the caller configured (tests/test_guide.py runs the contract tests on its own) stay.
# They skip the pool's warm-up: a run starts about 40 servers, each warm-up costs about 1.3 CPU-s
# a worker, and most servers call few families (tests/test_warm_up.py and the configured server
# keep it).
TEST_SERVER_ENV = {
    "ENVSERVER_PLUGINS": ",".join(
        filter(None, ["tests.plugins.faulty", os.environ.get("ENVSERVER_PLUGINS")])
    ),
    "ENVSERVER_SERVER_PROCESSES": "1",  # the default is one per core; tests read one process
    "ENVSERVER_POOL_WORKERS": "2",
    "ENVSERVER_WARM_UP": "false",
}


# The files that take longest (seconds on one worker of a 4-worker run on 2 cores, summed per
# file from --durations, the container tests in the run), longest first. xdist hands whole files
# to workers in collection order (pyproject's --no-loadscope-reorder: by default it orders files
# by their count of tests instead): started first, they run beside the many short files instead
# of after them.
# Re-measure when a file grows. (`make test` runs the Ray file on its own, before these.)
LONGEST_FIRST = (
    "test_search.py",  # 241 s: budget-bound: 20 s a shipped family, and the control
    "test_sva_rewrites.py",  # 230 s
    "test_contracts.py",  # 194 s
    "test_sbol_family.py",  # 184 s
    "test_evo_server.py",  # 151 s
    "test_stream.py",  # 142 s
    "test_cli.py",  # 120 s
    "test_pool_recovery.py",  # 119 s
    "test_sva_checker.py",  # 115 s
    "test_evo_restart.py",  # 107 s
    "test_fuzz.py",  # 101 s
    "test_redteam.py",  # 100 s
    "test_sandbox_attacks.py",  # 98 s
    "test_compose.py",  # 96 s: the stack starts twice
    "test_evo_admission.py",  # 92 s
    "test_curriculum_server.py",  # 91 s
    "test_api.py",  # 84 s
    "test_guide.py",  # 71 s
    "test_alfworld_differential.py",  # 71 s
    "test_playground.py",  # 70 s
    "test_processes.py",  # 61 s
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def make_server(workdir: Path, *args: str, **env: str) -> LiveServer:
    """A server configured like the shared one, plus ``env``, started with ``serve *args``;
    not started."""
    return LiveServer(workdir, *args, **{**TEST_SERVER_ENV, **env})


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One shared server for the end-to-end tests (open: no API keys)."""
    with make_server(tmp_path_factory.mktemp("server")) as server:
        yield server


RESTRICTED_KEY = "tester:restricted-key-0123"
RESTRICTED = {
    # API keys; FVEval data where there is none and a backend that needs an absent binary (so
    # the sva sets and, without Tamarin here, tamarin/proof are disabled); no sandbox (none);
    # tight limits, so 413, 429 and 504 are easy to reach.
    "ENVSERVER_API_KEYS": RESTRICTED_KEY,
    "ENVSERVER_NL2SVA_DATA": "/nonexistent/nl2sva",
    "ENVSERVER_TAMARIN_BACKEND": "interactive",
    "ENVSERVER_SANDBOX_BACKEND": "none",
    "ENVSERVER_POOL_WORKERS": "1",
    "ENVSERVER_MAX_QUEUE_ITEMS": "3",
    "ENVSERVER_MAX_BATCH_ITEMS": "8",
    "ENVSERVER_MAX_BODY_BYTES": "65536",
    "ENVSERVER_REQUEST_TIMEOUT_S": "1",
}


@pytest.fixture(scope="session")
def restricted_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A second server configured to refuse: keys required (``RESTRICTED_KEY``), families
    disabled, no sandbox, tight limits."""
    with make_server(tmp_path_factory.mktemp("restricted"), **RESTRICTED) as server:
        yield server


STATS_KEYS = {
    "alice": "alice-key-0123456789",
    "bob": "bob-key-0123456789",
    "fuzzer": "fuzzer-key-0123456789",
}
"""The keys of ``stats_server``: each caller's runs are its own (the fuzzer's stay apart from
the tests that count theirs)."""


@pytest.fixture(scope="session")
def stats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server keeping task statistics (SQLite in its data directory, written every 0.1 s)
    for two API keys (``STATS_KEYS``): the curriculum's, reverify's and pass@k's tests."""
    keys = ",".join(f"{name}:{key}" for name, key in STATS_KEYS.items())
    workdir = tmp_path_factory.mktemp("stats")
    env = {"ENVSERVER_STATS": "1", "ENVSERVER_STATS_FLUSH_S": "0.1", "ENVSERVER_API_KEYS": keys}
    with make_server(workdir, **env) as server:
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


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A real PostgreSQL server (Debian's package) for one test module: its URL."""
    try:
        with postgres_server() as url:
            yield url
    except PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL could not start here: {exc}")
