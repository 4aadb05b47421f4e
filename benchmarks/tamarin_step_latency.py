"""Per-step latency of ``tamarin/proof`` over HTTP, next to the same steps called directly.

Side by side in one run, on the replay backend (recorded real Tamarin 1.8.0 states): greedy
proofs of every recorded lemma, each step (a) through the backend alone (observe the goal, apply
method 1, observe the next goal), (b) through the environment in this process (plus the proof
tree, the rendering and the state), and (c) over HTTP from one client (plus validation, the
worker-pool hop and the signed state token). The replay backend answers in microseconds, so the
HTTP overhead is also put against what a real prover spends per step, measured from the
recorded transcripts' own request times. Target (issue 6): overhead under 20%.

    .venv/bin/python -m benchmarks.tamarin_step_latency [--recordings MORE_RECORDINGS]

The packaged recordings are always served; ``--recordings`` adds more (as
ENVSERVER_TAMARIN_RECORDINGS does).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from importlib.resources.abc import Traversable
from pathlib import Path

from benchmarks.common import median, percentile, server
from clients.http import EnvServerClient
from environments.datafiles import open_text
from environments.tamarin.provers import RECORDINGS, RECORDINGS_ENV

ENV = "tamarin/proof"


def _recorded_step_seconds(recordings: list[Traversable]) -> dict[str, float]:
    """Seconds a real Tamarin server spent per method application in each greedy transcript:
    all its requests' time over the number of applications."""
    costs: dict[str, float] = {}
    transcripts = [
        path
        for folder in recordings
        for path in sorted(folder.iterdir(), key=lambda p: p.name)
        if "_interactive_greedy.jsonl" in path.name
    ]
    for path in transcripts:
        with open_text(path) as lines:
            records = [json.loads(line) for line in lines]
        applications = sum("/main/method/" in r["path"] for r in records)
        costs[path.name.split("_interactive")[0]] = (
            sum(r["seconds"] for r in records) / applications
        )
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recordings", type=Path, help="a folder of more recordings")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    recordings: list[Traversable] = [RECORDINGS]
    if args.recordings is not None:
        os.environ[RECORDINGS_ENV] = str(args.recordings.resolve())
        recordings.append(args.recordings)

    from environments.tamarin.episode import path_to
    from environments.tamarin.family import ProofOptions, TamarinProofEnv
    from environments.tamarin.provers import provers

    env = TamarinProofEnv()
    pairs = provers().servable()
    backend_ms: list[float] = []
    direct_ms: list[float] = []
    http_ms: list[float] = []
    with server(1) as live, EnvServerClient(live.base_url) as client:
        for _ in range(args.rounds):
            for theory, lemma in pairs:
                state = env.reset(0, ProofOptions(theory=theory, lemma=lemma)).state
                token = client.reset(ENV, options={"theory": theory, "lemma": lemma}).state
                assert token is not None
                thy = provers().theories[theory]
                backend = provers().backend(thy)
                finished = False
                while not finished:
                    path = path_to(state["proof"], state["focus"])
                    started = time.perf_counter()
                    method = backend.observe(thy, lemma, path).methods[0].text
                    cases = backend.apply(thy, lemma, path, 1)
                    if cases:
                        backend.observe(thy, lemma, (*path, (method, cases[0])))
                    backend_ms.append((time.perf_counter() - started) * 1000)

                    started = time.perf_counter()
                    result = env.step(state, "1")
                    direct_ms.append((time.perf_counter() - started) * 1000)

                    started = time.perf_counter()
                    reply = client.step(ENV, token, "1")
                    http_ms.append((time.perf_counter() - started) * 1000)

                    assert reply.reward == result.score.reward, (reply, result.score)
                    finished = result.terminated or result.truncated
                    state, token = result.state, reply.state
    steps = len(direct_ms) // args.rounds
    print(f"{len(pairs)} recorded lemmas, {steps} greedy steps, {args.rounds} rounds")
    print(f"{'per step':<28} {'p50 ms':>9} {'p99 ms':>9}")
    for name, values in (
        ("replay backend alone", backend_ms),
        ("environment, in process", direct_ms),
        ("HTTP step (1 client)", http_ms),
    ):
        print(f"{name:<28} {median(values):>9.3f} {percentile(values, 99):>9.3f}")
    overhead = median(http_ms) - median(direct_ms)
    print(
        f"HTTP overhead per step: {overhead:.2f} ms (p50), "
        f"{median(http_ms) / median(direct_ms):.1f}x the replayed step"
    )
    print("against a real prover's step (recorded Tamarin 1.8.0 request time per application):")
    for theory, seconds in _recorded_step_seconds(recordings).items():
        print(
            f"  {theory:<16} {seconds * 1000:>8.1f} ms per step -> overhead "
            f"{100 * overhead / (seconds * 1000):5.1f}%"
        )


if __name__ == "__main__":
    main()
