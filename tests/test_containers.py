"""The docker sandbox backend for real: a server whose sandbox workers run in containers of
``envserver-sandbox:latest`` scores the code family (its experts' answers in every format and
language, and its red-team suite through ``envserver audit``), and its records say
``container``; the images run as their non-root users. The attack suite runs through the same
backend (``tests/test_sandbox_attacks.py``, its ``docker`` parameter).

Skipped with the reason without an engine or the images (failed instead where CI provides them:
``tests/docker_support.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from environments.code.family import CodeTaskOptions, CodeTasks
from environments.task_id import TaskId
from tests import docker_support
from tests.conftest import make_server
from tests.server import ROOT, LiveServer

pytestmark = pytest.mark.timeout(900)
FAMILY = CodeTasks()
WRONG = {  # a program that runs and answers 0 to everything
    "python": "```python\nprint(0)\n```",
    "cpp": '```cpp\n#include <cstdio>\nint main() { std::puts("0"); }\n```',
}


@pytest.fixture(scope="module")
def docker_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server whose sandbox is the docker backend (two worker containers)."""
    docker_support.require(("envserver-sandbox:latest",))
    server = make_server(
        tmp_path_factory.mktemp("docker-server"),
        ENVSERVER_SANDBOX_BACKEND="docker",
        ENVSERVER_SANDBOX_WORKERS="2",
        DOCKER_HOST=docker_support.docker_host(),
    )
    with server:
        yield server


def test_the_server_reports_container_isolation(docker_server: LiveServer) -> None:
    with httpx.Client(base_url=docker_server.base_url, timeout=60) as http:
        assert http.get("/readyz").json()["sandbox"] == "container"
        assert http.get("/v1/sandbox").json()["isolation"] == "container"
        record = http.post("/v1/sandbox/run", json={"source": "print(6 * 7)"}).json()
        assert (record["status"], record["stdout"], record["isolation"]) == (
            "ok",
            "42\n",
            "container",
        ), record


@pytest.mark.parametrize("fmt", ["stdin", "call", "assert"])
def test_the_code_family_experts_score_one_in_containers(
    docker_server: LiveServer, fmt: str
) -> None:
    """Six problems in each test format (and in C++ for stdin): the expert's answer scores 1
    and a wrong one less, judged from programs run in the containers."""
    languages = ["python", "cpp"] if fmt == "stdin" else ["python"]
    items = []
    for language in languages:
        for seed in range(6):
            options = {"difficulty": "medium", "format": fmt, "language": language}
            task_id = TaskId.format(FAMILY.id, FAMILY.version, seed, options)
            task = FAMILY.generate(seed, CodeTaskOptions.model_validate(options))
            items.append({"task_id": task_id, "response": FAMILY.expert_response(task)})
            items.append({"task_id": task_id, "response": WRONG[language]})
    with httpx.Client(base_url=docker_server.base_url, timeout=600) as http:
        reply = http.post("/v1/verify", json={"items": items})
    assert reply.status_code == 200, reply.text
    results = reply.json()["results"]
    experts, wrong = results[0::2], results[1::2]
    assert [r for r in experts if (r["status"], r["reward"]) != ("ok", 1.0)] == []
    assert [r for r in wrong if r["status"] != "ok" or r["reward"] >= 1.0] == []  # print 0
    assert all(r["extra"]["isolation"] == "container" for r in results), results


def test_the_code_red_team_suite_holds_in_containers(docker_server: LiveServer) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "envserver.cli", "audit", "--url", docker_server.base_url,
         "--env", "code", "--json"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    results = json.loads(run.stdout)["results"]
    assert results and all(r["verdict"] == "pass" for r in results), results


@pytest.mark.parametrize(
    ("image", "user"),
    [
        ("envserver:latest", "envserver"),
        ("envserver-sandbox:latest", "nobody"),
        ("envserver-balancer:latest", "www-data"),
        ("envserver-postgres:latest", "postgres"),
    ],
)
def test_each_image_runs_as_its_non_root_user(image: str, user: str) -> None:
    docker_support.require((image,))
    whoami = docker_support.docker("run", "--rm", "--network", "none", image, "id", "-un")
    assert whoami.strip() == user
