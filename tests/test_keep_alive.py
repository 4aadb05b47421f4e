"""Kept-alive connections between the clients and the server (issue 24, item 8: a request sent
on a connection the server was closing as idle came back as ``ReadError``).

The race itself is a matter of microseconds, so ``ResettingRelay`` makes it certain: a real TCP
relay in front of the real server that resets a kept-alive connection when a second request
arrives on it, which is what a client sees when the server closes the idle connection just as
the request is on its way.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import selectors
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from clients.http import KEEPALIVE_EXPIRY_S, AsyncEnvServerClient, EnvServerClient
from clients.retry import NO_RETRY
from envserver.config import Settings
from tests.conftest import make_server
from tests.server import LiveServer


class ResettingRelay:
    """``127.0.0.1:port`` → ``upstream``; on each connection the first exchange passes, and the
    next request is answered with a TCP reset. ``connections`` and ``resets`` count."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.connections = 0
        self.resets = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> ResettingRelay:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._listener.close()

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.upstream)
        answered = False
        with selectors.DefaultSelector() as selector, client, upstream:
            selector.register(client, selectors.EVENT_READ)
            selector.register(upstream, selectors.EVENT_READ)
            while not self._closing.is_set():
                for key, _ in selector.select(timeout=0.2):
                    data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                    if key.fileobj is upstream:
                        if not data:
                            return
                        client.sendall(data)
                        answered = True
                    elif not data:
                        return
                    elif answered:  # a second request on a kept-alive connection: reset it
                        self.resets += 1
                        client.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                        )
                        return
                    else:
                        upstream.sendall(data)


@pytest.fixture
def relay(live_server: LiveServer) -> Iterator[ResettingRelay]:
    with ResettingRelay(("127.0.0.1", live_server.port)) as running:
        yield running


def test_clients_expire_idle_connections_before_the_server_does() -> None:
    uvicorn_default = inspect.signature(uvicorn.Config).parameters["timeout_keep_alive"].default
    assert uvicorn_default > KEEPALIVE_EXPIRY_S
    assert Settings().keep_alive_s > KEEPALIVE_EXPIRY_S


def test_a_reset_kept_alive_connection_is_sent_again(
    relay: ResettingRelay, caplog: pytest.LogCaptureFixture
) -> None:
    # No retry policy at all: the one resend on a reset is not the policy's.
    with (
        caplog.at_level(logging.INFO, "clients.http"),
        EnvServerClient(relay.base_url, retry=NO_RETRY) as client,
    ):
        reset = client.reset("math", seed=1)
        assert reset.state is not None
        step = client.step("math", reset.state, "\\boxed{-1}")
    assert step.status == "ok"
    assert (relay.connections, relay.resets) == (2, 1)
    assert "sending it again on a fresh connection" in caplog.text


def test_the_async_client_sends_a_reset_request_again(relay: ResettingRelay) -> None:
    async def episode() -> str:
        async with AsyncEnvServerClient(relay.base_url, retry=NO_RETRY) as client:
            reset = await client.reset("math", seed=1)
            assert reset.state is not None
            return (await client.step("math", reset.state, "\\boxed{-1}")).status

    assert asyncio.run(episode()) == "ok"
    assert (relay.connections, relay.resets) == (2, 1)


def test_the_server_closes_idle_connections_after_its_keep_alive(tmp_path: Path) -> None:
    with (
        make_server(tmp_path, ENVSERVER_KEEP_ALIVE_S="1", ENVSERVER_POOL_WORKERS="1") as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=30) as conn,
    ):
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        received = b""
        while chunk := conn.recv(65536):  # the answer, then b"" when the server closes
            received += chunk
            answered = time.monotonic()
        idle = time.monotonic() - answered
    assert received.startswith(b"HTTP/1.1 200") and b'"status":"ok"' in received
    assert 0.5 < idle < 10, idle
