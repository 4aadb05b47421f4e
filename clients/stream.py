"""httpx transports that carry the API's POSTs over one WebSocket, the server's ``/v1/stream``.

``StreamTransport`` (sync) and ``AsyncStreamTransport`` sit under the clients' one request core
(``clients.http``): a reset, step, batch, expand or verify request becomes a frame
``{"id", "path", "body"}`` on the socket, and its answer ``{"id", "status", "body"}`` becomes the
``httpx.Response`` the same request would have got over HTTP, so retries, problem documents and
typed errors are the HTTP client's. Calls from many threads (or tasks) share the socket and are
answered as each finishes. Everything else (the catalogue, health) goes over HTTP through
``fallback``, and so does every call once the WebSocket handshake has been refused (a proxy that
does not pass WebSockets, a server without ``/v1/stream``). A socket that drops fails the calls in
flight with ``httpx.ReadError``, which the request core sends again at once, over a new socket.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
from websockets.asyncio.client import ClientConnection as AsyncConnection
from websockets.asyncio.client import connect as async_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import ClientConnection, connect

log = logging.getLogger("clients.stream")

STREAM_PATH = "/v1/stream"
_STREAMED = re.compile(r"/v1/(?:envs/.+/(?:reset|step|reset/batch|step/batch|expand)|verify)")
OPEN_TIMEOUT_S = 10.0
MAX_FRAME_BYTES = 64 * 1024 * 1024
"""The largest answer frame read (a batch of long observations)."""


def _streamed(request: httpx.Request) -> tuple[str, str] | None:
    """``(prefix, API path)`` of a request the stream carries (the prefix is where a proxy
    mounts the API: ``/envserver`` in ``/envserver/v1/verify``); None for any other."""
    path = request.url.path
    at = path.find("/v1/")
    if request.method != "POST" or at < 0 or not _STREAMED.fullmatch(path[at:]):
        return None
    return path[:at], path[at:]


def _socket_url(request: httpx.Request, prefix: str) -> str:
    scheme = "wss" if request.url.scheme == "https" else "ws"
    return str(request.url.copy_with(scheme=scheme, path=prefix + STREAM_PATH, query=None))


def _handshake_headers(request: httpx.Request) -> dict[str, str]:
    # The client's own headers (its API key above all) authenticate the socket.
    keep = ("authorization", "user-agent")
    return {name: value for name, value in request.headers.items() if name.lower() in keep}


def _frame(request_id: int, path: str, body: bytes) -> bytes:
    return b'{"id":%d,"path":%s,"body":%s}' % (request_id, orjson.dumps(path), body or b"{}")


def _response(reply: dict[str, Any], request: httpx.Request) -> httpx.Response:
    status = int(reply["status"])
    media = "application/problem+json" if status >= 400 else "application/json"
    headers = {"content-type": media, **reply.get("headers", {})}
    return httpx.Response(
        status, headers=headers, content=orjson.dumps(reply["body"]), request=request
    )


def _read_timeout(request: httpx.Request) -> float | None:
    timeout: float | None = request.extensions.get("timeout", {}).get("read")
    return timeout


def _refused(url: str, exc: Exception) -> None:
    log.warning("%s refused the WebSocket (%s); calls go over HTTP from now on", url, exc)


def _dropped(url: str) -> httpx.ReadError:
    return httpx.ReadError(f"the stream {url} closed with the call in flight")


# --- sync ---------------------------------------------------------------------------------------


@dataclass
class _Link:
    """One open socket and the calls it carries."""

    socket: ClientConnection
    url: str
    pending: dict[int, Future[dict[str, Any]]] = field(default_factory=dict)


class StreamTransport(httpx.BaseTransport):
    """Calls over one WebSocket, shared by every thread of the client (see the module)."""

    def __init__(self, fallback: httpx.BaseTransport) -> None:
        self._fallback = fallback
        self._lock = threading.Lock()  # connecting, sending and the pending calls
        self._link: _Link | None = None
        self._ids = itertools.count()
        self._refused = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        streamed = None if self._refused else _streamed(request)
        if streamed is None:
            return self._fallback.handle_request(request)
        prefix, path = streamed
        body = request.read()
        with self._lock:
            link = self._link or self._connect(request, prefix)
            if link is None:
                return self._fallback.handle_request(request)
            request_id = next(self._ids)
            future: Future[dict[str, Any]] = Future()
            link.pending[request_id] = future
            try:
                link.socket.send(_frame(request_id, path, body))
            except ConnectionClosed as exc:
                del link.pending[request_id]
                raise httpx.WriteError(f"the stream {link.url} closed: {exc}") from exc
        try:
            reply = future.result(timeout=_read_timeout(request))
        except TimeoutError:
            with self._lock:
                link.pending.pop(request_id, None)
            raise httpx.ReadTimeout(f"no answer on {link.url} within the read timeout") from None
        return _response(reply, request)

    def _connect(self, request: httpx.Request, prefix: str) -> _Link | None:
        url = _socket_url(request, prefix)
        try:
            socket = connect(
                url,
                additional_headers=_handshake_headers(request),
                open_timeout=OPEN_TIMEOUT_S,
                max_size=MAX_FRAME_BYTES,
                compression=None,
            ).__enter__()  # the link, not a with block, owns the socket: close() closes it
        except InvalidHandshake as exc:
            _refused(url, exc)
            self._refused = True
            return None
        except (OSError, TimeoutError) as exc:
            raise httpx.ConnectError(f"cannot open {url}: {exc}") from exc
        link = self._link = _Link(socket, url)
        threading.Thread(target=self._read, args=(link,), name="envserver-stream").start()
        return link

    def _read(self, link: _Link) -> None:
        try:
            for message in link.socket:
                reply = orjson.loads(message)
                with self._lock:
                    future = link.pending.pop(reply.get("id"), None)
                if future is not None:
                    future.set_result(reply)
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                if self._link is link:
                    self._link = None
                lost, link.pending = list(link.pending.values()), {}
            for future in lost:
                future.set_exception(_dropped(link.url))

    def close(self) -> None:
        with self._lock:
            link, self._link = self._link, None
        if link is not None:
            link.socket.close()
        self._fallback.close()


# --- async --------------------------------------------------------------------------------------


@dataclass
class _AsyncLink:
    socket: AsyncConnection
    url: str
    reader: asyncio.Task[None] | None = None
    pending: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)


class AsyncStreamTransport(httpx.AsyncBaseTransport):
    """The asyncio twin of ``StreamTransport``: one socket shared by every task of the client."""

    def __init__(self, fallback: httpx.AsyncBaseTransport) -> None:
        self._fallback = fallback
        self._connecting = asyncio.Lock()
        self._link: _AsyncLink | None = None
        self._ids = itertools.count()
        self._refused = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        streamed = None if self._refused else _streamed(request)
        if streamed is None:
            return await self._fallback.handle_async_request(request)
        prefix, path = streamed
        body = await request.aread()
        async with self._connecting:
            link = self._link or await self._connect(request, prefix)
        if link is None:
            return await self._fallback.handle_async_request(request)
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        link.pending[request_id] = future
        try:
            await link.socket.send(_frame(request_id, path, body))
            async with asyncio.timeout(_read_timeout(request)):
                reply = await future
        except ConnectionClosed as exc:
            raise httpx.WriteError(f"the stream {link.url} closed: {exc}") from exc
        except TimeoutError:
            raise httpx.ReadTimeout(f"no answer on {link.url} within the read timeout") from None
        finally:
            link.pending.pop(request_id, None)
        return _response(reply, request)

    async def _connect(self, request: httpx.Request, prefix: str) -> _AsyncLink | None:
        url = _socket_url(request, prefix)
        try:
            socket = await async_connect(
                url,
                additional_headers=_handshake_headers(request),
                open_timeout=OPEN_TIMEOUT_S,
                max_size=MAX_FRAME_BYTES,
                compression=None,
            )
        except InvalidHandshake as exc:
            _refused(url, exc)
            self._refused = True
            return None
        except (OSError, TimeoutError) as exc:
            raise httpx.ConnectError(f"cannot open {url}: {exc}") from exc
        link = self._link = _AsyncLink(socket, url)
        link.reader = asyncio.create_task(self._read(link), name="envserver-stream")
        return link

    async def _read(self, link: _AsyncLink) -> None:
        try:
            async for message in link.socket:
                reply = orjson.loads(message)
                future = link.pending.pop(reply.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(reply)
        except ConnectionClosed:
            pass
        finally:
            if self._link is link:
                self._link = None
            lost, link.pending = list(link.pending.values()), {}
            for future in lost:
                if not future.done():
                    future.set_exception(_dropped(link.url))

    async def aclose(self) -> None:
        link, self._link = self._link, None
        if link is not None:
            await link.socket.close()
            if link.reader is not None:
                await link.reader
        await self._fallback.aclose()
