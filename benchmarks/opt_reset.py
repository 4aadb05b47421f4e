"""OPT-BENCH reset cost per task: a reset now (instance and prompt) against the reset of before
issue 24 (instance, prompt and the exact optimum), side by side in one run on the same new seeds.

A reset no longer proves the optimum; the first score of an instance does (see
``environments/opt/references.py``). The ratio is what a Gym agent's reset saves per new seed.

    .venv/bin/python -m benchmarks.opt_reset [--level hard] [--seeds 2]
"""

from __future__ import annotations

import argparse
import time

from environments.opt.family import OptTaskFamily
from environments.opt.references import ON_DEMAND_BUDGET
from environments.opt.tasks import TASKS
from environments.single_turn import SingleTurnEnvironment

FIRST_SEED = 10_000  # outside the cached benchmark set, so every reference is a fresh solve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", default="hard", choices=["easy", "medium", "hard", "bench"])
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args()
    print(f"{'task':<22}{'reset now ms':>14}{'reset + solve ms':>18}{'ratio':>9}")
    for name, task in TASKS.items():
        family = OptTaskFamily(task)
        env = SingleTurnEnvironment(family)
        options = env.spec.options_model.model_validate({"level": args.level})
        now = before = 0.0
        for seed in range(FIRST_SEED, FIRST_SEED + args.seeds):
            started = time.perf_counter()
            env.reset(seed, options)
            reset = time.perf_counter() - started
            # The old reset: the same generation followed by the exact solve.
            started = time.perf_counter()
            task.solve(family.instance(seed, args.level), ON_DEMAND_BUDGET)
            now += reset
            before += reset + time.perf_counter() - started
        now_ms, before_ms = 1000 * now / args.seeds, 1000 * before / args.seeds
        print(f"{name:<22}{now_ms:>14.2f}{before_ms:>18.1f}{before_ms / now_ms:>9.0f}")


if __name__ == "__main__":
    main()
