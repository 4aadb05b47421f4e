"""The container files are checked, not assumed (no Docker engine runs here): the compose file
against the Compose Specification's JSON schema (check-jsonschema's vendored copy), and the
Dockerfile, compose file and balancer against each other and the server's settings."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import yaml

from envserver.config import Settings
from tests.server import ROOT

COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
NGINX = ROOT / "deploy" / "nginx.conf"


def _schema_errors(compose_file: Path) -> str:
    """check-jsonschema's report on ``compose_file`` ('' when it is valid)."""
    checker = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    assert checker, "check-jsonschema is not installed (the dev extra)"
    done = subprocess.run(
        [checker, "--builtin-schema", "vendor.compose-spec", str(compose_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    return "" if done.returncode == 0 else done.stdout + done.stderr


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return loaded


def _stages() -> dict[str, list[str]]:
    """The Dockerfile's stages by name, each its instruction lines."""
    stages: dict[str, list[str]] = {}
    current: list[str] = []
    for line in DOCKERFILE.read_text().splitlines():
        if match := re.match(r"FROM \S+ AS (\S+)", line):
            current = stages.setdefault(match[1], [])
        current.append(line)
    return stages


def test_the_compose_file_follows_the_compose_specification() -> None:
    assert _schema_errors(COMPOSE) == ""


def test_the_schema_check_rejects_what_the_specification_does_not_allow(tmp_path: Path) -> None:
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(COMPOSE.read_text().replace("      replicas: 2", "      replica_count: 2"))
    assert "replica_count" in _schema_errors(broken)


def test_every_image_is_built_from_the_one_dockerfile_and_runs_as_a_non_root_user() -> None:
    stages = _stages()
    builds = {
        name: service["build"]
        for name, service in _compose()["services"].items()
        if "build" in service
    }
    assert builds, "the compose file builds nothing"
    for name, build in builds.items():
        assert build["context"] == ".", name
        assert build.get("dockerfile", "Dockerfile") == "Dockerfile", name
        users = [line.split()[1] for line in stages[build["target"]] if line.startswith("USER ")]
        assert users, f"{name}: stage {build['target']} sets no USER"
        assert users[-1].split(":")[0] not in {"root", "0"}, (name, users)
    # The default build (`docker build .`) is the server: the last stage.
    assert list(stages)[-1] == "server"


def test_the_sandbox_image_is_defined_under_the_name_the_server_looks_for() -> None:
    services = _compose()["services"]
    sandbox = next(s for s in services.values() if s.get("build", {}).get("target") == "sandbox")
    assert sandbox["image"] == Settings.model_fields["sandbox_docker_image"].default
    assert sandbox["profiles"], "the sandbox image is built, not started as a service"


def test_the_server_image_holds_every_package_the_project_ships() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {
        p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    }
    copied = {
        line.split()[1] for line in DOCKERFILE.read_text().splitlines() if line.startswith("COPY ")
    }
    assert packages <= copied, packages - copied


def test_the_balancer_reaches_the_replicas_where_they_listen() -> None:
    services = _compose()["services"]
    server = services["envserver"]
    port = int(server["environment"].get("ENVSERVER_PORT", Settings.model_fields["port"].default))
    assert f"server envserver:{port};" in NGINX.read_text()
    volume = next(v for v in services["balancer"]["volumes"] if "nginx.conf" in v)
    assert (ROOT / volume.split(":")[0]).resolve() == NGINX
    # A replica of its own secret would refuse the others' tokens: the secret must be required.
    assert ":?" in server["environment"]["ENVSERVER_SECRET"]


def test_nginx_closes_idle_connections_before_the_replicas_do() -> None:
    """A request nginx sends on a connection the replica is closing as idle would be reset."""
    found = re.search(r"upstream envserver \{[^}]*keepalive_timeout (\d+)s;", NGINX.read_text())
    assert found is not None, "the upstream block sets no keepalive_timeout"
    assert int(found[1]) < Settings().keep_alive_s
