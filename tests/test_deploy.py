"""The container files, checked without an engine: the compose file against the Compose
Specification's JSON schema (check-jsonschema's vendored copy), the Dockerfiles, Makefile,
compose file and balancer against each other and the server's settings, and the wheel the images
install. tests/test_containers.py and tests/test_compose.py run them for real."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import yaml

from envserver.config import Settings
from tests.server import ROOT

COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
NGINX = ROOT / "deploy" / "nginx.conf"
MAKEFILE = ROOT / "Makefile"


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


def test_the_compose_file_follows_the_compose_specification() -> None:
    assert _schema_errors(COMPOSE) == ""


def test_the_schema_check_rejects_what_the_specification_does_not_allow(tmp_path: Path) -> None:
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(COMPOSE.read_text().replace("network_mode: host", "network_mod: host", 1))
    assert "network_mod" in _schema_errors(broken)


def _dockerfiles() -> dict[str, Path]:
    """The Dockerfile of each image `make image` builds, by the image's name."""
    built: dict[str, Path] = {}
    for line in MAKEFILE.read_text().splitlines():
        if match := re.match(r"\t\$\(BUILD\) (.*)-t (\S+) \.$", line):
            dockerfile = re.search(r"-f (\S+)", match[1])
            target = re.search(r"--target (\S+)", match[1])
            name = match[2] + (f"@{target[1]}" if target else "")
            built[name] = ROOT / (dockerfile[1] if dockerfile else "Dockerfile")
    return built


def _user(dockerfile: Path, target: str | None) -> str:
    """The last USER of ``target``'s stage (or of the file's last stage), following FROM."""
    stages: dict[str, list[str]] = {}
    current: list[str] = []
    for line in dockerfile.read_text().splitlines():
        if line.startswith("FROM "):
            current = []
            if match := re.match(r"FROM (\S+) AS (\S+)", line):
                stages[match[2]] = current
        current.append(line)
    lines = stages[target] if target else current
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    if users:
        return users[-1]
    parent = lines[0].split()[1]
    return _user(dockerfile, parent) if parent in stages else "root"


def test_every_image_compose_runs_is_built_by_make_image_and_runs_as_a_non_root_user() -> None:
    built = {name.split("@")[0]: name for name in _dockerfiles()}
    assert set(built) == {"envserver:latest", "envserver-sandbox:latest",
                          "envserver-balancer:latest", "envserver-postgres:latest"}  # fmt: skip
    for service, config in _compose()["services"].items():
        assert config["image"] in built, service
        assert "build" not in config, f"{service}: `make image` is the one way images are built"
    for name, dockerfile in _dockerfiles().items():
        target = name.split("@")[1] if "@" in name else None
        user = _user(dockerfile, target)
        assert user.split(":")[0] not in {"root", "0"}, (name, user)
        # No registry is reachable: every image starts from the base `make image` imports.
        bases = [line.split()[1] for line in dockerfile.read_text().splitlines()
                 if line.startswith("FROM ")]  # fmt: skip
        assert bases[0] == "${BASE}", (name, bases)
        assert "ARG BASE=envserver-base:bookworm" in dockerfile.read_text(), name
    # The default build (`docker build .`) is the server: the last stage.
    assert re.findall(r"FROM \S+ AS (\S+)", DOCKERFILE.read_text())[-1] == "server"


def test_the_sandbox_image_is_built_under_the_name_the_server_looks_for() -> None:
    assert f"{Settings.model_fields['sandbox_docker_image'].default}@sandbox" in _dockerfiles()


def test_the_server_image_installs_what_make_serve_installs() -> None:
    """Not `all` (ALFWorld's engine builds Fast Downward from source: no wheel, cmake needed)."""
    extras = re.search(r"ARG EXTRAS=(\S+)", DOCKERFILE.read_text())
    assert extras is not None and extras[1] == "serve"
    assert ".[serve]" in MAKEFILE.read_text()


def test_the_server_image_holds_every_package_the_project_ships() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {
        p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    }
    copied = {
        line.split()[1] for line in DOCKERFILE.read_text().splitlines() if line.startswith("COPY ")
    }
    assert packages <= copied, packages - copied


def test_the_wheel_holds_every_file_of_the_packages(tmp_path: Path) -> None:
    """The images install the project as a wheel: a data file left out (EvoEnv's recorded seed
    admissions, the red-team suites) is missing there, though an editable install has it."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    roots = [p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]]
    tracked = subprocess.run(
        ["git", "ls-files", *roots], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    assert [path for path in tracked if path not in shipped] == []


def test_the_balancer_reaches_every_replica_where_it_listens() -> None:
    services = _compose()["services"]
    replicas = {name: s for name, s in services.items() if s["image"] == "envserver:latest"}
    assert len(replicas) >= 2, replicas
    upstreams = services["balancer"]["environment"]["ENVSERVER_REPLICAS"].split()
    ports = [replica["environment"]["ENVSERVER_PORT"] for replica in replicas.values()]
    assert upstreams == [f"127.0.0.1:{port}" for port in ports]
    for replica in replicas.values():
        env = replica["environment"]
        assert env["ENVSERVER_HOST"] == "127.0.0.1"
        # A replica of its own secret would refuse the others' tokens: the secret must be required.
        assert ":?" in env["ENVSERVER_SECRET"]
        # One store for every replica (SQLite on each one's tmpfs would keep EvoEnv apart).
        assert env["ENVSERVER_EVO_STORE"].startswith("postgresql+psycopg://")
        assert "127.0.0.1:${ENVSERVER_POSTGRES_PORT:-5432}" in env["ENVSERVER_EVO_STORE"]
        # The weak sandbox runs its builds from /tmp: Docker's tmpfs is noexec unless told.
        assert any(m.startswith("/tmp:") and "exec" in m.split(":")[1].split(",")
                   for m in replica["tmpfs"]), replica["tmpfs"]  # fmt: skip
    assert all(s["network_mode"] == "host" for s in services.values())


def test_nginx_closes_idle_connections_before_the_replicas_do() -> None:
    """A request nginx sends on a connection the replica is closing as idle would be reset."""
    found = re.search(r"upstream envserver \{[^}]*keepalive_timeout (\d+)s;", NGINX.read_text())
    assert found is not None, "the upstream block sets no keepalive_timeout"
    assert int(found[1]) < Settings().keep_alive_s
