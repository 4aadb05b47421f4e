"""Fork safety: importing the families starts nothing, and a worker forked after the import
warms up (issue 24: a prover run at import left the pool's workers waiting for ever on a
thread that did not survive the fork, and a server with Tamarin configured never became ready).

The probe (``tests/fork_probe.py``) runs in a fresh interpreter with every optional tool this
machine can configure: a stand-in ``tamarin-prover``, ``ALFWORLD_DATA`` with games in the
released layout, and the evo store.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from tests.optional_tools import optional_tools
from tests.server import ROOT

WARM_UP_BOUND_S = 120.0
"""Generous: a warm-up takes seconds (the sandbox starts in the child); a hang never ends."""


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("fork")
    env = {
        **os.environ,
        **optional_tools(folder),
        "ENVSERVER_DATA_DIR": str(folder / "data"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    run = subprocess.run(
        [sys.executable, "-m", "tests.fork_probe", str(WARM_UP_BOUND_S)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WARM_UP_BOUND_S + 120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    found: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    found["stderr"] = run.stderr
    return found


def test_importing_the_families_starts_no_thread_process_or_socket(probe: dict[str, Any]) -> None:
    started = "\n".join(f"{s['kind']} {s['what']} at\n{s['where']}" for s in probe["side_effects"])
    assert not probe["side_effects"], f"started at import time:\n{started}"
    assert probe["threads_after_import"] == []


def test_a_worker_forked_after_the_imports_warms_up(probe: dict[str, Any]) -> None:
    assert probe["child"] == "ok", (
        f"the forked worker's warm-up did not finish ({probe['child']}):\n"
        + probe["stderr"][-4000:]
    )
