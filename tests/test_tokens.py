"""State tokens: round trip, and refusal of anything altered, truncated, foreign or stale."""

from __future__ import annotations

import base64
import hashlib
import hmac
import multiprocessing
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envserver.config import Settings
from envserver.keys import KEY_FILE_NAME, load_signing_keys
from envserver.tokens import (
    MIN_BUCKET,
    TOKEN_PREFIX,
    StateTokens,
    TokenError,
    _SealingKey,
    padded_size,
)

KEY = b"k" * 32
tokens = StateTokens([KEY], max_state_bytes=1 << 20)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=50),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=30,
)


@given(state=json_values)
def test_round_trip(state: object) -> None:
    token = tokens.issue("math", "1", state)
    assert token.startswith(TOKEN_PREFIX + ".")
    assert tokens.open(token, "math", "1") == state


@given(state=json_values)
def test_issuing_is_deterministic(state: object) -> None:
    # Same state, same token: a search can deduplicate nodes by token.
    assert tokens.issue("math", "1", state) == tokens.issue("math", "1", state)


@settings(max_examples=300)
@given(data=st.data())
def test_any_altered_character_is_refused(data: st.DataObject) -> None:
    token = tokens.issue("math", "1", {"seed": 7, "attempt": 1, "options": {"d": "hard"}})
    index = data.draw(st.integers(min_value=0, max_value=len(token) - 1))
    replacement = data.draw(st.sampled_from("ABCxyz019-_.="))
    altered = token[:index] + replacement + token[index + 1 :]
    if altered == token:
        return
    with pytest.raises(TokenError):
        tokens.open(altered, "math", "1")


@given(cut=st.integers(min_value=1, max_value=200))
def test_truncated_tokens_are_refused(cut: int) -> None:
    token = tokens.issue("math", "1", {"history": list(range(30))})
    with pytest.raises(TokenError):
        tokens.open(token[: max(0, len(token) - cut)], "math", "1")


def test_foreign_environment_is_refused_by_name() -> None:
    token = tokens.issue("math", "1", {"seed": 1})
    with pytest.raises(TokenError, match="belongs to environment 'math'") as caught:
        tokens.open(token, "opt/knapsack", "1")
    assert caught.value.forbidden
    assert caught.value.kind == "foreign-token"


def test_other_version_is_refused_by_name() -> None:
    token = tokens.issue("math", "1", {"seed": 1})
    with pytest.raises(TokenError, match=r"issued by math@1; this server runs math@2") as caught:
        tokens.open(token, "math", "2")
    assert caught.value.kind == "stale-token"


def test_another_secret_is_refused_and_rotation_accepts_the_old_one() -> None:
    old = StateTokens([b"o" * 32], max_state_bytes=1 << 20)
    token = old.issue("math", "1", {"seed": 3})
    with pytest.raises(TokenError, match="signature does not match") as caught:
        tokens.open(token, "math", "1")
    assert caught.value.forbidden
    rotated = StateTokens([KEY, b"o" * 32], max_state_bytes=1 << 20)
    assert rotated.open(token, "math", "1") == {"seed": 3}
    # New tokens are signed with the new key only.
    assert tokens.open(rotated.issue("math", "1", {"seed": 4}), "math", "1") == {"seed": 4}


@pytest.mark.parametrize(
    "token",
    ["", "garbage", "est2..", "est2.!!!.???", "est3.AAAA.BBBB", "est2.AAAA", "est2.é.é", "a.b.c.d"],
)
def test_malformed_tokens_are_bad_requests(token: str) -> None:
    with pytest.raises(TokenError) as caught:
        tokens.open(token, "math", "1")
    assert not caught.value.forbidden or caught.value.kind == "invalid-token-signature"


def _est1(document: bytes, key: bytes = KEY) -> str:
    """A token in the retired format: zlib JSON and its HMAC, readable by anyone."""
    body = zlib.compress(document, 6)
    mac = hmac.new(key, b"est1." + body, hashlib.sha256).digest()
    return f"est1.{_b64(body)}.{_b64(mac)}"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_retired_readable_tokens_are_refused_by_name() -> None:
    # Genuine under the old format and the same secret, and still refused: it can be read.
    old = _est1(b'{"env":"math","state":{"seed":1},"version":"1"}')
    with pytest.raises(TokenError, match=r"retired format 'est1'.*reset the episode") as caught:
        tokens.open(old, "math", "1")
    assert (caught.value.kind, caught.value.forbidden) == ("stale-token", True)


def _seal(document: bytes, key: bytes = KEY) -> str:
    """A genuine token around any bytes, made with the key as the server makes its own."""
    sealing = _SealingKey.derive(key)
    nonce = b"n" * 12
    return f"est2.{_b64(sealing.cipher.encrypt(nonce, document, b'est2'))}.{_b64(nonce)}"


@pytest.mark.parametrize("document", [b"not json", b"[1, 2]", b'{"env": "math"}', b"\xff"])
def test_an_authentic_payload_that_is_not_a_state_is_unreadable(document: bytes) -> None:
    # Only a holder of the secret could make one; it is still a clear 400, not a 500.
    with pytest.raises(TokenError, match="unreadable") as caught:
        tokens.open(_seal(document), "math", "1")
    assert not caught.value.forbidden


def test_a_token_larger_than_any_state_is_refused_before_decrypting() -> None:
    small = StateTokens([KEY], max_state_bytes=4096)
    big = _seal(b'{"env":"math","version":"1","state":"' + b"a" * 5000 + b'"}')
    with pytest.raises(TokenError, match="unreadable"):
        small.open(big, "math", "1")
    assert tokens.open(big, "math", "1") == "a" * 5000


def test_states_over_the_limit_are_not_issued() -> None:
    small = StateTokens([KEY], max_state_bytes=1024)
    with pytest.raises(ValueError, match="exceeds"):
        small.issue("math", "1", "x" * 2000)


def _sealed_bytes(token: str) -> int:
    """The plaintext's length inside ``token`` (what a client can measure)."""
    sealed = token.split(".")[1]
    return len(base64.urlsafe_b64decode(sealed + "=" * (-len(sealed) % 4))) - 16


def test_a_tokens_length_tells_only_its_states_bucket() -> None:
    # Documents of 40 to 511 bytes fill the smallest bucket; one byte past a power of two starts
    # the next. The state's length within a bucket does not show.
    small = {_sealed_bytes(tokens.issue("math", "1", "x" * n)) for n in range(470)}
    assert small == {MIN_BUCKET}
    assert _sealed_bytes(tokens.issue("math", "1", "x" * 500)) == 1024
    assert {_sealed_bytes(tokens.issue("math", "1", "é" * n)) for n in (300, 490)} == {1024}
    assert [padded_size(n, 1 << 20) for n in (0, 512, 513, 1025, 70_000)] == [
        512, 512, 1024, 2048, 131_072]  # fmt: skip


def test_padding_stops_at_the_size_limit_and_unpadded_tokens_still_open() -> None:
    capped = StateTokens([KEY], max_state_bytes=1500)
    token = capped.issue("math", "1", "x" * 1200)
    assert _sealed_bytes(token) == 1500 and capped.open(token, "math", "1") == "x" * 1200
    # A token issued before padding (the JSON alone) opens as before.
    assert tokens.open(_seal(b'{"env":"math","state":7,"version":"1"}'), "math", "1") == 7


def test_non_json_states_are_not_issued() -> None:
    with pytest.raises(ValueError):
        tokens.issue("math", "1", {"x": float("nan")})


def test_key_file_is_created_once_and_survives_restarts(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    first = load_signing_keys(settings)
    second = load_signing_keys(settings)
    assert first == second
    key_file = tmp_path / "data" / KEY_FILE_NAME
    assert key_file.stat().st_mode & 0o777 == 0o600
    # A token issued before a "restart" opens after it.
    token = StateTokens(first, max_state_bytes=1 << 20).issue("math", "1", [1, 2])
    assert StateTokens(second, max_state_bytes=1 << 20).open(token, "math", "1") == [1, 2]


def _load_key(data_dir: str) -> bytes:
    return load_signing_keys(Settings(data_dir=Path(data_dir)))[0]


def test_concurrent_first_starts_agree_on_one_key(tmp_path: Path) -> None:
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        keys = pool.map(_load_key, [str(tmp_path / "shared")] * 8)
    assert len(set(keys)) == 1
    assert list((tmp_path / "shared").iterdir()) == [tmp_path / "shared" / KEY_FILE_NAME]


def test_secret_from_environment_wins_and_is_shared_by_replicas(tmp_path: Path) -> None:
    one = Settings(data_dir=tmp_path / "a", secret="replica-shared-secret-0123")
    two = Settings(data_dir=tmp_path / "b", secret="replica-shared-secret-0123")
    token = StateTokens(load_signing_keys(one), max_state_bytes=1 << 20).issue("math", "1", 5)
    assert (
        StateTokens(load_signing_keys(two), max_state_bytes=1 << 20).open(token, "math", "1") == 5
    )
    assert not (tmp_path / "a").exists()


def test_short_secrets_are_rejected() -> None:
    with pytest.raises(ValueError, match="at least 16"):
        load_signing_keys(Settings(secret="short"))


def test_rotation_through_settings_accepts_old_tokens_until_the_old_secret_is_dropped() -> None:
    old_secret, new_secret = "the-old-secret-0123456789", "the-new-secret-9876543210"
    before = StateTokens(load_signing_keys(Settings(secret=old_secret)), max_state_bytes=1 << 20)
    issued_before = before.issue("math", "1", {"seed": 5, "attempt": 0})
    rotating = StateTokens(
        load_signing_keys(Settings(secret=new_secret, previous_secrets=[old_secret])),
        max_state_bytes=1 << 20,
    )
    assert rotating.open(issued_before, "math", "1") == {"seed": 5, "attempt": 0}
    # The next token of the same state is sealed with the new secret: the old server refuses it,
    # and it differs from the old one (a token names its secret by what opens it, nothing else).
    reissued = rotating.issue("math", "1", {"seed": 5, "attempt": 0})
    assert reissued != issued_before
    with pytest.raises(TokenError, match="signature does not match"):
        before.open(reissued, "math", "1")
    after = StateTokens(load_signing_keys(Settings(secret=new_secret)), max_state_bytes=1 << 20)
    assert after.open(reissued, "math", "1") == {"seed": 5, "attempt": 0}
    with pytest.raises(TokenError, match="signature does not match") as caught:
        after.open(issued_before, "math", "1")
    assert caught.value.forbidden
