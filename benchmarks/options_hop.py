"""What a reset's options cost on their way to a pool worker: the validated model's pickle state
put back unchecked (what the service does), next to the JSON dump validated again on arrival
(what it did before options were validated once), in the same run, for every registered
environment's default options.

    .venv/bin/python -m benchmarks.options_hop [--rounds 20000]
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import time
from collections.abc import Callable

from pydantic import BaseModel

from envserver import worker
from envserver.registry import discover


def _per_call_us(work: Callable[[], object], rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        work()
    return (time.perf_counter() - started) / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20_000)
    args = parser.parse_args()
    ratios = []
    print(f"{'environment':<28}{'state µs':>10}{'revalidated µs':>16}{'ratio':>7}")
    for env_id, env in sorted(discover().envs.items()):
        model: type[BaseModel] = env.spec.options_model
        options = model()

        def state(model: type[BaseModel] = model, options: BaseModel = options) -> object:
            return worker.received(model, pickle.loads(pickle.dumps(worker.sent(options))))

        def revalidated(model: type[BaseModel] = model, options: BaseModel = options) -> object:
            return model.model_validate(pickle.loads(pickle.dumps(options.model_dump(mode="json"))))

        assert state() == revalidated() == options
        new, old = _per_call_us(state, args.rounds), _per_call_us(revalidated, args.rounds)
        ratios.append(new / old)
        print(f"{env_id:<28}{new:>10.2f}{old:>16.2f}{new / old:>7.2f}")
    print(f"median ratio (state / revalidated): {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
