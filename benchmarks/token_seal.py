"""What sealing a state token costs: issuing and opening ``est2`` tokens (AES-256-GCM-SIV) padded
to size buckets, as the server seals them, next to the same tokens unpadded and the ``est1``
path sealing replaced (zlib + HMAC-SHA256), both kept here as baselines, in the same run, for
small states (math) and large ones (ALFWorld, WebShop, Tamarin), and that cost's share of a
step; with the bytes each token takes.

Each state is taken after a reset and a few expert steps (an episode under way). A step issues
one token and opens one, so the figure compared is issue + open. Its share of a step is taken
against the same step over HTTP on a live server (p50, sequential calls from one client: what
a single agent waits for), and against the environment's own ``step`` called in this process.
Target (issue 25): sealing stays a small fraction of a step.

    .venv/bin/python -m benchmarks.token_seal [--repeat 2000] [--http-steps 200]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from benchmarks.common import median, percentile, server
from environments.base import Environment
from envserver.registry import discover
from envserver.tokens import TOKEN_PREFIX, StateTokens, _SealingKey

SECRET = b"benchmark-secret-0123456789abcdef"
REGISTRY = discover()
# (env id, options, expert steps taken before the state is measured)
CASES: list[tuple[str, dict[str, Any], int]] = [
    ("math", {}, 0),
    ("alfworld", {}, 4),
    ("webshop", {}, 2),
    ("tamarin/proof", {}, 2),
]


class SignedTokens:
    """The ``est1`` tokens sealing replaced: zlib-compressed JSON and its HMAC, readable by
    anyone (the baseline, as ``envserver/tokens.py`` had it)."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def issue(self, env_id: str, env_version: str, state: Any) -> tuple[bytes, bytes]:
        document = json.dumps(
            {"env": env_id, "version": env_version, "state": state},
            separators=(",", ":"),
            sort_keys=True,
            ensure_ascii=False,
            allow_nan=False,
        ).encode()
        body = zlib.compress(document, 6)
        return body, hmac.new(self._key, b"est1." + body, hashlib.sha256).digest()

    def open(self, token: tuple[bytes, bytes]) -> Any:
        body, mac = token
        if not hmac.compare_digest(
            mac, hmac.new(self._key, b"est1." + body, hashlib.sha256).digest()
        ):
            raise ValueError("signature")
        return json.loads(zlib.decompress(body))["state"]


class UnpaddedTokens:
    """``est2`` tokens as they were before padding: the JSON alone, sealed (the baseline of the
    padding's cost)."""

    def __init__(self, key: bytes) -> None:
        self._key = _SealingKey.derive(key)

    def issue(self, env_id: str, env_version: str, state: Any) -> str:
        document = json.dumps(
            {"env": env_id, "version": env_version, "state": state},
            separators=(",", ":"),
            sort_keys=True,
            ensure_ascii=False,
            allow_nan=False,
        ).encode()
        nonce = hmac.new(self._key.nonce_key, document, hashlib.sha256).digest()[:12]
        sealed = self._key.cipher.encrypt(nonce, document, TOKEN_PREFIX.encode())
        return f"{TOKEN_PREFIX}.{_b64(sealed)}.{_b64(nonce)}"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _us_per_call(calls: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Each call's µs: the median over seven rounds of the mean over ``repeat`` calls. Rounds
    take the calls in turn, so a burst of load on the machine hits old and new alike."""
    rounds: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(7):
        for name, call in calls.items():
            started = time.perf_counter()
            for _ in range(repeat):
                call()
            rounds[name].append((time.perf_counter() - started) / repeat * 1e6)
    return {name: median(times) for name, times in rounds.items()}


def _under_way(env: Environment, options: dict[str, Any], steps: int) -> tuple[list[str], Any, str]:
    """The expert's first ``steps`` actions in episode 3, the state they reach, and the
    expert's next action from there."""
    state = env.reset(3, env.spec.options_model.model_validate(options)).state
    taken = []
    for _ in range(steps):
        taken.append(env.expert_action(state))
        state = env.step(state, taken[-1]).state
    return taken, state, env.expert_action(state)


def _http_step_ms(
    base_url: str, env_id: str, options: dict[str, Any], steps: int, count: int
) -> float:
    """p50 of the same step, from the same point of the same episode, over HTTP."""
    taken, _, action = _under_way(REGISTRY.env(env_id), options, steps)
    with httpx.Client(base_url=base_url, timeout=60) as client:

        def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
            reply = client.post(f"/v1/envs/{env_id}/{path}", json=body)
            reply.raise_for_status()
            result: dict[str, Any] = reply.json()
            return result

        token = post("reset", {"seed": 3, "options": options})["state"]
        for previous in taken:
            token = post("step", {"state": token, "action": previous})["state"]
        times = []
        for _ in range(count + 20):  # the first 20 warm up
            started = time.perf_counter()
            post("step", {"state": token, "action": action})  # the same token: a replay
            times.append((time.perf_counter() - started) * 1000)
        return percentile(times[20:], 50)


@dataclass(frozen=True)
class Row:
    """One state's figures: its JSON size, each token's length, the µs of each operation."""

    name: str
    size: int
    est1_chars: int
    unpadded_chars: int
    padded_chars: int
    us: dict[str, float]


def _measure(env_id: str, options: dict[str, Any], steps: int, repeat: int) -> Row:
    sealed = StateTokens([SECRET], max_state_bytes=4 << 20)
    unpadded = UnpaddedTokens(SECRET)
    signed = SignedTokens(SECRET)
    env = REGISTRY.env(env_id)
    name, version = env.spec.id, env.spec.version
    _, state, action = _under_way(env, options, steps)
    token = sealed.issue(name, version, state)
    assert sealed.open(token, name, version) == state
    bare = unpadded.issue(name, version, state)
    assert sealed.open(bare, name, version) == state  # an unpadded token opens the same way
    old_token = signed.issue(name, version, state)
    assert signed.open(old_token) == state
    timings = _us_per_call(
        {
            "est1 issue": lambda: signed.issue(name, version, state),
            "est1 open": lambda: signed.open(old_token),
            "unpadded issue": lambda: unpadded.issue(name, version, state),
            "unpadded open": lambda: sealed.open(bare, name, version),
            "padded issue": lambda: sealed.issue(name, version, state),
            "padded open": lambda: sealed.open(token, name, version),
        },
        repeat,
    )
    timings |= _us_per_call({"env step": lambda: env.step(state, action)}, max(1, repeat // 20))
    size = len(json.dumps(state, separators=(",", ":")).encode())
    old_chars = len("est1..") + sum((4 * len(part) + 2) // 3 for part in old_token)
    return Row(f"{env_id} +{steps}", size, old_chars, len(bare), len(token), timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000, help="calls per timing round")
    parser.add_argument("--http-steps", type=int, default=200, help="0: no server")
    args = parser.parse_args()

    rows = [_measure(env_id, options, steps, args.repeat) for env_id, options, steps in CASES]

    http_ms: dict[str, float] = {}
    if args.http_steps:
        with server(2) as live:
            for env_id, options, steps in CASES:
                http_ms[env_id] = _http_step_ms(
                    live.base_url, env_id, options, steps, args.http_steps
                )

    print(f"{'state':<19}{'JSON B':>7}{'est1 ch':>8}{'est2 ch':>8}{'padded':>8}"
          f"{'est1 µs':>9}{'est2 µs':>9}{'padded':>9}{'pad/est2':>9}"
          f"{'env step':>10}{'HTTP p50':>10}{'share':>7}")  # fmt: skip
    for row in rows:
        t = row.us
        est1 = t["est1 issue"] + t["est1 open"]
        bare = t["unpadded issue"] + t["unpadded open"]
        padded = t["padded issue"] + t["padded open"]
        step_us = http_ms.get(row.name.split(" ")[0], 0.0) * 1000
        share = f"{padded / step_us:.1%}" if step_us else "-"
        print(
            f"{row.name:<19}{row.size:>7}{row.est1_chars:>8}{row.unpadded_chars:>8}"
            f"{row.padded_chars:>8}{est1:>9.1f}{bare:>9.1f}{padded:>9.1f}{padded / bare:>9.2f}"
            f"{t['env step']:>10.1f}{step_us:>10.0f}{share:>7}"
        )
    print(
        "ch: token characters (est1 zlib + HMAC, est2 sealed unpadded, est2 padded as served); "
        "µs: issue + open; pad/est2: padded / unpadded time; env step: the environment's step "
        "in-process, µs; HTTP p50: the same step over loopback, µs; share: padded issue + open / "
        "HTTP step"
    )


if __name__ == "__main__":
    main()
