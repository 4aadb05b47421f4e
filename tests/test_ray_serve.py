"""envserver as a Ray Serve application on a real one-node Ray cluster on loopback, started and
stopped here: the served-environment contract for every family, an episode carried across
replicas, and an episode run that survives killing a replica.

The cluster has 3 logical CPUs: 2 replicas of one pool worker each, deployed by
``envserver serve --ray`` exactly as a user would, and one for the verl reward worker that its
``remote`` reward manager starts. It starts from an environment that points Ray at another
cluster (another's auth token in the home directory, ``RAY_AUTH_*`` and ``RAY_ADDRESS`` set),
which ``RayCluster`` must keep out; a cluster that cannot start fails the tests, with Ray's log.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from ray.serve import Application
from ray.serve.schema import ServeDeploySchema

from clients.http import EnvServerClient
from clients.retry import RetryPolicy
from envserver import ray_serve
from envserver.config import Settings
from envserver.ray_cluster import ISOLATED, RayCluster
from envserver.registry import discover
from tests.server import ROOT
from tests.test_contracts import (
    test_the_served_environment_is_the_registered_one as contract_served_environment,
)

pytest.importorskip(
    "ray.serve", reason="the ray extra is not installed: pip install envserver[ray]"
)
# The first test also starts the cluster and deploys: about a minute alone on 2 cores, over 10
# beside the rest of the suite there (so `make test` runs this file on its own).
pytestmark = pytest.mark.timeout(900)

SECRET = "ray-serve-test-secret-0123456789abcdef"
EPISODE_ENV = "alfworld"  # multi-turn, several expert steps per episode
REPLICA = "x-envserver-replica"
REGISTRY = discover()
ENVS = sorted(REGISTRY.envs)
# A replica that dies mid-request surfaces as a refused or cut connection or a 5xx from Serve's
# proxy; the client repeats (every v1 call is idempotent) until another replica answers.
PATIENT = RetryPolicy(attempts=20, backoff_s=0.2, max_backoff_s=2.0)


FOREIGN_TOKEN = "another-clusters-token-0123456789"


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayCluster]:
    foreign = tmp_path_factory.mktemp("foreign-home")
    (foreign / ".ray").mkdir()
    (foreign / ".ray" / "auth_token").write_text(FOREIGN_TOKEN)
    with pytest.MonkeyPatch.context() as machine:
        machine.setenv("HOME", str(foreign))
        machine.setenv("RAY_AUTH_MODE", "token")
        machine.setenv("RAY_AUTH_TOKEN", FOREIGN_TOKEN)
        machine.setenv("RAY_ADDRESS", "127.0.0.1:1")
        cluster = RayCluster(tmp_path_factory.mktemp("ray"), cpus=3)
    try:
        cluster.start()
    except (RuntimeError, OSError) as exc:
        # The cluster depends on nothing of the machine's Ray state (its home, temporary
        # directory and variables are its own): a start that fails is a bug to see, not a
        # skip that leaves the suite green.
        pytest.fail(f"the Ray cluster did not start: {str(exc)[-3000:]}")
    try:
        cluster.deploy(SECRET, replicas=2, timeout_s=600)
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def base_url(ray_cluster: RayCluster) -> str:
    """The Ray deployment's URL: the contract check below runs against it."""
    return ray_cluster.base_url


@pytest.mark.parametrize("env_id", ENVS)
def test_the_ray_deployment_serves_the_registered_environment(env_id: str, base_url: str) -> None:
    if env_id in REGISTRY.disabled:
        pytest.skip(f"{env_id} is disabled here: {REGISTRY.disabled[env_id].reason}")
    contract_served_environment(env_id, base_url)


def _expert_episode(client: EnvServerClient, seed: int) -> float | None:
    """Play ``EPISODE_ENV`` to its end with the expert, checking each step against the
    environment in this process; the last reward."""
    environment = REGISTRY.envs[EPISODE_ENV]
    local = environment.reset(seed, environment.spec.options_model()).state
    state: str | None = client.reset(EPISODE_ENV, seed=seed).state
    reward = None
    for _ in range(100):
        assert state is not None
        action = environment.expert_action(local)
        step = client.step(EPISODE_ENV, state, action)
        expected = environment.step(local, action)
        assert (step.reward, step.terminated) == (expected.score.reward, expected.terminated)
        state, local, reward = step.state, expected.state, step.reward
        if step.terminated or step.truncated:
            break
    return reward


def test_an_episode_continues_on_another_replica(base_url: str) -> None:
    environment = REGISTRY.envs[EPISODE_ENV]
    with httpx.Client(base_url=base_url, timeout=120) as http:
        reset = http.post(f"/v1/envs/{EPISODE_ENV}/reset", json={"seed": 3})
        first = reset.headers[REPLICA]
        local = environment.reset(3, environment.spec.options_model()).state
        action = environment.expert_action(local)
        expected = environment.step(local, action)
        # Serve routes each request to the less loaded of two random replicas: step the same
        # state until another replica answers, and every answer must be the same step.
        answered = {first}
        for _ in range(50):
            step = http.post(
                f"/v1/envs/{EPISODE_ENV}/step",
                json={"state": reset.json()["state"], "action": action},
            )
            assert step.status_code == 200, step.text
            body = step.json()
            assert body["observation"] == expected.observation
            assert body["reward"] == expected.score.reward
            answered.add(step.headers[REPLICA])
            if len(answered) > 1:
                break
    assert len(answered) == 2, f"only {answered} answered"


def test_killing_a_replica_mid_run_loses_no_episode(ray_cluster: RayCluster) -> None:
    replicas = ray_cluster.replica_processes()
    assert len(replicas) == 2, replicas
    players = 4
    rewards: list[float | None] = []
    after_kill = [0] * players
    failures: list[BaseException] = []
    killed, stop = threading.Event(), threading.Event()

    def play(player: int) -> None:
        try:
            with EnvServerClient(ray_cluster.base_url, timeout=120, retry=PATIENT) as client:
                for seed in range(player * 10_000, (player + 1) * 10_000):
                    if stop.is_set():
                        return
                    during = killed.is_set()
                    rewards.append(_expert_episode(client, seed))
                    after_kill[player] += during
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=play, args=(player,)) for player in range(players)]
    for thread in threads:
        thread.start()
    try:
        # Episodes are under way on both replicas when one of them dies; then every player
        # plays whole episodes on what is left (and on the replica Serve starts instead).
        assert _wait_for(lambda: len(rewards) >= 8 or bool(failures), 60), "no episode ended"
        replicas[0].send_signal(signal.SIGKILL)
        killed.set()
        _wait_for(lambda: min(after_kill) >= 3 or bool(failures), 120)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
    assert not failures, failures
    assert min(after_kill) >= 3, after_kill
    assert set(rewards) == {1.0}, rewards
    # Serve puts a new replica in the dead one's place.

    def replaced() -> bool:
        now = {process.pid for process in ray_cluster.replica_processes()}
        return len(now) == 2 and replicas[0].pid not in now

    assert _wait_for(replaced, 120), ray_cluster.replica_processes()


def _wait_for(condition: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_cluster_keeps_its_state_to_itself(ray_cluster: RayCluster) -> None:
    # Its home and its sessions (Ray's default: /tmp/ray) are its own, and it never saw the
    # variables that pointed at the other cluster.
    assert ray_cluster.env["HOME"] == str(ray_cluster.home) != os.environ.get("HOME")
    assert not set(ISOLATED) & set(ray_cluster.env)
    assert list(ray_cluster.temp_dir.glob("session_*")), list(ray_cluster.temp_dir.iterdir())


# verl's trainer on a node of the cluster: a driver that joins it (with the cluster's own
# environment from its start: Ray reads it at import) and loads verl's `remote` reward manager.
REMOTE_MANAGER = """
import json, sys
from pathlib import Path

import numpy as np
import ray

from tests.test_trainer_libraries import _run_loop, _verl_batch, _verl_manager

address, url, workdir = sys.argv[1:]
ray.init(address=address, log_to_driver=False)
try:
    _verl_manager(url, Path(workdir), "remote", "compute_score")
    refused = ""
except AssertionError as exc:
    refused = str(exc)
manager = _verl_manager(url, Path(workdir), "remote", "compute_score_sync")
responses = ["The answer is \\\\boxed{7}", "\\\\boxed{1}", "\\\\boxed{8}"]
data = _verl_batch(manager.tokenizer, ["openai/gsm8k"] * 3, responses, [np.int64(7), None, "9"])
results = _run_loop(manager, data)
ray.shutdown()
print(json.dumps({"refused": refused, "results": results}))
"""


@pytest.mark.timeout(600)
def test_verls_remote_reward_manager_runs_the_sync_function_in_ray_actors(
    ray_cluster: RayCluster, tmp_path: Path
) -> None:
    # verl 0.9's `remote` manager calls the reward function in Ray actors, which cannot await:
    # it refuses the async compute_score, and the README names compute_score_sync for it.
    pytest.importorskip("verl")
    arguments = [ray_cluster.address, ray_cluster.base_url, str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-c", REMOTE_MANAGER, *arguments],
        cwd=ROOT,
        env=ray_cluster.env,
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert "Async reward score is not supported" in answer["refused"]
    scores = [r["reward_score"] for r in answer["results"]]
    flags = [r["reward_extra_info"]["bad_reference"] for r in answer["results"]]
    assert (scores, flags) == ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])


def test_serve_ray_refuses_to_deploy_without_a_shared_secret() -> None:
    # Checked before any cluster is reached: replicas with key files of their own would each
    # refuse the others' tokens.
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ENVSERVER_")}
    done = subprocess.run(
        [sys.executable, "-m", "envserver.cli", "serve", "--ray", "--ray-address", "127.0.0.1:1"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ENVSERVER_SECRET must be set for Ray Serve"), done.stderr


def test_the_documented_serve_config_deploys_this_application(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = (ROOT / "deploy" / "README.md").read_text()
    (block,) = re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)
    config = ServeDeploySchema.model_validate(yaml.safe_load(block))
    (app,) = config.applications
    module, _, name = app.import_path.partition(":")
    builder = getattr(importlib.import_module(module), name)
    assert builder is ray_serve.build
    # Serve runs the builder with the application's runtime_env; so does this test.
    for variable, value in app.runtime_env["env_vars"].items():
        monkeypatch.setenv(variable, value)
    assert isinstance(builder(app.args), Application)


def test_a_replica_range_autoscales_on_requests_in_flight_and_asks_for_its_pools_cpus() -> None:
    settings = Settings(secret=SECRET, pool_workers=3)
    fixed = ray_serve.Scaling(min_replicas=2, max_replicas=2).options(settings)
    assert fixed["num_replicas"] == 2
    assert "autoscaling_config" not in fixed
    assert fixed["ray_actor_options"] == {"num_cpus": 3}
    ranged = ray_serve.Scaling(min_replicas=1, max_replicas=8).options(settings)
    assert "num_replicas" not in ranged
    assert ranged["autoscaling_config"] == {
        "min_replicas": 1,
        "max_replicas": 8,
        "target_ongoing_requests": 32.0,
    }
