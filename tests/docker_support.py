"""The Docker engine the container tests use, and what they do without one.

CI (``.ci/run``) starts its own engine on a socket of its own and names it in
``ENVSERVER_TEST_DOCKER_HOST`` (the rest of the suite never sees it: a server with the default
``auto`` backend would otherwise pick the docker backend, and with it another isolation level),
builds the images (``make image``) and sets ``ENVSERVER_TEST_CONTAINERS=required``: there, a
missing engine or image fails the container tests. Elsewhere they are skipped with the reason
(``make engine-tools`` installs the engine, ``make image`` builds the images; see
deploy/README.md).
"""

from __future__ import annotations

import os
import subprocess

import pytest

IMAGES = ("envserver:latest", "envserver-sandbox:latest", "envserver-balancer:latest",
          "envserver-postgres:latest")  # fmt: skip
REQUIRED = os.environ.get("ENVSERVER_TEST_CONTAINERS") == "required"


def docker_host() -> str:
    """The engine's address: CI's own engine, else the environment's (or Docker's default)."""
    return os.environ.get("ENVSERVER_TEST_DOCKER_HOST") or os.environ.get(
        "DOCKER_HOST", "unix:///var/run/docker.sock"
    )


def engine_env() -> dict[str, str]:
    """The environment for a process that talks to the engine."""
    return {**os.environ, "DOCKER_HOST": docker_host()}


def docker(*args: str, timeout_s: float = 120, check: bool = True) -> str:
    """``docker ARGS`` against the engine; its standard output."""
    done = subprocess.run(
        ["docker", *args], env=engine_env(), capture_output=True, text=True, timeout=timeout_s,
        check=False,
    )  # fmt: skip
    if check and done.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args)}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def unavailable(images: tuple[str, ...] = IMAGES) -> str:
    """Why the container tests cannot run here ('' when the engine answers with ``images``)."""
    try:
        docker("version", "--format", "{{.Server.Version}}", timeout_s=20)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
        return (
            f"no Docker engine answers at {docker_host()} ({exc}); `make engine-tools` installs one"
        )
    missing = [image for image in images if not docker("images", "-q", image).strip()]
    if missing:
        return f"the images {', '.join(missing)} are not built: run `make image`"
    return ""


def require(images: tuple[str, ...] = IMAGES) -> None:
    """Skip the calling test with the reason when no engine or image is here; fail instead
    where the engine and images were supposed to be provided (CI)."""
    reason = unavailable(images)
    if reason and REQUIRED:
        pytest.fail(f"ENVSERVER_TEST_CONTAINERS=required, but {reason}")
    if reason:
        pytest.skip(reason)
