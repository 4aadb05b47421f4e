"""Secrets: the state-token secret and the API keys."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from envserver.config import ConfigError, Settings

KEY_FILE_NAME = "state-token.key"


def load_signing_keys(settings: Settings) -> list[bytes]:
    """The current state-token secret first (it seals new tokens), then older ones still accepted
    for opening tokens (``envserver.tokens`` derives the sealing keys from each).

    The key is ``ENVSERVER_SECRET`` when set, else the key file in the data directory, created
    once with 32 random bytes (mode 0600) so restarts keep issued tokens valid. Creation is
    atomic: concurrent first starts agree on one key. Raises ConfigError for a secret too short
    or a key file that cannot be made or read.
    """
    previous = [s.get_secret_value().encode() for s in settings.previous_secrets]
    if settings.secret is not None:
        current = settings.secret.get_secret_value().encode()
        if len(current) < 16:
            raise ConfigError(
                "ENVSERVER_SECRET must be at least 16 characters; use e.g. `openssl rand -hex "
                "32`, or unset it to use a generated key file"
            )
        return [current, *previous]
    path = settings.data_dir / KEY_FILE_NAME
    try:
        return [_key_file(path), *previous]
    except OSError as exc:
        raise ConfigError(
            f"cannot create or read the key file {path.resolve()}: {exc.strerror or exc}; set "
            "ENVSERVER_DATA_DIR to a writable folder, or ENVSERVER_SECRET"
        ) from None


def _key_file(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    candidate = secrets.token_hex(32).encode()
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(candidate)
    try:
        os.link(temporary, path)  # fails if another process created the key first
    except FileExistsError:
        pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
    key = path.read_bytes().strip()
    if len(key) < 32:
        raise ConfigError(f"the key file {path} is too short; delete it to generate a new one")
    return key


@dataclass(frozen=True)
class ApiKey:
    """A bearer key and the name its requests are counted under in metrics."""

    name: str
    secret: bytes


def load_api_keys(settings: Settings) -> list[ApiKey]:
    """Keys from ``ENVSERVER_API_KEYS`` and ``ENVSERVER_API_KEYS_FILE``; empty means open."""
    entries = [s.get_secret_value() for s in settings.api_keys]
    if settings.api_keys_file is not None:
        try:
            lines = settings.api_keys_file.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"ENVSERVER_API_KEYS_FILE: cannot read it: {exc}") from None
        entries += [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    keys = []
    for entry in entries:
        name, sep, secret = entry.partition(":")
        if not sep:
            name, secret = f"key-{hashlib.sha256(entry.encode()).hexdigest()[:8]}", entry
        if len(secret) < 8:
            raise ConfigError(f"API key {name!r} is shorter than 8 characters")
        keys.append(ApiKey(name.strip(), secret.strip().encode()))
    return keys


def match_api_key(keys: list[ApiKey], presented: str) -> ApiKey | None:
    """The key equal to ``presented``; compares against every key in constant time each."""
    candidate = presented.encode()
    found = None
    for key in keys:
        if hmac.compare_digest(key.secret, candidate):
            found = key
    return found
