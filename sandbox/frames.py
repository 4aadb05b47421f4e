"""Length-prefixed JSON frames: the wire between the pool, the workers and the harness.

A frame is a 4-byte big-endian length and that many bytes of UTF-8 JSON. Readers cap the length
so a hostile writer cannot make the trusted side allocate without bound.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

MAX_FRAME = 64 << 20
_HEADER = struct.Struct(">I")


class FrameError(Exception):
    """The peer sent something that is not a well-formed frame, or hung up mid-frame."""


def pack(message: Any) -> bytes:
    """``message`` as one frame."""
    body = json.dumps(message, separators=(",", ":"), allow_nan=False).encode()
    return _HEADER.pack(len(body)) + body


def write(fd: int, message: Any) -> None:
    """Write one frame to ``fd`` (blocking)."""
    data = memoryview(pack(message))
    while data:
        data = data[os.write(fd, data) :]


def read(fd: int, max_bytes: int = MAX_FRAME) -> Any:
    """Read one frame from ``fd`` (blocking); ``FrameError`` on EOF or garbage."""
    reader = FrameReader(max_bytes)
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            raise FrameError("the peer closed the channel")
        frames = reader.feed(chunk)
        if frames:
            if len(frames) > 1 or reader.pending:
                raise FrameError("more than one frame where one was expected")
            return frames[0]


class FrameReader:
    """Incremental parser for a non-blocking reader: feed bytes, get whole frames."""

    def __init__(self, max_bytes: int = MAX_FRAME) -> None:
        self.max_bytes = max_bytes
        self._buffer = bytearray()

    @property
    def pending(self) -> int:
        """Bytes received that do not yet form a frame."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[Any]:
        """Add ``data``; every frame it completes, in order."""
        self._buffer += data
        frames: list[Any] = []
        while len(self._buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(self._buffer)
            if size > self.max_bytes:
                raise FrameError(f"a frame of {size} bytes exceeds the {self.max_bytes} limit")
            if len(self._buffer) < _HEADER.size + size:
                break
            body = bytes(self._buffer[_HEADER.size : _HEADER.size + size])
            del self._buffer[: _HEADER.size + size]
            try:
                frames.append(json.loads(body))
            except (ValueError, RecursionError) as exc:  # bad UTF-8 or JSON, too deep
                raise FrameError(f"a frame is not JSON: {exc}") from None
        return frames
