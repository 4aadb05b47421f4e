"""Latency of reset and step for ``math`` over loopback, next to the HTTP floor.

Sequential calls from one httpx client (as a single agent would make them). The floor is a
``GET /healthz`` round trip on the same server and client, measured in the same run, so the
difference is what reset/step themselves cost. Target (issue 2): p50 under 2 ms.

    .venv/bin/python benchmarks/step_latency.py [--calls 500]
"""

from __future__ import annotations

import argparse
import time

import httpx

from benchmarks.common import percentile, server


def _timed(
    client: httpx.Client, method: str, path: str, body: object = None
) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    response = client.request(method, path, json=body)
    elapsed = (time.perf_counter() - started) * 1000
    response.raise_for_status()
    return elapsed, response.json()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()

    samples: dict[str, list[float]] = {
        "GET /healthz (floor)": [],
        "reset": [],
        "step": [],
        "reset+step": [],
    }
    with server(2) as live, httpx.Client(base_url=live.base_url, timeout=30) as client:
        for seed in range(50):  # warm both workers' code paths
            _, reset = _timed(client, "POST", "/v1/envs/math/reset", {"seed": seed})
            _timed(
                client,
                "POST",
                "/v1/envs/math/step",
                {"state": reset["state"], "action": "\\boxed{1}"},
            )
        for seed in range(args.calls):
            floor, _ = _timed(client, "GET", "/healthz")
            reset_ms, reset = _timed(
                client,
                "POST",
                "/v1/envs/math/reset",
                {"seed": 10_000 + seed, "options": {"difficulty": "easy"}},
            )
            step_ms, _ = _timed(
                client,
                "POST",
                "/v1/envs/math/step",
                {"state": reset["state"], "action": f"\\boxed{{{seed}}}"},
            )
            samples["GET /healthz (floor)"].append(floor)
            samples["reset"].append(reset_ms)
            samples["step"].append(step_ms)
            samples["reset+step"].append(reset_ms + step_ms)

    floor_p50 = percentile(samples["GET /healthz (floor)"], 50)
    print(f"math reset/step latency over loopback, {args.calls} sequential episodes")
    print(f"{'call':<22}{'p50 ms':>8}{'p99 ms':>8}{'p50/floor':>11}")
    for name, values in samples.items():
        p50 = percentile(values, 50)
        print(f"{name:<22}{p50:>8.2f}{percentile(values, 99):>8.2f}{p50 / floor_p50:>11.2f}")
    worst = max(percentile(samples["reset"], 50), percentile(samples["step"], 50))
    print(
        f"target: p50 of each call under 2 ms -> {'ok' if worst < 2 else 'MISS'} ({worst:.2f} ms)"
    )


if __name__ == "__main__":
    main()
