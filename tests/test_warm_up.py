"""ENVSERVER_WARM_UP: by default every one of the pool's first workers runs each verifier's
example before it takes items (the server is ready once one has); off, none runs them and the
first call of each verifier does."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import make_server
from tests.plugins.warm_marker import MARKS

MARKER = "tests.plugins.warm_marker"


def _marks(folder: Path) -> set[int]:
    return {int(p.name) for p in folder.iterdir()} if folder.exists() else set()


@pytest.mark.parametrize("warm_up", [True, False])
def test_workers_are_warm_before_they_take_items_unless_warm_up_is_off(
    tmp_path: Path, warm_up: bool
) -> None:
    env = {"ENVSERVER_PLUGINS": MARKER, "ENVSERVER_WARM_UP": str(warm_up).lower()}
    with (
        make_server(tmp_path, **env) as server,
        httpx.Client(base_url=server.base_url, timeout=60) as http,
    ):
        marks = Path(server.env["ENVSERVER_DATA_DIR"]) / MARKS
        # Ready: a worker takes items, and it is warm.
        assert bool(_marks(marks)) == warm_up
        deadline = time.monotonic() + 120
        while (health := http.get("/healthz").json())["pool_ready"] < health["pool_workers"]:
            assert time.monotonic() < deadline, health
            time.sleep(0.1)
        assert len(_marks(marks)) == (health["pool_workers"] if warm_up else 0), health
        # Either way the verifier answers; off, the call below is the first that ran it.
        item = {"response": "warm", "reference": "warm"}
        reply = http.post("/v1/verify", json={"verifier": "test.warm_marker", "items": [item]})
        assert reply.status_code == 200, reply.text
        assert reply.json()["results"][0]["reward"] == 1.0
        assert len(_marks(marks)) == (health["pool_workers"] if warm_up else 1)
