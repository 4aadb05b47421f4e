"""State tokens: round trip, and refusal of anything altered, truncated, foreign or stale."""

from __future__ import annotations

import base64
import json
import multiprocessing
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envserver.config import Settings
from envserver.keys import KEY_FILE_NAME, load_signing_keys
from envserver.tokens import TOKEN_PREFIX, StateTokens, TokenError

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
    ["", "garbage", "est1..", "est1.!!!.???", "est2.AAAA.BBBB", "est1.AAAA", "est1.é.é", "a.b.c.d"],
)
def test_malformed_tokens_are_bad_requests(token: str) -> None:
    with pytest.raises(TokenError) as caught:
        tokens.open(token, "math", "1")
    assert not caught.value.forbidden or caught.value.kind == "invalid-token-signature"


def _forge(document: bytes, key: bytes = KEY) -> str:
    import hashlib
    import hmac

    body = zlib.compress(document, 9)
    mac = hmac.new(key, TOKEN_PREFIX.encode() + b"." + body, hashlib.sha256).digest()

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    return f"{TOKEN_PREFIX}.{b64(body)}.{b64(mac)}"


def test_a_signed_zip_bomb_is_refused_without_inflating_it() -> None:
    # Even with a leaked key, a token cannot make the server allocate gigabytes.
    small = StateTokens([KEY], max_state_bytes=4096)
    bomb = _forge(b'{"env":"math","version":"1","state":"' + b"a" * 10_000_000 + b'"}')
    assert len(bomb) < 20_000
    with pytest.raises(TokenError, match="unreadable"):
        small.open(bomb, "math", "1")


def test_states_over_the_limit_are_not_issued() -> None:
    small = StateTokens([KEY], max_state_bytes=1024)
    with pytest.raises(ValueError, match="exceeds"):
        small.issue("math", "1", "x" * 2000)


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


def test_token_payload_holds_env_and_version() -> None:
    # The format is documented; this pins it so a change is deliberate.
    token = tokens.issue("math", "1", {"seed": 9})
    body = token.split(".")[1]
    document = json.loads(zlib.decompress(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))))
    assert document == {"env": "math", "version": "1", "state": {"seed": 9}}
