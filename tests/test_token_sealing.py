"""Sealed state tokens reveal nothing: a WebShop token does not give away the goal product, an
ALFWorld token not the world, no family's token any text of its state, under any decoding the
old readable format allowed. Over HTTP: the same, and tokens stay replayable and branchable,
tampering is refused as before, and rotating the secret keeps issued tokens working."""

from __future__ import annotations

import base64
import binascii
import bz2
import contextlib
import hashlib
import hmac
import json
import lzma
import zlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from environments.alfworld.family import AlfWorldEnv, AlfWorldOptions
from environments.webshop.engine import EpisodeState
from environments.webshop.family import WebShopOptions
from envserver.registry import discover
from envserver.tokens import StateTokens
from tests.conftest import make_server
from tests.server import LiveServer
from tests.webshop_support import server_env, small_config, small_env

SECRET = "sealing-test-secret-0123456789"
ROTATED = "sealing-test-rotated-secret-9876"
tokens = StateTokens([SECRET.encode()], max_state_bytes=1 << 22)

REGISTRY = discover()


def _inflations(data: bytes) -> Iterator[bytes]:
    """``data`` itself and whatever zlib, raw deflate, gzip, bz2 or xz make of it, from every
    offset (a header could hide what follows it)."""
    yield data
    for start in range(len(data)):
        for wbits in (15, -15, 31):
            inflater = zlib.decompressobj(wbits)
            try:
                out = inflater.decompress(data[start:], 1 << 22)
            except zlib.error:
                continue
            if out:
                yield out
    for decompress in (bz2.decompress, lzma.decompress):
        with contextlib.suppress(OSError, ValueError, lzma.LZMAError):
            yield decompress(data)


def readings(token: str) -> list[bytes]:
    """Everything a client could read out of ``token``: its text, and each dot-separated part
    base64-decoded (standard or URL alphabet) and inflated every way above."""
    found = [token.encode()]
    for part in token.split("."):
        padded = part + "=" * (-len(part) % 4)
        for decode in (base64.urlsafe_b64decode, base64.b64decode):
            with contextlib.suppress(binascii.Error, ValueError):
                found.extend(_inflations(decode(padded)))
    return [reading.lower() for reading in found]


def leaked(token: str, secrets: list[str]) -> list[str]:
    """The ``secrets`` (case-insensitive) that some reading of ``token`` contains."""
    texts = readings(token)
    return [s for s in secrets if any(s.lower().encode() in text for text in texts)]


def est1(env_id: str, version: str, state: Any) -> str:
    """``state``'s token in the retired readable format, as the old server made it."""
    document = json.dumps(
        {"env": env_id, "version": version, "state": state},
        separators=(",", ":"),
        sort_keys=True,
        ensure_ascii=False,
    ).encode()
    body = zlib.compress(document, 6)
    mac = hmac.new(SECRET.encode(), b"est1." + body, hashlib.sha256).digest()

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    return f"est1.{b64(body)}.{b64(mac)}"


def webshop_goal(seed: int) -> list[str]:
    """What would win WebShop episode ``seed`` if read: the goal's ASIN, name, option values."""
    env = small_env()
    goal = env.shop.goals[env.reset(seed, WebShopOptions()).state["goal_index"]]
    return [goal["asin"], goal["name"], *goal["goal_options"].values()]


def alfworld_world(state: dict[str, Any]) -> list[str]:
    """The world an ALFWorld token would give away: its game, every object and receptacle."""
    world = json.loads(state["world"])
    names = [row[0] for row in world["objects"] + world["receptacles"]]
    return [state["game"].split("/")[0], *names]


def string_leaves(value: Any) -> Iterator[str]:
    """Every string in a JSON value, JSON strings inside strings included."""
    if isinstance(value, str):
        yield value
        if value[:1] in "[{":
            with contextlib.suppress(ValueError):
                yield from string_leaves(json.loads(value))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from string_leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from string_leaves(item)


def test_the_check_finds_the_goal_and_the_world_in_a_readable_token() -> None:
    # The control: the old format leaks what the tests below look for, so they can fail. (A
    # WebShop state carried its goal until version 2, which carries the goal's index: the goal
    # is put back here.)
    env = small_env()
    shop = env.reset(3, WebShopOptions()).state
    with_goal = {**shop, "goal": env.shop.goals[shop["goal_index"]]}
    assert leaked(est1("webshop", "1", with_goal), webshop_goal(3)) == webshop_goal(3)
    world = AlfWorldEnv().reset(3, AlfWorldOptions()).state
    assert leaked(est1("alfworld", "1", world), alfworld_world(world)) == alfworld_world(world)


@pytest.mark.parametrize("seed", range(5))
def test_a_webshop_token_does_not_reveal_the_goal(seed: int) -> None:
    env = small_env()
    state = env.reset(seed, WebShopOptions()).state
    goal = webshop_goal(seed)
    assert leaked(tokens.issue("webshop", "1", state), goal) == []
    # Nor once it carries the policy's own words next to the goal (the search keywords).
    searched = env.step(state, f"search[{goal[1]}]").state
    assert leaked(tokens.issue("webshop", "1", searched), goal) == []


@pytest.mark.parametrize("seed", range(5))
def test_an_alfworld_token_does_not_reveal_the_world(seed: int) -> None:
    state = AlfWorldEnv().reset(seed, AlfWorldOptions()).state
    assert leaked(tokens.issue("alfworld", "1", state), alfworld_world(state)) == []


def _sealed_length(state: Any) -> int:
    return len(tokens.issue("webshop", small_env().spec.version, state))


def test_a_webshop_reset_tokens_length_tells_nothing_of_the_goal() -> None:
    env = small_env()
    resets = [env.reset(seed, WebShopOptions()) for seed in range(120)]
    by_instruction: dict[int, list[Any]] = {}
    for reset in resets:
        by_instruction.setdefault(len(reset.info["instruction"]), []).append(reset.state)
    groups = [states for states in by_instruction.values() if len(states) > 1]
    assert len(groups) >= 10, "enough resets share an instruction length to compare"
    # The control: a state that carried the goal (version 1) grew with its hidden fields, so
    # equal instructions gave JSON of several lengths (the audit saw tokens of 1,077 to 1,157).
    carried = [
        {len(json.dumps({**s, "goal": env.shop.goals[s["goal_index"]]})) for s in states}
        for states in groups
    ]
    assert any(len(lengths) > 1 for lengths in carried)
    for states in groups:
        assert len({_sealed_length(state) for state in states}) == 1
    # The goal is not in the state at all, so every reset of these options seals to one length.
    assert len({_sealed_length(reset.state) for reset in resets}) == 1


def test_a_webshop_step_tokens_length_follows_the_clients_own_actions() -> None:
    # What a step token's length can show is what the client did and saw (its keywords, the
    # product it opened, the options it clicked, the page), not the goal: the same actions in
    # episodes with different goals seal to one length. A longer query may make a longer token;
    # the client wrote the query.
    env = small_env()
    lengths: dict[int, set[int]] = {}
    for seed in range(30):
        state = env.reset(seed, WebShopOptions()).state
        for step, action in enumerate(["search[desk with drawers]", "click[next >]"]):
            state = env.step(state, action).state
            lengths.setdefault(step, set()).add(_sealed_length(state))
        first = env.engine.results(EpisodeState.from_json(state, env.shop))[10]
        state = env.step(state, f"click[{first.lower()}]").state
        lengths.setdefault(2, set()).add(_sealed_length(state))
    assert all(len(found) == 1 for found in lengths.values()), lengths


@pytest.mark.parametrize("env_id", sorted(REGISTRY.envs))
def test_no_family_token_reveals_any_text_of_its_state(env_id: str) -> None:
    env = REGISTRY.envs[env_id]
    state = env.reset(7, env.spec.options_model()).state
    texts = sorted({s for s in string_leaves(state) if len(s) >= 6})
    token = tokens.issue(env.spec.id, env.spec.version, state)
    assert leaked(token, texts) == []
    assert tokens.open(token, env.spec.id, env.spec.version) == state


# --- over HTTP --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Two servers of the small test shop: one with the old secret, one rotated to a new secret
    that still accepts the old one."""
    small_env().shop.index  # noqa: B018 - build the index once, here, for both servers
    shop = {**server_env(small_config()), "ENVSERVER_POOL_WORKERS": "1"}
    with (
        make_server(tmp_path_factory.mktemp("old"), ENVSERVER_SECRET=SECRET, **shop) as old,
        make_server(
            tmp_path_factory.mktemp("rotated"),
            ENVSERVER_SECRET=ROTATED,
            ENVSERVER_PREVIOUS_SECRETS=SECRET,
            **shop,
        ) as rotated,
    ):
        yield old, rotated


def _post(server: LiveServer, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{server.base_url}/v1/envs/{path}", json=body, timeout=60)


def _ok(reply: httpx.Response) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def _problem(reply: httpx.Response, status: int, kind: str) -> str:
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"].startswith("application/problem+json")
    problem = reply.json()
    assert problem["type"].endswith("/" + kind), problem
    detail: str = problem["detail"]
    return detail


def test_served_tokens_reveal_nothing_and_replay_and_branch(
    servers: tuple[LiveServer, LiveServer],
) -> None:
    old, _ = servers
    goal = webshop_goal(0)
    first = _ok(_post(old, "webshop/reset", {"seed": 0}))
    assert leaked(first["state"], goal) == []
    # Same seed, same token: regenerating an episode is byte-identical.
    assert _ok(_post(old, "webshop/reset", {"seed": 0}))["state"] == first["state"]
    searched = _ok(_post(old, "webshop/step", {"state": first["state"], "action": "search[x]"}))
    assert leaked(searched["state"], goal) == []
    # The same token stepped again gives the same reply; another action branches from it.
    again = _ok(_post(old, "webshop/step", {"state": first["state"], "action": "search[x]"}))
    assert again == searched
    other = _ok(_post(old, "webshop/step", {"state": first["state"], "action": "search[desk]"}))
    assert other["state"] != searched["state"]
    assert other["observation"] != searched["observation"]


def test_served_tokens_refuse_tampering_as_before(servers: tuple[LiveServer, LiveServer]) -> None:
    old, _ = servers
    token = _ok(_post(old, "webshop/reset", {"seed": 1}))["state"]
    head, sealed, nonce = token.split(".")
    for index in (0, len(sealed) // 2, len(sealed) - 2):
        flipped = sealed[:index] + ("A" if sealed[index] != "A" else "B") + sealed[index + 1 :]
        reply = _post(old, "webshop/step", {"state": f"{head}.{flipped}.{nonce}", "action": "x"})
        assert "signature does not match" in _problem(reply, 403, "invalid-token-signature")
    for cut in (1, 3, 30):
        reply = _post(old, "webshop/step", {"state": token[:-cut], "action": "x"})
        assert reply.status_code in (400, 403), reply.text
    alfworld = _ok(_post(old, "alfworld/reset", {"seed": 1}))["state"]
    reply = _post(old, "webshop/step", {"state": alfworld, "action": "x"})
    assert "belongs to environment 'alfworld'" in _problem(reply, 403, "foreign-token")
    readable = est1("webshop", "1", small_env().reset(1, WebShopOptions()).state)
    reply = _post(old, "webshop/step", {"state": readable, "action": "x"})
    assert "retired format 'est1'" in _problem(reply, 403, "stale-token")
    assert _problem(
        _post(old, "webshop/step", {"state": "x", "action": "x"}), 400, "malformed-token"
    )


def test_rotating_the_secret_keeps_issued_tokens(servers: tuple[LiveServer, LiveServer]) -> None:
    old, rotated = servers
    issued = _ok(_post(old, "webshop/reset", {"seed": 2}))["state"]
    # The rotated server opens the old secret's token and answers with one of its new secret...
    stepped = _ok(_post(rotated, "webshop/step", {"state": issued, "action": "search[x]"}))
    same = _ok(_post(old, "webshop/step", {"state": issued, "action": "search[x]"}))
    assert {**stepped, "state": None} == {**same, "state": None}
    assert stepped["state"] != same["state"]
    # ...which a server without that secret refuses: a token of another secret is a 403.
    reply = _post(old, "webshop/step", {"state": stepped["state"], "action": "search[y]"})
    _problem(reply, 403, "invalid-token-signature")
