"""docker-compose.yml end to end: two replicas, PostgreSQL and the balancer, each on the host's
network bound to 127.0.0.1 (ports of this test's own), started from the images ``make image``
built. Traffic goes to loopback only.

Through the balancer: the README's examples (the curl ones but /metrics, which is one
replica's); an EvoEnv environment admitted through one replica
and served by the other (they share PostgreSQL); a replica killed with SIGKILL while the
project's clients play episodes (every call answered through their retries, every reward the
one the environment gives in this process); the whole stack taken down and up again, and
episodes started before it continued from their state tokens.

Skipped with the reason without an engine or the images (failed instead where CI provides them:
``tests/docker_support.py``).
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from clients.http import EnvServerClient
from clients.retry import RetryPolicy
from envserver.registry import discover
from tests import docker_support
from tests.server import ROOT, free_port
from tests.test_evo_server import LIS, expert, oracle, submit
from tests.test_readme import check_examples, examples
from tests.test_readme import (
    test_the_python_examples_print_what_they_say as test_the_readme_python_examples,
)

pytestmark = pytest.mark.timeout(1200)

EPISODE_ENV = "alfworld"  # multi-turn, several expert steps per episode
REGISTRY = discover()
# A replica that dies mid-request is a refused or cut connection, or a 502 from the balancer
# once no replica answers; the clients repeat (every v1 call is idempotent) until one does.
PATIENT = RetryPolicy(attempts=30, backoff_s=0.2, max_backoff_s=2.0)
START_S = 420  # a cold stack on a loaded 2-core machine: replicas start pools and sandboxes

__all__ = ["test_the_readme_python_examples"]


@dataclass
class Stack:
    """One compose project of this test: its ports and how to drive it."""

    project: str
    env: dict[str, str]
    balancer_port: int
    replica_ports: tuple[int, int]
    log: Path

    @property
    def port(self) -> int:  # what the README's tests read from their server
        return self.balancer_port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.balancer_port}"

    def replica_url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.replica_ports[index]}"

    def compose(self, *args: str, timeout_s: float = START_S) -> str:
        command = ["docker-compose", "-p", self.project, "-f", str(ROOT / "docker-compose.yml")]
        with self.log.open("a") as log:
            log.write(f"$ {' '.join(command[3:] + list(args))}\n")
            done = subprocess.run(
                [*command, *args], env=self.env, cwd=ROOT, stdout=subprocess.PIPE, stderr=log,
                text=True, timeout=timeout_s, check=False,
            )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"docker-compose {' '.join(args)} failed:\n{self.log.read_text()}")
        return done.stdout

    def container(self, service: str) -> str:
        return self.compose("ps", "-q", service).strip()

    def up(self) -> None:
        self.compose("up", "-d", "--no-build")
        urls = [self.base_url, self.replica_url(0), self.replica_url(1)]
        if not _wait_for(lambda: all(_ready(url) for url in urls), START_S):
            logs = self.compose("logs", "--tail", "80", timeout_s=60)
            raise RuntimeError(f"the stack did not become ready:\n{logs}")


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=5).status_code == 200
    except httpx.TransportError:
        return False


def _wait_for(condition: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.5)
    return False


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The stack, up and ready (named as the README tests name their server)."""
    docker_support.require()
    ports = [free_port() for _ in range(4)]
    assert len(set(ports)) == 4, ports
    balancer, first, second, postgres = ports
    env = {
        **docker_support.engine_env(),
        "ENVSERVER_SECRET": secrets.token_hex(32),
        "ENVSERVER_POSTGRES_PASSWORD": secrets.token_hex(16),
        "ENVSERVER_LISTEN": f"127.0.0.1:{balancer}",
        "ENVSERVER_REPLICA_1_PORT": str(first),
        "ENVSERVER_REPLICA_2_PORT": str(second),
        "ENVSERVER_POSTGRES_PORT": str(postgres),
        "ENVSERVER_SANDBOX_WORKERS": "2",
    }
    log = tmp_path_factory.mktemp("compose") / "compose.log"
    stack = Stack(f"envserver-test-{secrets.token_hex(4)}", env, balancer, (first, second), log)
    try:
        stack.up()
        yield stack
    finally:
        stack.compose("down", "-v", "--timeout", "5", timeout_s=180)


@pytest.fixture(scope="module")
def stack(live_server: Stack) -> Stack:
    return live_server


def test_the_readme_curl_examples_through_the_balancer(stack: Stack) -> None:
    """All but the metrics: each replica counts its own items (Prometheus scrapes each one), so
    through the balancer /metrics shows whichever replica answered."""
    check_examples([e for e in examples() if "/metrics" not in e.commands], stack.port)


def test_every_service_uses_the_host_network_and_no_other(stack: Stack) -> None:
    for service in ("envserver-1", "envserver-2", "balancer", "postgres"):
        inspected = docker_support.docker(
            "inspect", "--format", "{{.HostConfig.NetworkMode}} {{.Config.User}}",
            stack.container(service),
        ).split()  # fmt: skip
        assert inspected[0] == "host", (service, inspected)
        assert inspected[1:] and inspected[1] not in {"root", "0"}, (service, inspected)


def test_a_correct_cpp_program_scores_one_in_a_replica(stack: Stack) -> None:
    """Defect 1 under compose: the replicas' weak sandbox builds and runs from an exec tmpfs."""
    source = '#include <cstdio>\nint main(){int a,b;std::scanf("%d %d",&a,&b);'
    source += 'std::printf("%d\\n",a+b);}\n'
    item = {
        "response": f"```cpp\n{source}```",
        "reference": {
            "language": "cpp",
            "tests": {"kind": "stdin", "items": [{"stdin": "2 3", "stdout": "5"}]},
        },
    }
    for index in (0, 1):
        with httpx.Client(base_url=stack.replica_url(index), timeout=120) as http:
            assert http.get("/v1/sandbox").json()["isolation"] == "weak"
            reply = http.post("/v1/verify", json={"verifier": "code", "items": [item]})
            result = reply.json()["results"][0]
            assert (result["status"], result["reward"]) == ("ok", 1.0), result


def test_an_evo_environment_admitted_by_one_replica_is_served_by_the_other(stack: Stack) -> None:
    with (
        httpx.Client(base_url=stack.replica_url(0), timeout=120) as first,
        httpx.Client(base_url=stack.replica_url(1), timeout=120) as second,
    ):
        assert submit(first, expert(21))["status"] == "admitted"
        assert "evo/recurrence_21" in {e["id"] for e in second.get("/v1/envs").json()["envs"]}
        reset = second.post("/v1/envs/evo/recurrence_21/reset", json={"seed": 4})
        assert reset.status_code == 200, reset.text
        # And a task started on one replica is finished on the other.
        started = first.post(f"/v1/envs/{LIS}/reset", json={"seed": 3}).json()
        step = second.post(
            f"/v1/envs/{LIS}/step", json={"state": started["state"], "action": oracle(3)}
        ).json()
        assert step["reward"] == 1.0, step


@dataclass
class Tally:
    """What the players saw: calls made, calls that failed through every retry, answers that
    differ from the environment's own in this process, and final rewards."""

    calls: int = 0
    lost: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    rewards: list[float | None] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self) -> None:
        with self.lock:
            self.calls += 1


def _expert_episode(client: EnvServerClient, seed: int, tally: Tally) -> None:
    """Play ``EPISODE_ENV`` to its end with the expert, each answer checked against the
    environment here."""
    environment = REGISTRY.envs[EPISODE_ENV]
    local = environment.reset(seed, environment.spec.options_model()).state
    tally.count()
    state = client.reset(EPISODE_ENV, seed=seed).state
    reward = None
    for _ in range(100):
        assert state is not None
        action = environment.expert_action(local)
        tally.count()
        step = client.step(EPISODE_ENV, state, action)
        expected = environment.step(local, action)
        if (step.reward, step.terminated) != (expected.score.reward, expected.terminated):
            tally.wrong.append(f"seed {seed}: {step.reward, step.terminated} != {expected}")
        state, local, reward = step.state, expected.state, step.reward
        if step.terminated or step.truncated:
            break
    tally.rewards.append(reward)


def test_a_replica_killed_under_load_loses_no_call_and_no_reward(stack: Stack) -> None:
    players, tally = 4, Tally()
    after_kill = [0] * players
    killed, stop = threading.Event(), threading.Event()

    def play(player: int) -> None:
        with EnvServerClient(stack.base_url, timeout=120, retry=PATIENT) as client:
            for seed in range(player * 10_000, (player + 1) * 10_000):
                if stop.is_set():
                    return
                during = killed.is_set()
                try:
                    _expert_episode(client, seed, tally)
                except Exception as exc:  # lost through every retry
                    tally.lost.append(f"seed {seed}: {type(exc).__name__}: {exc}")
                    return
                after_kill[player] += during

    threads = [threading.Thread(target=play, args=(player,)) for player in range(players)]
    for thread in threads:
        thread.start()
    try:
        assert _wait_for(lambda: len(tally.rewards) >= 8 or bool(tally.lost), 120)
        # The replica's server process, killed from the host as a crash would end it (the
        # engine restarts a crashed container; `docker kill` would count as a deliberate stop).
        pid = docker_support.docker(
            "inspect", "--format", "{{.State.Pid}}", stack.container("envserver-1")
        )
        os.kill(int(pid), signal.SIGKILL)
        killed.set()
        _wait_for(lambda: min(after_kill) >= 3 or bool(tally.lost), 240)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=240)
    report = f"{tally.calls} calls, {len(tally.lost)} lost, {len(tally.wrong)} wrong"
    print(f"replica kill: {report}, {len(tally.rewards)} episodes")  # the closing figures
    assert not tally.lost, (report, tally.lost)
    assert not tally.wrong, (report, tally.wrong)
    assert min(after_kill) >= 3, after_kill
    assert set(tally.rewards) == {1.0}, tally.rewards
    # The engine restarts the killed replica (restart: unless-stopped) and it becomes ready.
    assert _wait_for(lambda: _ready(stack.replica_url(0)), START_S), "replica 1 did not return"


def test_episodes_continue_from_their_tokens_after_the_whole_stack_restarts(
    stack: Stack,
) -> None:
    environment = REGISTRY.envs[EPISODE_ENV]
    seeds = range(700, 706)
    halfway: dict[int, tuple[str | None, Any]] = {}
    with EnvServerClient(stack.base_url, timeout=120, retry=PATIENT) as client:
        for seed in seeds:  # two expert steps into each episode, then the stack goes down
            local = environment.reset(seed, environment.spec.options_model()).state
            state = client.reset(EPISODE_ENV, seed=seed).state
            for _ in range(2):
                assert state is not None
                action = environment.expert_action(local)
                state = client.step(EPISODE_ENV, state, action).state
                local = environment.step(local, action).state
            halfway[seed] = (state, local)
    with httpx.Client(base_url=stack.replica_url(1), timeout=120) as http:
        assert submit(http, expert(22))["status"] == "admitted"
    stack.compose("down", "--timeout", "5", timeout_s=180)  # the database's volume stays
    assert not _ready(stack.base_url)
    stack.up()
    continued = 0
    with EnvServerClient(stack.base_url, timeout=120, retry=PATIENT) as client:
        for seed, (token, start) in halfway.items():
            state, local = token, start
            for _ in range(100):
                assert state is not None
                action = environment.expert_action(local)
                step = client.step(EPISODE_ENV, state, action)
                expected = environment.step(local, action)
                assert (step.reward, step.terminated) == (
                    expected.score.reward,
                    expected.terminated,
                ), seed
                state, local = step.state, expected.state
                if step.terminated or step.truncated:
                    break
            assert step.reward == 1.0, (seed, step)
            continued += 1
        # What was admitted before the restart is still served (PostgreSQL's volume).
        assert "evo/recurrence_22" in {e.id for e in client.envs().envs}
    print(f"restart: {continued} of {len(halfway)} episodes continued")
    assert continued == len(halfway)
