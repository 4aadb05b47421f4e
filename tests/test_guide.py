"""CONTRIBUTING.md's "Adding a family" examples, run as written: each code block (a family as one
declaration) becomes a plugin module, and the contract tests that pick up every family run on it,
over a live server too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import make_server
from tests.server import ROOT, LiveServer

GUIDE = ROOT / "CONTRIBUTING.md"
MODULES = ("guide_reverse", "guide_guess")


def write_examples(folder: Path) -> dict[str, str]:
    """The guide's Python blocks as modules in ``folder``: the single-turn one, the multi-turn
    one, each with the TOML block after it as its red-team suite beside it. Returns PYTHONPATH
    and ENVSERVER_PLUGINS for a process that should load them."""
    text = GUIDE.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    suites = re.findall(r"```toml\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) == len(MODULES), "the guide holds one single-turn and one multi-turn example"
    assert len(suites) == len(MODULES), "the guide holds one red-team suite per example"
    for name, code, suite in zip(MODULES, blocks, suites, strict=True):
        (folder / f"{name}.py").write_text(code)
        (folder / f"{name}.redteam.toml").write_text(suite)
    path = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": path, "ENVSERVER_PLUGINS": ",".join(MODULES)}


def test_the_contract_tests_pick_up_the_guides_families(tmp_path: Path) -> None:
    env = {**os.environ, **write_examples(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "reverse or guess",
         "tests/test_contracts.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    summary = run.stdout.strip().splitlines()[-1]
    # Every per-environment contract test ran for both families, and the verifier's example.
    passed = int(re.search(r"(\d+) passed", summary).group(1))  # type: ignore[union-attr]
    assert passed >= 2 * 7 + 1, summary
    assert "failed" not in summary and "error" not in summary, summary


def test_the_guides_families_are_served(tmp_path: Path) -> None:
    server: LiveServer
    with make_server(tmp_path / "server", **write_examples(tmp_path)) as server:
        http = httpx.Client(base_url=server.base_url, timeout=30)
        catalogue = http.get("/v1/envs").json()
        assert {"reverse", "guess"} <= {e["id"] for e in catalogue["envs"]}
        reset = http.post("/v1/envs/reverse/reset", json={"seed": 7, "options": {"words": 2}})
        assert reset.status_code == 200, reset.text
        task_id = reset.json()["task_id"]
        assert task_id == "reverse@1/7?words=2"
        text = reset.json()["observation"].split(": ", 1)[1].splitlines()[0]
        items = [
            {"task_id": task_id, "response": f"Answer: {text[::-1]}"},
            {"task_id": task_id, "response": f"Answer: {text}"},
            {"task_id": task_id, "response": "no answer line"},
        ]
        results = http.post("/v1/verify", json={"items": items}).json()["results"]
        assert [(r["status"], r["reward"]) for r in results] == [
            ("ok", 1.0),
            ("ok", 0.0),
            ("invalid", 0.0),
        ]
        # The multi-turn one, played by bisection from its hints.
        state = http.post("/v1/envs/guess/reset", json={"seed": 3}).json()["state"]
        low, high = 1, 100
        for _ in range(10):
            guess = (low + high) // 2
            step = http.post(
                "/v1/envs/guess/step", json={"state": state, "action": str(guess)}
            ).json()
            state = step["state"]
            if step["terminated"]:
                break
            low, high = (guess + 1, high) if step["observation"] == "Higher." else (low, guess - 1)
        assert step["terminated"] and step["reward"] == 1.0
        finished = http.post("/v1/envs/guess/step", json={"state": state, "action": "1"})
        assert finished.status_code == 409
