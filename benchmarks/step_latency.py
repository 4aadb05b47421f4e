"""Latency of ``math`` reset and step over loopback, next to the same calls in-process.

Sequential calls from one httpx client, as a single agent makes them. Side by side in the same
run: the HTTP floor (``GET /healthz`` on the same server and client) and the environment's own
cost (the same ``reset``/``step`` called in this process), so the difference is what the
service adds: HTTP, validation, the worker-pool hop and the state token. Steps are timed with
the expert's answer in a sentence (math-verify extracts and compares it: about 1.4 ms of its own
here) and with a bare wrong ``\boxed{-1}`` (about 0.2 ms), whose cost is the verifier's, not
the service's. Target (issue 2, issue 18): p50 under 2 ms per call for a reset and for a step
whose check is cheap (the wrong answer); the correct answer's row shows the service's share
next to math-verify's.

    .venv/bin/python -m benchmarks.step_latency [--episodes 400]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import httpx

from benchmarks.common import percentile, server
from envserver.registry import discover

ENV = "math"
OPTIONS = {"difficulty": "easy"}


def _ms(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=400)
    args = parser.parse_args()

    env = discover().env(ENV)
    options = env.spec.options_model.model_validate(OPTIONS)
    http: dict[str, list[float]] = {}
    local: dict[str, list[float]] = {}

    def record(table: dict[str, list[float]], name: str, value: float) -> None:
        table.setdefault(name, []).append(value)

    with server(2) as live, httpx.Client(base_url=live.base_url, timeout=30) as client:

        def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
            response = client.post(f"/v1/envs/{ENV}/{path}", json=body)
            response.raise_for_status()
            reply: dict[str, Any] = response.json()
            return reply

        for seed in range(100):  # warm both workers and this process
            state = post("reset", {"seed": seed, "options": OPTIONS})["state"]
            post("step", {"state": state, "action": "\\boxed{0}"})
            env.step(env.reset(seed, options).state, "\\boxed{0}")

        for episode in range(args.episodes):
            seed = 10_000 + episode
            record(http, "GET /healthz (floor)", _ms(lambda: client.get("/healthz"))[0])
            answer = env.expert_action(env.reset(seed, options).state)
            for label, action in (
                ("step, correct answer", answer),
                ("step, wrong answer", "\\boxed{-1}"),
            ):
                reset_body = {"seed": seed, "options": OPTIONS}
                reset_ms, reply = _ms(lambda body=reset_body: post("reset", body))
                step_body = {"state": reply["state"], "action": action}
                step_ms, _ = _ms(lambda body=step_body: post("step", body))
                local_reset, first = _ms(lambda s=seed: env.reset(s, options))
                local_step, _ = _ms(lambda f=first, a=action: env.step(f.state, a))
                for table, (r, s) in (
                    (http, (reset_ms, step_ms)),
                    (local, (local_reset, local_step)),
                ):
                    record(table, "reset", r)
                    record(table, label, s)
                    if label == "step, correct answer":
                        record(table, "reset+step, correct", r + s)

    print(f"{ENV} latency over loopback, {args.episodes} sequential episodes per row (ms)")
    print(f"{'call':<24}{'p50':>7}{'p99':>7}{'in-process p50':>16}{'added p50':>11}")
    for name, values in http.items():
        inside = percentile(local[name], 50) if name in local else 0.0
        p50 = percentile(values, 50)
        p99 = percentile(values, 99)
        print(f"{name:<24}{p50:>7.2f}{p99:>7.2f}{inside:>16.2f}{p50 - inside:>11.2f}")
    worst = max(percentile(http[n], 50) for n in ("reset", "step, wrong answer"))
    verdict = "ok" if worst < 2 else "MISS"
    print(
        f"target p50 < 2 ms per call (reset; step with a cheap check): {verdict} ({worst:.2f} ms)"
    )


if __name__ == "__main__":
    main()
