"""Request body size limit, enforced before the body is parsed."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from envserver.problems import problem_response


class BodyLimitMiddleware:
    """Answers 413 when the declared or the actual body exceeds ``max_bytes``.

    A body without Content-Length (chunked) is read up to the limit and then replayed, so the
    limit holds without trusting the client.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and not declared.isdigit():
            await problem_response(400, "malformed Content-Length")(scope, receive, send)
        elif declared is not None and int(declared) > self.max_bytes:
            await self._too_large(scope, receive, send)
        elif declared is not None or scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE"):
            # The server enforces Content-Length framing, so a declared size is the real size.
            await self.app(scope, receive, send)
        else:
            await self._chunked(scope, receive, send)

    async def _chunked(self, scope: Scope, receive: Receive, send: Send) -> None:
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._too_large(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem_response(
            413, f"request body exceeds {self.max_bytes} bytes", kind="body-too-large"
        )
        await response(scope, receive, send)
