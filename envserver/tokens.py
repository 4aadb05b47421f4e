"""State tokens: an episode's JSON state, sealed (encrypted and authenticated), carried by the
client.

Format: ``est2.<base64url(AES-256-GCM-SIV(json))>.<base64url(nonce)>``. The sealed JSON holds
the env id, the env version and the state; the client can neither read it (a shopping task's
state names the goal product, a text world's holds the whole world: reading them would be winning)
nor alter, truncate, move it to another environment or replay it against another version
without it being refused. ``est1`` tokens (zlib JSON, only signed, readable) are refused by name.
An episode started for a run that keeps statistics also carries the service's label (caller,
run, task id: ``envserver.stats``), sealed like the state, so its end is counted for that task.

Keys: each secret gives, through HKDF-SHA256, an AES-256-GCM-SIV key and a separate key for the
nonce. Decisions, and why:

- The nonce is synthetic, ``HMAC-SHA256(nonce key, json)[:12]``, not random: the same state
  gives the same token (a search deduplicates nodes by token, and regenerating an episode from
  its seed gives byte-identical replies), while different states get different nonces, so
  GCM-SIV runs within its nonce-respecting bounds (a fresh derived key per nonce). Equal tokens
  reveal only that the states are equal, which the client knows anyway (it made them so).
- GCM-SIV rather than GCM: even if two different states ever drew the same 96-bit nonce, GCM-SIV
  leaks at most that they collided, where GCM would leak its authentication key.
- No compression: a state holds text the client chose (a shopper's search keywords) next to the
  secret (the goal's name), so the length of a compressed token would tell whether a guess
  shares words with the goal (the CRIME attack).
- Padding: the sealed JSON is padded with trailing spaces (which JSON ignores) to the next power
  of two, at least ``MIN_BUCKET`` bytes and at most the size limit, so a token's length tells
  which bucket its state falls in, not how long its hidden parts are (a hidden world's size, a
  distance to the goal that shrinks as the policy gets closer). Powers of two rather than finer
  steps: a hidden part that varies by a tenth of the state's size moves it across a boundary
  for about one state in ten, where steps of 25 % would for about one in two; the price is at
  most twice the bytes. A length still tells the bucket, and which of two states close to a
  boundary is the longer, so a family keeps what varies with a secret out of its state where
  it can (a goal's index in a list the server regenerates, rather than the goal).
- The env id and version stay inside the sealed JSON (authenticated like the rest) rather than
  only in the associated data, so a foreign or stale token is refused by name, as before.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCMSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from envserver.wire import ProblemKind

TOKEN_PREFIX = "est2"  # noqa: S105 - a format tag, not a secret
RETIRED_PREFIXES = {"est1": "readable JSON, only signed"}
"""Earlier token formats, refused with a message that says so rather than as garbage."""

_ASSOCIATED_DATA = TOKEN_PREFIX.encode()  # a token of a later format cannot pass as this one
_NONCE_SIZE = 12
_TAG_SIZE = 16
MIN_BUCKET = 512
"""The smallest padded state, in bytes: a small state's length tells nothing of its contents."""


def padded_size(size: int, limit: int) -> int:
    """The bytes a ``size``-byte state (``size <= limit``) is sealed as: the next power of two,
    at least ``MIN_BUCKET``, at most ``limit``."""
    return min(max(MIN_BUCKET, 1 << (size - 1).bit_length()), limit)


class TokenError(ValueError):
    """A token that cannot be opened. ``kind`` names why, for the problem type."""

    def __init__(self, kind: ProblemKind, detail: str, *, forbidden: bool) -> None:
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


@dataclass(frozen=True)
class _SealingKey:
    """The keys one secret gives: the cipher's, and the synthetic nonce's."""

    cipher: AESGCMSIV
    nonce_key: bytes

    @classmethod
    def derive(cls, secret: bytes) -> _SealingKey:
        def hkdf(purpose: str) -> bytes:
            info = f"envserver state token {TOKEN_PREFIX} {purpose}".encode()
            return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(secret)

        return cls(AESGCMSIV(hkdf("cipher")), hkdf("nonce"))


_REFUSED = (
    "state token signature does not match: it was altered, truncated, or issued by a server "
    "with another secret"
)


class StateTokens:
    """Seals and opens state tokens with ``secrets[0]``; ``secrets[1:]`` still open them."""

    def __init__(self, secrets: Sequence[bytes], *, max_state_bytes: int) -> None:
        if not secrets:
            raise ValueError("at least one secret is required")
        self._keys = [_SealingKey.derive(secret) for secret in secrets]
        self._max_state_bytes = max_state_bytes

    def issue(
        self, env_id: str, env_version: str, state: Any, label: dict[str, str] | None = None
    ) -> str:
        """A token for ``state`` of ``env_id@env_version`` (and the service's ``label`` of the
        episode, sealed beside it: ``envserver.stats``); raises ValueError if it is too large."""
        envelope = {"env": env_id, "version": env_version, "state": state}
        if label is not None:
            envelope["label"] = label
        document = json.dumps(
            envelope,
            separators=(",", ":"),
            sort_keys=True,
            ensure_ascii=False,
            allow_nan=False,
        ).encode()
        if len(document) > self._max_state_bytes:
            raise ValueError(f"state of {len(document)} bytes exceeds {self._max_state_bytes}")
        document = document.ljust(padded_size(len(document), self._max_state_bytes))
        key = self._keys[0]
        nonce = hmac.new(key.nonce_key, document, hashlib.sha256).digest()[:_NONCE_SIZE]
        sealed = key.cipher.encrypt(nonce, document, _ASSOCIATED_DATA)
        return f"{TOKEN_PREFIX}.{_b64encode(sealed)}.{_b64encode(nonce)}"

    def open(self, token: str, env_id: str, env_version: str) -> Any:
        """The state inside ``token``; raises ``TokenError`` for anything but a genuine token of
        ``env_id@env_version``."""
        return self.open_labelled(token, env_id, env_version)[0]

    def open_labelled(self, token: str, env_id: str, env_version: str) -> tuple[Any, Any]:
        """The state inside ``token`` and the label sealed with it (None without one), as
        ``open``."""
        parts = token.split(".")
        if parts[0] in RETIRED_PREFIXES:
            raise TokenError(
                ProblemKind.STALE_TOKEN,
                f"state token is in the retired format {parts[0]!r} "
                f"({RETIRED_PREFIXES[parts[0]]}); this server issues sealed {TOKEN_PREFIX!r} "
                "tokens: reset the episode (by its task id to replay it) for a new one",
                forbidden=True,
            )
        if len(parts) != 3 or parts[0] != TOKEN_PREFIX:
            raise TokenError(
                ProblemKind.MALFORMED_TOKEN,
                f"not a state token: expected '{TOKEN_PREFIX}.<sealed state>.<nonce>'",
                forbidden=False,
            )
        try:
            sealed, nonce = _b64decode(parts[1]), _b64decode(parts[2])
        except (ValueError, binascii.Error):
            raise TokenError(
                ProblemKind.MALFORMED_TOKEN, "state token is not valid base64url", forbidden=False
            ) from None
        if len(sealed) - _TAG_SIZE > self._max_state_bytes:
            # Refused before decrypting: no state this server issues is that large.
            raise TokenError(
                ProblemKind.MALFORMED_TOKEN, "state token payload is unreadable", forbidden=False
            )
        document = self._unseal(sealed, nonce)
        if document.get("env") != env_id:
            raise TokenError(
                ProblemKind.FOREIGN_TOKEN,
                f"state token belongs to environment {document.get('env')!r}, not {env_id!r}",
                forbidden=True,
            )
        if document.get("version") != env_version:
            raise TokenError(
                ProblemKind.STALE_TOKEN,
                f"state token was issued by {env_id}@{document.get('version')}; this server runs "
                f"{env_id}@{env_version}",
                forbidden=True,
            )
        return document["state"], document.get("label")

    def _unseal(self, sealed: bytes, nonce: bytes) -> dict[str, Any]:
        plain = None
        if len(nonce) == _NONCE_SIZE and len(sealed) >= _TAG_SIZE:
            # The current secret first: an older one is only tried for tokens issued before a
            # rotation.
            for key in self._keys:
                try:
                    plain = key.cipher.decrypt(nonce, sealed, _ASSOCIATED_DATA)
                    break
                except InvalidTag:
                    continue
        if plain is None:
            raise TokenError(ProblemKind.INVALID_TOKEN_SIGNATURE, _REFUSED, forbidden=True)
        try:
            document = json.loads(plain)
        except ValueError:
            document = None
        if not isinstance(document, dict) or "state" not in document:
            # Authentic but not ours in shape: only someone holding a secret could make one.
            raise TokenError(
                ProblemKind.MALFORMED_TOKEN, "state token payload is unreadable", forbidden=False
            )
        return document
