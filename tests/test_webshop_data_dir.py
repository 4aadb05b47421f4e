"""WebShop keeps its search index under the server's data directory, never in the package tree.

Issue 24: the index went to ``<checkout>/data/webshop`` whatever ``ENVSERVER_DATA_DIR`` said.
"""

from __future__ import annotations

import random
from pathlib import Path

import httpx

from tests.conftest import make_server
from tests.server import ROOT


def _files(root: Path) -> set[Path]:
    # Everything under the checkout the server might write to, bytecode caches aside.
    return {
        path
        for folder in (root / "data", root / "environments", root / "verifiers")
        if folder.exists()
        for path in folder.rglob("*")
        if "__pycache__" not in path.parts
    }


def test_the_index_lives_in_the_servers_data_directory(tmp_path: Path) -> None:
    before = _files(ROOT)
    # A catalogue seed of its own: an index for it cannot exist anywhere yet.
    seed = str(random.SystemRandom().randrange(10**6, 10**9))
    env = {
        "ENVSERVER_WEBSHOP_PRODUCTS": "300",
        "ENVSERVER_WEBSHOP_SEED": seed,
        "ENVSERVER_WEBSHOP_CACHE": "",  # unset: the default is what is under test
    }
    with make_server(tmp_path, **env) as server, httpx.Client(base_url=server.base_url) as http:
        reset = http.post("/v1/envs/webshop/reset", json={"seed": 1}, timeout=120).json()
        step = http.post(
            "/v1/envs/webshop/step",
            json={"state": reset["state"], "action": "search[shoes]"},
            timeout=120,
        ).json()
        assert step["status"] == "ok", step
    built = [path for path in (tmp_path / "data" / "webshop" / "index").iterdir() if path.is_dir()]
    assert len(built) == 1 and any(built[0].iterdir())
    assert _files(ROOT) == before
