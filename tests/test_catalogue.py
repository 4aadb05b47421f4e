"""The catalogue tells the truth: what a server cannot serve is listed under ``disabled`` with
the reason and the fix, /readyz says so, asking for it answers 503 (not 400 or a bare 404), and
the clients fail at once with the server's reason: ``gym.make``, the CLI and the trainer."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import gymnasium as gym
import httpx
import pytest

import clients.gym  # noqa: F401 - registers the envserver/* ids
from clients.errors import ClientError, UnavailableError
from clients.http import EnvServerClient
from tests.conftest import RESTRICTED_KEY
from tests.server import ROOT, LiveServer
from verifiers.tamarin.prover import locate_prover

KEY = RESTRICTED_KEY.partition(":")[2]
NL2SVA = ("sva/nl2sva-human", "sva/nl2sva-machine")
NO_PROVER = locate_prover() is None


def _catalogue(server: LiveServer, key: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    reply = httpx.get(f"{server.base_url}/v1/envs", headers=headers, timeout=30)
    assert reply.status_code == 200, reply.text
    catalogue: dict[str, Any] = reply.json()
    return catalogue


def test_a_plain_server_serves_every_family_from_its_packaged_data(
    live_server: LiveServer,
) -> None:
    catalogue = _catalogue(live_server)
    served = {env["id"] for env in catalogue["envs"]}
    assert {*NL2SVA, "sva/generated", "tamarin/proof"} <= served
    disabled = {entry["name"]: entry for entry in catalogue["disabled"]}
    assert set(disabled) <= ({"tamarin.proof"} if NO_PROVER else set())
    # tamarin/proof really serves, by replaying the packaged recordings of real Tamarin runs.
    with EnvServerClient(live_server.base_url) as client:
        episode = client.reset("tamarin/proof", seed=1)
        assert episode.status == "ok" and episode.state
        step = client.step("tamarin/proof", episode.state, "1")
        assert step.status == "ok", step.detail
        nl2sva = client.reset("sva/nl2sva-human", seed=3)
        assert nl2sva.status == "ok" and "assert property" in str(nl2sva.observation)


def test_what_cannot_be_served_is_listed_with_reason_and_fix(
    restricted_server: LiveServer,
) -> None:
    catalogue = _catalogue(restricted_server, KEY)
    served = {env["id"] for env in catalogue["envs"]}
    disabled = {entry["name"]: entry for entry in catalogue["disabled"]}
    assert not served & set(disabled)
    assert "sva/generated" in served  # the generator needs no data
    for env_id in NL2SVA:
        assert "ENVSERVER_NL2SVA_DATA" in disabled[env_id]["reason"]
        assert "unset it" in disabled[env_id]["fix"]
    if NO_PROVER:
        assert "tamarin-prover" in disabled["tamarin/proof"]["reason"]
        assert "PATH" in disabled["tamarin/proof"]["fix"]
    # One truth: liveness and readiness list what the catalogue lists.
    for probe in ("/readyz", "/healthz"):
        health = httpx.get(f"{restricted_server.base_url}{probe}", timeout=30).json()
        assert health["status"] == "ok", probe
        assert {entry["name"] for entry in health["disabled"]} == set(disabled), probe
        assert all(entry["fix"] for entry in health["disabled"]), probe


def test_asking_for_it_answers_503_with_the_reason_and_no_retry(
    restricted_server: LiveServer,
) -> None:
    with EnvServerClient(restricted_server.base_url, api_key=KEY) as client:
        started = time.monotonic()
        with pytest.raises(UnavailableError) as raised:
            client.reset("sva/nl2sva-human", seed=0)
        assert time.monotonic() - started < 5  # not retried like an overload
    error = raised.value
    assert (error.status, error.kind, error.attempts) == (503, "environment-unavailable", 1)
    assert "ENVSERVER_NL2SVA_DATA" in error.reason and "unset it" in error.fix
    assert "to enable it" in str(error)


@pytest.mark.parametrize("gym_id", ["envserver/NL2SVA-Human-v0", "envserver/NL2SVA-Machine-v0"])
def test_gym_make_of_a_disabled_environment_fails_with_the_reason(
    restricted_server: LiveServer, gym_id: str
) -> None:
    with pytest.raises(UnavailableError, match="ENVSERVER_NL2SVA_DATA"):
        gym.make(gym_id, base_url=restricted_server.base_url, api_key=KEY)
    with pytest.raises(UnavailableError, match="ENVSERVER_NL2SVA_DATA"):
        gym.make_vec(
            gym_id,
            num_envs=2,
            vectorization_mode="vector_entry_point",
            base_url=restricted_server.base_url,
            api_key=KEY,
        )


@pytest.mark.skipif(not NO_PROVER, reason="a prover here serves tamarin/proof live")
def test_gym_make_of_tamarin_without_its_binary_names_the_binary(
    restricted_server: LiveServer,
) -> None:
    with pytest.raises(UnavailableError, match="tamarin-prover"):
        gym.make("envserver/TamarinProof-v0", base_url=restricted_server.base_url, api_key=KEY)


def test_gym_make_of_an_unknown_environment_is_a_client_error(base_url: str) -> None:
    with pytest.raises(ClientError, match="unknown environment 'nope'"):
        gym.make("envserver/Remote-v0", env_id="nope", base_url=base_url)


def test_the_cli_lists_the_disabled_with_the_fix(restricted_server: LiveServer) -> None:
    from typer.testing import CliRunner

    from clients.cli import app

    result = CliRunner().invoke(
        app, ["envs", "--url", restricted_server.base_url, "--api-key", KEY]
    )
    assert result.exit_code == 0, result.output
    assert "disabled (not served here):" in result.stdout
    assert "sva/nl2sva-human" in result.stdout and "to enable: point ENVSERVER_NL2SVA_DATA" in (
        result.stdout
    )


@pytest.mark.parametrize("env_id", ["sva/nl2sva-human", *(["tamarin/proof"] if NO_PROVER else [])])
def test_training_on_a_disabled_environment_ends_in_one_error_line(
    restricted_server: LiveServer, env_id: str, tmp_path: Any
) -> None:
    pytest.importorskip("torch")
    done = subprocess.run(
        [
            sys.executable, "-m", "clients.train.cli", "--env", env_id,
            "--model", str(tmp_path / "no-model-needed"), "--url", restricted_server.base_url,
            "--output-dir", "relative/run",
        ],
        cwd=tmp_path,
        env={**os.environ, "ENVSERVER_API_KEY": KEY, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0] == f"writing metrics, checkpoints and curves to {tmp_path / 'relative/run'}"
    assert len(lines) == 2 and lines[1].startswith("error: HTTP 503"), done.stderr
    assert "not available on this server" in lines[1] and "to enable it" in lines[1]
