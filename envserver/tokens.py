"""State tokens: an episode's JSON state, compressed and signed, carried by the client.

Format: ``est1.<base64url(zlib(json))>.<base64url(HMAC-SHA256)>``. The signed JSON holds the env id,
the env version and the state, and the MAC covers the format tag and the compressed bytes, so a
token cannot be edited, truncated, moved to another environment or replayed against another
version without being refused.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import zlib
from collections.abc import Sequence
from typing import Any

TOKEN_PREFIX = "est1"  # noqa: S105 - a format tag, not a secret
_MAC_SIZE = hashlib.sha256().digest_size


class TokenError(ValueError):
    """A token that cannot be opened. ``kind`` names why, for the problem type."""

    def __init__(self, kind: str, detail: str, *, forbidden: bool) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.forbidden = forbidden  # True: refused (403); False: unreadable (400)


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    if not text or not text.isascii():
        raise ValueError("empty or non-ASCII")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64encode(data) != text:
        # Only the canonical spelling is accepted, so one state has exactly one token.
        raise ValueError("non-canonical base64")
    return data


class StateTokens:
    """Issues and opens state tokens with ``keys[0]``; ``keys[1:]`` are still accepted."""

    def __init__(self, keys: Sequence[bytes], *, max_state_bytes: int) -> None:
        if not keys:
            raise ValueError("at least one signing key is required")
        self._keys = list(keys)
        self._max_state_bytes = max_state_bytes

    def _mac(self, key: bytes, body: bytes) -> bytes:
        return hmac.new(key, TOKEN_PREFIX.encode() + b"." + body, hashlib.sha256).digest()

    def issue(self, env_id: str, env_version: str, state: Any) -> str:
        """A token for ``state`` of ``env_id@env_version``; raises ValueError if it is too large."""
        document = json.dumps(
            {"env": env_id, "version": env_version, "state": state},
            separators=(",", ":"),
            sort_keys=True,
            ensure_ascii=False,
            allow_nan=False,
        ).encode()
        if len(document) > self._max_state_bytes:
            raise ValueError(f"state of {len(document)} bytes exceeds {self._max_state_bytes}")
        body = zlib.compress(document, 6)
        return f"{TOKEN_PREFIX}.{_b64encode(body)}.{_b64encode(self._mac(self._keys[0], body))}"

    def open(self, token: str, env_id: str, env_version: str) -> Any:
        """The state inside ``token``; raises ``TokenError`` for anything but a genuine token of
        ``env_id@env_version``."""
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != TOKEN_PREFIX:
            raise TokenError(
                "malformed-token",
                f"not a state token: expected '{TOKEN_PREFIX}.<payload>.<signature>'",
                forbidden=False,
            )
        try:
            body, mac = _b64decode(parts[1]), _b64decode(parts[2])
        except (ValueError, binascii.Error):
            raise TokenError(
                "malformed-token", "state token is not valid base64url", forbidden=False
            ) from None
        if len(mac) != _MAC_SIZE or not any(
            hmac.compare_digest(mac, self._mac(key, body)) for key in self._keys
        ):
            raise TokenError(
                "invalid-token-signature",
                "state token signature does not match: it was altered, truncated, or issued "
                "by a server with another secret",
                forbidden=True,
            )
        document = self._decompress(body)
        if document.get("env") != env_id:
            raise TokenError(
                "foreign-token",
                f"state token belongs to environment {document.get('env')!r}, not {env_id!r}",
                forbidden=True,
            )
        if document.get("version") != env_version:
            raise TokenError(
                "stale-token",
                f"state token was issued by {env_id}@{document.get('version')}; this server runs "
                f"{env_id}@{env_version}",
                forbidden=True,
            )
        return document["state"]

    def _decompress(self, body: bytes) -> dict[str, Any]:
        # Bounded: a signed token is ours, but a leaked older key must not allow a zip bomb.
        inflater = zlib.decompressobj()
        try:
            raw = inflater.decompress(body, self._max_state_bytes + 1)
        except zlib.error:
            raw = b""
        if len(raw) > self._max_state_bytes or not inflater.eof:
            raise TokenError(
                "malformed-token", "state token payload is unreadable", forbidden=False
            )
        document = json.loads(raw)
        if not isinstance(document, dict) or "state" not in document:
            raise TokenError(
                "malformed-token", "state token payload is unreadable", forbidden=False
            )
        return document
