"""``/v1/stream`` end to end: the contract over the socket for every environment, the clients'
``transport="stream"`` (sync, async, the vector env, the fallback to HTTP behind a proxy that
refuses WebSockets), and hostile sockets: malformed and oversized frames, a client that never
reads its answers, a socket dropped with calls in flight."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from clients.errors import ClientError
from clients.http import AsyncEnvServerClient, EnvServerClient
from clients.vector import EnvServerVectorEnv
from tests.conftest import RESTRICTED_KEY, make_server
from tests.server import LiveServer
from tests.test_contracts import ENVS, EPISODE_SEED, env

KEY = RESTRICTED_KEY.partition(":")[2]


def socket_url(base_url: str) -> str:
    return base_url.replace("http://", "ws://") + "/v1/stream"


def call(ws: Any, request_id: Any, path: str, body: Any) -> dict[str, Any]:
    ws.send(json.dumps({"id": request_id, "path": path, "body": body}))
    reply: dict[str, Any] = json.loads(ws.recv(timeout=120))
    return reply


@pytest.mark.parametrize("env_id", ENVS)
def test_the_served_environment_is_the_registered_one_over_the_stream(
    env_id: str, base_url: str
) -> None:
    # The assertions of tests/test_contracts.py's HTTP contract, through the stream client.
    environment = env(env_id)
    first = environment.reset(EPISODE_SEED, environment.spec.options_model())
    timeout = 2 * environment.spec.timeout_s + 30
    with EnvServerClient(base_url, timeout=timeout, transport="stream") as client:
        reset = client.reset(env_id, seed=EPISODE_SEED)
        assert reset.model_dump(mode="json")["observation"] == first.observation
        assert reset.state is not None
        action = environment.expert_action(first.state)
        step = client.step(env_id, reset.state, action)
    local = environment.step(first.state, action)
    assert (step.reward, step.status, step.terminated) == (
        local.score.reward,
        local.score.status,
        local.terminated,
    )


def test_answers_arrive_out_of_order_and_match_http(base_url: str) -> None:
    with connect(socket_url(base_url)) as ws, httpx.Client(base_url=base_url) as http:
        # A slow verify first, then a quick reset: the reset's answer overtakes it.
        slow = {"verifier": "test.sleep", "items": [{"response": "sleep:0.5", "reference": 1}]}
        ws.send(json.dumps({"id": "slow", "path": "/v1/verify", "body": slow}))
        ws.send(json.dumps({"id": "quick", "path": "/v1/envs/math/reset", "body": {"seed": 4}}))
        first, second = (json.loads(ws.recv(timeout=60)) for _ in range(2))
        assert (first["id"], second["id"]) == ("quick", "slow")
        assert first["body"] == http.post("/v1/envs/math/reset", json={"seed": 4}).json()
        # A problem is the HTTP problem, status and document alike.
        bad = {"state": "garbage", "action": "x"}
        over_http = http.post("/v1/envs/math/step", json=bad)
        reply = call(ws, 9, "/v1/envs/math/step", bad)
        assert (reply["status"], reply["body"]) == (over_http.status_code, over_http.json())


def test_malformed_frames_get_problems_and_the_socket_stays_up(base_url: str) -> None:
    with connect(socket_url(base_url)) as ws:
        ws.send("{not json")
        assert json.loads(ws.recv(timeout=30))["status"] == 400
        ws.send("[1, 2]")
        assert json.loads(ws.recv(timeout=30))["body"]["type"].endswith("malformed-frame")
        ws.send(json.dumps({"id": True, "path": "/v1/verify", "body": {}}))
        assert json.loads(ws.recv(timeout=30))["status"] == 400
        assert call(ws, 1, "/v1/envs/math/reset", {"seed": -1})["status"] == 422
        assert call(ws, 2, "/v1/nowhere", {})["status"] == 404
        assert call(ws, 3, "/v1/envs/no-such-env/reset", {})["status"] == 404
        deep: Any = []
        for _ in range(200):
            deep = [deep]
        reply = call(ws, 4, "/v1/verify", {"items": deep})
        assert (reply["status"], reply["body"]["type"].endswith("too-deep")) == (422, True)
        ws.send(json.dumps({"id": 5, "path": "/v1/verify", "body": {}, "extra": 1}))
        assert json.loads(ws.recv(timeout=30))["status"] == 400
        # A frame that is a scalar, and ids no answer could carry back (half a surrogate pair,
        # past 64 bits): each answered 400, with a null id.
        for frame in ("123", "true", "null", "1.5", '"text"'):
            ws.send(frame)
            assert json.loads(ws.recv(timeout=30)) | {"body": None} == {
                "id": None,
                "status": 400,
                "body": None,
            }, frame
        for request_id in ('"\\udfff"', str(2**64), str(10**400)):
            ws.send(f'{{"id": {request_id}, "path": "/v1/verify", "body": {{}}}}')
            answer = json.loads(ws.recv(timeout=30))
            assert (answer["id"], answer["status"]) == (None, 400), (request_id, answer)
        assert call(ws, 6, "/v1/envs/math/reset", {"seed": 1})["status"] == 200


def test_oversized_frames_get_413_with_their_id_and_auth_is_checked(
    restricted_server: LiveServer,
) -> None:
    url = socket_url(restricted_server.base_url)
    with pytest.raises(Exception, match="401"):
        connect(url).close()
    headers = {"Authorization": f"Bearer {KEY}"}
    with connect(url, additional_headers=headers) as ws:
        big = "x" * 70_000  # the restricted server's max_body_bytes is 65,536
        reply = call(ws, "big", "/v1/verify", {"items": [{"response": big, "reference": 1}]})
        assert (reply["id"], reply["status"]) == ("big", 413)
        assert reply["body"]["type"].endswith("body-too-large")
        assert call(ws, "small", "/v1/envs/math/reset", {"seed": 2})["status"] == 200


def test_backpressure_answers_429_with_retry_after(restricted_server: LiveServer) -> None:
    # One worker and a queue of three: six slow calls at once overflow it.
    headers = {"Authorization": f"Bearer {KEY}"}
    slow = {"verifier": "test.sleep", "items": [{"response": "sleep:0.5", "reference": 1}] * 2}
    with connect(socket_url(restricted_server.base_url), additional_headers=headers) as ws:
        for request_id in range(6):
            ws.send(json.dumps({"id": request_id, "path": "/v1/verify", "body": slow}))
        replies = [json.loads(ws.recv(timeout=60)) for _ in range(6)]
    refused = [r for r in replies if r["status"] == 429]
    assert refused, [r["status"] for r in replies]
    assert all(r["headers"]["retry-after"].isdigit() for r in refused)


def test_a_client_that_never_reads_is_bounded_and_others_are_served(
    tmp_path: Path,
) -> None:
    frames = 20_000
    # A queue that never answers 429, so the server has no quick answer to give: every call
    # it reads waits for the pool (two workers, 0.9 s an item).
    with make_server(tmp_path, ENVSERVER_MAX_QUEUE_ITEMS="100000") as server:
        # 10 kB frames, uncompressed (float() reads the padded seconds): if the server read past its
        # open-call bound, 20,000 of them (200 MB) would be taken in well under 15 s.
        item = {"response": "sleep:0.9" + " " * 10_000, "reference": 1}
        body = {"verifier": "test.sleep", "items": [item]}
        frame = json.dumps({"id": 0, "path": "/v1/verify", "body": body})
        sent = 0
        with connect(socket_url(server.base_url), max_queue=1, compression=None) as ws:

            def flood() -> None:
                nonlocal sent
                try:
                    for _ in range(frames):
                        ws.send(frame)
                        sent += 1
                except Exception:  # the socket closed under it: the test is over
                    return

            threading.Thread(target=flood, daemon=True).start()
            time.sleep(15)
            assert sent < frames, "the server kept reading a socket nobody reads answers from"
            with EnvServerClient(server.base_url, transport="stream") as other:
                assert other.reset("math", seed=3).state
                assert other.ready().status == "ok"
            ws.socket.close()
        assert httpx.get(f"{server.base_url}/healthz", timeout=30).status_code == 200


def test_a_socket_dropped_with_calls_in_flight_leaves_the_server_healthy(
    base_url: str,
) -> None:
    slow = {"verifier": "test.sleep", "items": [{"response": "sleep:0.5", "reference": 1}]}
    with connect(socket_url(base_url)) as ws:
        reset = call(ws, "r", "/v1/envs/math/reset", {"seed": 8})
        for request_id in range(4):
            ws.send(json.dumps({"id": request_id, "path": "/v1/verify", "body": slow}))
        ws.socket.close()  # dropped, no close handshake
    with EnvServerClient(base_url, transport="stream") as client:
        # The token the client held before the drop still steps its episode.
        step = client.step("math", reset["body"]["state"], "\\boxed{0}")
        assert step.status in ("ok", "invalid")
        assert client.ready().status == "ok"
    assert httpx.get(f"{base_url}/healthz", timeout=30).json()["status"] == "ok"


def test_the_async_client_streams_concurrent_calls(base_url: str) -> None:
    async def play() -> list[float | None]:
        async with AsyncEnvServerClient(base_url, transport="stream") as client:
            resets = await asyncio.gather(*(client.reset("math", seed=s) for s in range(16)))
            steps = await asyncio.gather(
                *(client.step("math", str(r.state), "\\boxed{0}") for r in resets)
            )
            with pytest.raises(ClientError) as refused:
                await client.step("math", "not a token", "x")
            assert refused.value.status == 400
            return [s.reward for s in steps]

    rewards = asyncio.run(play())
    assert len(rewards) == 16
    assert all(reward in (0.0, 1.0) for reward in rewards)


def test_the_vector_env_steps_over_the_stream(base_url: str) -> None:
    envs = EnvServerVectorEnv(4, "math", base_url=base_url, transport="stream")
    try:
        observations, _ = envs.reset(seed=5)
        assert len(observations) == 4
        _, rewards, terminated, _, infos = envs.step(["\\boxed{0}"] * 4)
        assert terminated.all()
        assert set(infos["status"]) <= {"ok", "invalid"}
        assert len(rewards) == 4
    finally:
        envs.close()


class _NoWebSockets(BaseHTTPRequestHandler):
    """A reverse proxy that passes HTTP through and refuses every WebSocket upgrade (403), as
    some proxies do."""

    upstream = ""

    def do_GET(self) -> None:
        if self.headers.get("Upgrade", "").lower() == "websocket":
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._forward()

    def do_POST(self) -> None:
        self._forward()

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        reply = httpx.request(
            self.command,
            self.upstream + self.path,
            content=body,
            headers={"Content-Type": self.headers.get("Content-Type", "application/json")},
            timeout=60,
        )
        self.send_response(reply.status_code)
        self.send_header("Content-Type", reply.headers.get("content-type", "application/json"))
        self.send_header("Content-Length", str(len(reply.content)))
        self.end_headers()
        self.wfile.write(reply.content)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def refusing_proxy(base_url: str) -> Iterator[str]:
    handler = type("Handler", (_NoWebSockets,), {"upstream": base_url})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_client_falls_back_to_http_behind_a_proxy_that_refuses_websockets(
    refusing_proxy: str,
) -> None:
    with EnvServerClient(refusing_proxy, transport="stream") as client:
        reset = client.reset("math", seed=6)
        assert reset.state
        step = client.step("math", reset.state, "\\boxed{0}")
        assert step.status in ("ok", "invalid")
