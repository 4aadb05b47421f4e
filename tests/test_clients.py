"""The HTTP clients against a real server: round trips, batch order, typed errors, retries."""

from __future__ import annotations

import ast
import asyncio
import logging
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from clients.errors import (
    ClientError,
    EnvServerError,
    RetriesExhaustedError,
    ServerError,
    UnexpectedResponseError,
)
from clients.http import AsyncEnvServerClient, EnvServerClient
from clients.retry import NO_RETRY, RetryPolicy, retry_after_s, worth_retrying
from envserver.wire import ResetRequest, StepRequest, VerifyItem
from tests.conftest import make_server
from tests.math_support import expert_answer
from tests.server import ROOT, LiveServer, free_port

API_KEY = "tester:a-long-enough-secret"
SECRET = "a-long-enough-secret"
WRONG = "The answer is $\\boxed{-987654321}$."
FAST = RetryPolicy(attempts=5, backoff_s=0.05, max_backoff_s=0.2)


def wait_until(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Poll ``condition`` until it holds; fail the test if it does not within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("condition not reached in time")
        time.sleep(0.005)


def rejected_items(url: str) -> float:
    """The server's own count of items refused with 429 (Prometheus)."""
    secret = API_KEY.partition(":")[2]
    text = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {secret}"}).text
    for line in text.splitlines():
        if line.startswith("envserver_rejected_items_total "):
            return float(line.split()[1])
    raise AssertionError("envserver_rejected_items_total not in /metrics")


@pytest.fixture
def client(base_url: str) -> Iterator[EnvServerClient]:
    with EnvServerClient(base_url, retry=FAST) as c:
        yield c


@pytest.fixture(scope="module")
def busy_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server that admits one item at a time and wants an API key."""
    workdir = tmp_path_factory.mktemp("busy")
    with make_server(workdir, ENVSERVER_MAX_QUEUE_ITEMS="1", ENVSERVER_API_KEYS=API_KEY) as server:
        yield server


# --- round trips ------------------------------------------------------------------------------


def test_catalogue_and_spec(client: EnvServerClient) -> None:
    catalogue = client.envs()
    ids = [env.id for env in catalogue.envs]
    assert "math" in ids
    assert {"math", "test.sleep"} <= {v.name for v in catalogue.verifiers}
    spec = client.env("math")
    assert spec == catalogue.envs[ids.index("math")]
    assert {"difficulty", "max_attempts"} <= set(spec.options_schema["properties"])


def test_health_and_ready(client: EnvServerClient) -> None:
    assert client.health().status == "ok"
    ready = client.ready()
    assert ready.status == "ok"
    assert ready.pool_workers == 2
    assert ready.envs is not None and ready.envs >= 1


def test_reset_is_deterministic_and_replayable_by_task_id(client: EnvServerClient) -> None:
    first = client.reset("math", seed=11, options={"difficulty": "easy"})
    again = client.reset("math", seed=11, options={"difficulty": "easy"})
    assert first.status == "ok"
    assert first.task_id == "math@1/11?difficulty=easy"
    assert first.observation == again.observation
    assert isinstance(first.observation, str) and "\\boxed" in first.observation
    replay = client.reset("math", task_id=first.task_id)
    assert replay.observation == first.observation
    assert replay.task_id == first.task_id


def test_step_scores_expert_and_wrong_answers(client: EnvServerClient) -> None:
    episode = client.reset("math", seed=12, options={"difficulty": "easy"})
    assert episode.state is not None and episode.task_id is not None
    right = client.step("math", episode.state, expert_answer(episode.task_id))
    assert (right.status, right.reward, right.terminated) == ("ok", 1.0, True)
    assert right.components == {"correct": 1.0}
    wrong = client.step("math", episode.state, WRONG)
    assert (wrong.status, wrong.reward, wrong.terminated) == ("ok", 0.0, True)
    junk = client.step("math", episode.state, "no answer here")
    assert (junk.status, junk.reward) == ("invalid", 0.0)


def test_batches_answer_in_request_order(client: EnvServerClient) -> None:
    seeds = [21, 22, 23, 24]
    batch = client.reset_batch(
        "math",
        [ResetRequest(seed=seeds[0]), *({"seed": s} for s in seeds[1:])],
    )
    singles = [client.reset("math", seed=s) for s in seeds]
    assert [r.task_id for r in batch.results] == [r.task_id for r in singles]
    assert [r.observation for r in batch.results] == [r.observation for r in singles]

    states = [r.state for r in batch.results]
    assert all(state is not None for state in states)
    actions = [
        expert_answer(str(batch.results[0].task_id)),
        WRONG,
        expert_answer(str(batch.results[2].task_id)),
        "nothing to see",
    ]
    items = [
        StepRequest(state=str(states[0]), action=actions[0]),
        {"state": states[1], "action": actions[1]},
        (str(states[2]), actions[2]),
        (str(states[3]), actions[3]),
    ]
    steps = client.step_batch("math", items).results
    assert [s.reward for s in steps] == [1.0, 0.0, 1.0, 0.0]
    assert [s.status for s in steps] == ["ok", "ok", "ok", "invalid"]


def test_step_batch_branches_one_state(client: EnvServerClient) -> None:
    episode = client.reset("math", seed=31, options={"max_attempts": 3})
    state, task_id = str(episode.state), str(episode.task_id)
    expansions = client.step_batch("math", [(state, WRONG), (state, expert_answer(task_id))])
    wrong, right = expansions.results
    assert (wrong.reward, wrong.terminated, wrong.info["attempt"]) == (0.0, False, 1)
    assert (right.reward, right.terminated, right.info["attempt"]) == (1.0, True, 1)
    # The wrong branch goes on from its own token.
    deeper = client.step("math", str(wrong.state), expert_answer(task_id))
    assert (deeper.reward, deeper.info["attempt"]) == (1.0, 2)


def test_verify_by_reference_and_by_task_id(client: EnvServerClient) -> None:
    task_id = "math@1/5?difficulty=hard"
    answer = client.verify(
        [
            VerifyItem(response="\\boxed{\\frac{1}{2}}", reference="0.5", id="a"),
            {"response": "\\boxed{0.4}", "reference": "0.5", "id": "b"},
            {"response": expert_answer(task_id), "task_id": task_id, "id": "c"},
            {"response": WRONG, "task_id": task_id, "id": "d"},
        ],
        verifier="math",
    )
    results = answer.results
    assert [r.id for r in results] == ["a", "b", "c", "d"]
    assert [r.reward for r in results] == [1.0, 0.0, 1.0, 0.0]
    assert all(r.status == "ok" for r in results)


def test_failed_items_are_data_not_exceptions(client: EnvServerClient) -> None:
    timed_out = client.verify(
        [{"response": "sleep:5", "reference": "x"}], verifier="test.sleep", timeout_s=0.2
    ).results[0]
    assert (timed_out.status, timed_out.reward) == ("timeout", None)
    broken = client.verify([{"response": "x", "reference": "x"}], verifier="test.raise")
    assert (broken.results[0].status, broken.results[0].reward) == ("error", None)


# --- typed errors -----------------------------------------------------------------------------


def test_unknown_environment_is_a_404_client_error(
    client: EnvServerClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="clients.http")
    with pytest.raises(ClientError) as caught:
        client.reset("no-such-env")
    error = caught.value
    assert error.status == 404
    assert error.kind == "unknown-environment"
    assert error.title == "Not Found"
    assert "no-such-env" in error.detail
    assert error.attempts == 1  # a 4xx is final: no retry
    assert not caplog.records


def test_invalid_options_are_a_422_with_the_errors(client: EnvServerClient) -> None:
    with pytest.raises(ClientError) as caught:
        client.reset("math", seed=1, options={"difficulty": "impossible"})
    error = caught.value
    assert (error.status, error.kind) == (422, "invalid-options")
    assert "difficulty" in error.detail
    assert error.problem["errors"][0]["loc"][:2] == ["options", "difficulty"]


def test_tampered_token_is_a_403(client: EnvServerClient) -> None:
    state = str(client.reset("math", seed=2).state)
    prefix, payload, signature = state.split(".")
    forged = f"{prefix}.{payload}.{'B' if signature[0] == 'A' else 'A'}{signature[1:]}"
    with pytest.raises(ClientError) as caught:
        client.step("math", forged, "\\boxed{1}")
    assert (caught.value.status, caught.value.kind) == (403, "invalid-token-signature")
    with pytest.raises(ClientError) as malformed:
        client.step("math", "not-a-token", "\\boxed{1}")
    assert malformed.value.status == 400


def test_finished_episode_is_a_409(client: EnvServerClient) -> None:
    episode = client.reset("math", seed=3)
    done = client.step("math", str(episode.state), WRONG)
    assert done.terminated
    with pytest.raises(ClientError) as caught:
        client.step("math", str(done.state), WRONG)
    assert (caught.value.status, caught.value.kind) == (409, "episode-finished")


def test_read_timeout_is_not_retried(base_url: str) -> None:
    with (
        EnvServerClient(base_url, timeout=httpx.Timeout(0.3), retry=FAST) as impatient,
        pytest.raises(EnvServerError) as caught,
    ):
        impatient.verify([{"response": "sleep:0.6", "reference": "x"}], verifier="test.sleep")
    assert not isinstance(caught.value, (RetriesExhaustedError, ClientError, ServerError))
    assert caught.value.attempts == 1
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)


def test_unreachable_server_gives_up_after_the_attempts() -> None:
    policy = RetryPolicy(attempts=3, backoff_s=0.01)
    with (
        EnvServerClient(f"http://127.0.0.1:{free_port()}", retry=policy) as nowhere,
        pytest.raises(RetriesExhaustedError) as caught,
    ):
        nowhere.envs()
    assert caught.value.attempts == 3
    assert caught.value.status is None
    assert isinstance(caught.value.__cause__, httpx.ConnectError)
    assert "gave up after 3 attempts" in str(caught.value)


# --- async ------------------------------------------------------------------------------------


def test_async_client_round_trip(base_url: str) -> None:
    async def scenario() -> None:
        async with AsyncEnvServerClient(base_url, retry=FAST) as client:
            catalogue, ready = await asyncio.gather(client.envs(), client.ready())
            assert "math" in [env.id for env in catalogue.envs]
            assert ready.status == "ok"
            assert (await client.env("math")).id == "math"
            episodes = await asyncio.gather(*(client.reset("math", seed=s) for s in (41, 42)))
            steps = await asyncio.gather(
                *(
                    client.step("math", str(e.state), expert_answer(str(e.task_id)))
                    for e in episodes
                )
            )
            assert [s.reward for s in steps] == [1.0, 1.0]
            batch = await client.reset_batch("math", [{"seed": 41}, {"seed": 42}])
            assert [r.observation for r in batch.results] == [e.observation for e in episodes]
            stepped = await client.step_batch(
                "math", [(str(r.state), WRONG) for r in batch.results]
            )
            assert [s.reward for s in stepped.results] == [0.0, 0.0]
            verified = await client.verify(
                [{"response": "\\boxed{2}", "reference": "2"}], verifier="math"
            )
            assert verified.results[0].reward == 1.0
            with pytest.raises(ClientError) as caught:
                await client.env("no-such-env")
            assert caught.value.status == 404

    asyncio.run(scenario())


# --- retries against a busy server --------------------------------------------------------------


def test_api_key_is_sent_as_bearer(busy_server: LiveServer) -> None:
    with EnvServerClient(busy_server.base_url, api_key="", retry=FAST) as anonymous:
        assert anonymous.ready().status == "ok"  # probes stay open
        with pytest.raises(ClientError) as caught:
            anonymous.envs()
        assert (caught.value.status, caught.value.kind) == (401, "unauthorized")
    with EnvServerClient(busy_server.base_url, api_key=SECRET, retry=FAST) as keyed:
        assert "math" in [env.id for env in keyed.envs().envs]


def test_retries_429_until_the_server_has_room(
    busy_server: LiveServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="clients.http")
    url = busy_server.base_url

    def occupy() -> float | None:
        with EnvServerClient(url, api_key=SECRET, retry=NO_RETRY) as hog:
            items = [{"response": "sleep:0.8", "reference": "x"}]
            return hog.verify(items, verifier="test.sleep").results[0].reward

    with (
        EnvServerClient(url, api_key=SECRET, retry=RetryPolicy(attempts=5)) as client,
        ThreadPoolExecutor(max_workers=1) as pool,
    ):
        hogged = pool.submit(occupy)
        wait_until(lambda: client.ready().in_flight == 1)
        started = time.monotonic()
        result = client.verify([{"response": "x", "reference": "x"}], verifier="test.sleep")
        elapsed = time.monotonic() - started
        assert hogged.result() == 0.0

    assert result.results[0].reward == 1.0
    retries = [r.getMessage() for r in caplog.records if r.name == "clients.http"]
    assert retries and all("HTTP 429" in message for message in retries)
    assert elapsed >= 1.0  # the server's Retry-After: 1 was honoured


def test_retries_give_up_after_the_configured_attempts(busy_server: LiveServer) -> None:
    url = busy_server.base_url
    # Two items never fit a queue of one: every attempt is refused with 429.
    items = [{"response": "x", "reference": "x"}] * 2
    policy = RetryPolicy(attempts=3, backoff_s=0.01, max_retry_after_s=0.01)
    before = rejected_items(url)
    with (
        EnvServerClient(url, api_key=SECRET, retry=policy) as client,
        pytest.raises(RetriesExhaustedError) as caught,
    ):
        client.verify(items, verifier="test.sleep")
    error = caught.value
    assert (error.status, error.kind, error.attempts) == (429, "overloaded", 3)
    assert "gave up after 3 attempts" in str(error)
    assert rejected_items(url) - before == 3 * len(items)


def test_async_retries_give_up_too(busy_server: LiveServer) -> None:
    policy = RetryPolicy(attempts=2, backoff_s=0.01, max_retry_after_s=0.01)

    async def scenario() -> RetriesExhaustedError:
        async with AsyncEnvServerClient(busy_server.base_url, api_key=SECRET, retry=policy) as c:
            try:
                await c.verify([{"response": "x", "reference": "x"}] * 2, verifier="test.sleep")
            except RetriesExhaustedError as exc:
                return exc
        raise AssertionError("no RetriesExhaustedError")

    error = asyncio.run(scenario())
    assert (error.status, error.attempts) == (429, 2)


# --- the retry policy itself ----------------------------------------------------------------------


def test_backoff_is_bounded_exponential_with_jitter() -> None:
    policy = RetryPolicy(attempts=10, backoff_s=0.1, max_backoff_s=1.0)
    for failures, ceiling in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.0), (9, 1.0)]:
        delays = [policy.delay_s(failures) for _ in range(200)]
        assert all(0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling / 2  # jittered over the range, not pinned at zero
    assert 3.0 <= policy.delay_s(1, retry_after_s=3.0) <= 3.1


def test_retry_after_header_forms() -> None:
    assert retry_after_s(httpx.Response(429, headers={"Retry-After": "2"})) == 2.0
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    parsed = retry_after_s(httpx.Response(503, headers={"Retry-After": when}))
    assert parsed is not None and 25 <= parsed <= 30
    assert retry_after_s(httpx.Response(429, headers={"Retry-After": "soon"})) is None
    assert retry_after_s(httpx.Response(429)) is None
    with pytest.raises(ValueError, match="attempts"):
        RetryPolicy(attempts=0)


def test_a_gateways_answer_for_a_lost_replica_is_retried_and_the_services_errors_are_not() -> None:
    problem = {"content-type": "application/problem+json"}
    # Ray Serve's proxy (500, plain text) and nginx (502, HTML) when the replica died mid-request.
    assert worth_retrying(httpx.Response(500, text="Internal Server Error"))
    assert worth_retrying(httpx.Response(502, html="<html>Bad Gateway</html>"))
    assert worth_retrying(httpx.Response(429, headers=problem))
    assert not worth_retrying(httpx.Response(500, headers=problem, text="{}"))
    assert not worth_retrying(httpx.Response(504, headers=problem, text="{}"))
    assert not worth_retrying(httpx.Response(400, text="bad"))


# --- what the client package may depend on ------------------------------------------------------


def test_client_package_imports_nothing_from_the_server_but_its_wire_schemas() -> None:
    imported: dict[str, set[str]] = {}
    for path in sorted((ROOT / "clients").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = {node.module}
            else:
                continue
            for name in names:
                if name.split(".")[0] in ("envserver", "environments", "verifiers", "sandbox"):
                    imported.setdefault(name, set()).add(path.relative_to(ROOT).as_posix())
    # The bare package is the one source of the version (the client's User-Agent), nothing else.
    assert set(imported) <= {"envserver.wire", "envserver"}, imported
    package = ast.parse((ROOT / "envserver" / "__init__.py").read_text())
    assigned = [node for node in package.body if not isinstance(node, ast.Expr)]
    assert [ast.unparse(node).split(" =")[0] for node in assigned] == ["__version__"]


def test_client_package_stays_light() -> None:
    program = (
        "import sys, clients.audit, clients.cli, clients.gym, clients.http;"
        " print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    modules = set(done.stdout.split())
    loaded = {module.split(".")[0] for module in modules}
    heavy = {"fastapi", "starlette", "uvicorn", "prometheus_client", "sympy", "math_verify"}
    assert loaded.isdisjoint(heavy), loaded & heavy
    # The wire schemas' number rules are shared with the verifiers' options (pydantic alone);
    # no verifier itself may load.
    verifiers = {module for module in modules if module.split(".")[0] == "verifiers"}
    assert verifiers <= {"verifiers", "verifiers.numbers"}, verifiers
    server = {module for module in modules if module.split(".")[0] == "envserver"}
    assert server == {"envserver", "envserver.wire"}, server


def test_answers_with_fields_from_a_newer_server_are_accepted() -> None:
    from clients.http import _decode, _health_call

    body = {"status": "ok", "version": "9.9", "added_later": {"x": 1}}
    health = _decode(_health_call("/healthz"), httpx.Response(200, json=body), attempts=1)
    assert (health.status, health.version) == ("ok", "9.9")
    with pytest.raises(UnexpectedResponseError):
        _decode(_health_call("/healthz"), httpx.Response(200, text="<html>"), attempts=1)
