"""What the math verifier's issue-38 rules cost, against the verifier before them, in one run.

The baseline is the verifier at ``--baseline`` (default: the commit before the rules), read from
git and loaded beside today's as another package, so both score the same items in this process:

- **Throughput**: items per CPU second, each path on the same items, which path goes first
  alternating by round (as ``math_answer_checks``): the generator's items (half the expert's
  boxed answer, half a wrong box), then the same answers unboxed ("the answer is ...").
- **Price**: the legitimate answers whose verdict changes: the expert's answer to ``--tasks``
  random task ids of each difficulty, the search's equivalent forms of each (``\\dfrac``,
  decimals, names, reordered sets, unboxed; ``environments/math/search.py``), and the red-team
  suite's must-pay cases; and, for the record, the suite's hostile cases each path pays.

    .venv/bin/python -m benchmarks.math_rules [--items 300] [--rounds 4] [--tasks 200]
"""

from __future__ import annotations

import argparse
import importlib
import random
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.common import math_items, median
from environments.math.family import MathTaskOptions, MathTasks
from environments.math.search import DIFFICULTIES, EQUIVALENT, SUITE
from environments.search import Mutant, Probe
from environments.task_id import TaskId
from verifiers.math import VERIFIER, MathOptions

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "7c5d06b~1"
"""The commit before the answer class, the bounds and the several-answers rules."""
MODULES = ("math", "math_hedges", "math_unboxed")
"""The verifier's own modules: read at the baseline; the rest (score, base, numbers) is shared."""

Check = Callable[[str, Any, MathOptions], tuple[str, float | None]]


def baseline_verifier(revision: str) -> Check:
    """The math verifier at ``revision``, loaded as the package ``baseline_verifiers``."""
    package = Path(tempfile.mkdtemp(prefix="math-baseline-")) / "baseline_verifiers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in MODULES:
        source = subprocess.run(
            ["git", "show", f"{revision}:verifiers/{name}.py"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for other in MODULES:
            source = source.replace(f"from verifiers.{other} ", f"from baseline_verifiers.{other} ")
        (package / f"{name}.py").write_text(source)
    sys.path.insert(0, str(package.parent))
    module: ModuleType = importlib.import_module("baseline_verifiers.math")
    options_model = module.MathOptions

    def check(response: str, reference: Any, options: MathOptions) -> tuple[str, float | None]:
        score = module.VERIFIER(response, reference, options_model(**options.model_dump()))
        return score.status, score.reward

    return check


def today(response: str, reference: Any, options: MathOptions) -> tuple[str, float | None]:
    score = VERIFIER(response, reference, options)
    return score.status, score.reward


# --- throughput -------------------------------------------------------------------------------


def unboxed(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The same items with each answer written without its box and dollars."""
    return [(re.sub(r"\$\\boxed\{(.*)\}\$", r"\1", r), ref) for r, ref in items]


def rate(check: Check, items: list[tuple[str, str]]) -> float:
    """Items per CPU second."""
    options = MathOptions()
    started = time.process_time()
    for response, reference in items:
        check(response, reference, options)
    return len(items) / (time.process_time() - started)


def throughput(paths: dict[str, Check], items: int, rounds: int) -> None:
    for shape, form in (("boxed", list), ("unboxed", unboxed)):
        for check in paths.values():
            rate(check, form(math_items(60, 10**9)))  # warm both as a server warms its workers
        rates: dict[str, list[float]] = {name: [] for name in paths}
        for round_index in range(rounds):
            names = list(paths) if round_index % 2 == 0 else list(reversed(paths))
            for offset, name in enumerate(names):
                first_seed = (2 * round_index + offset) * items
                rates[name].append(rate(paths[name], form(math_items(items, first_seed))))
        print(f"\nthroughput, {shape} answers, {items} items x {rounds} rounds (medians)")
        print(f"{'path':<12}{'items/s':>10}{'ratio':>8}  per-round items per CPU second")
        base = rates["baseline"]
        for name, values in rates.items():
            ratio = median([v / b for v, b in zip(values, base, strict=True)])
            shown = " ".join(f"{v:.0f}" for v in values)
            print(f"{name:<12}{median(values):>10.0f}{ratio:>8.2f}  {shown}")


# --- price ------------------------------------------------------------------------------------


def legitimate(tasks: int, rng: random.Random) -> Iterator[tuple[str, str, str, MathOptions]]:
    """(what, response, reference, options): answers that deserve full reward."""
    family = MathTasks()
    for difficulty in DIFFICULTIES:
        for _ in range(tasks):
            seed = rng.randrange(10**6)
            task_id = f"math@1/{seed}?difficulty={difficulty}"
            options = MathTaskOptions.model_validate(TaskId.parse(task_id).options)
            task = family.generate(seed, options)
            reference = str(task.reference)
            yield "expert", family.expert_response(task), reference, MathOptions()
            parent = Mutant(Probe(response=family.expert_response(task), task_id=task_id), 1.0)
            for mutant in EQUIVALENT(parent, rng):
                move = mutant.probe.origin.rsplit(" > ", 1)[-1]
                yield move, mutant.probe.response, reference, MathOptions()


def suite(expects: set[str]) -> Iterator[tuple[str, str, str, MathOptions]]:
    family = MathTasks()
    for case in tomllib.loads(SUITE.read_text())["case"]:
        if case["expect"] not in expects:
            continue
        if "task_id" in case:
            parsed = TaskId.parse(case["task_id"])
            task = family.generate(parsed.seed, MathTaskOptions.model_validate(parsed.options))
            reference, options = str(task.reference), MathOptions()
        else:
            reference, options = case["reference"], MathOptions(**case.get("options", {}))
        yield f"suite: {case['name']}", case["response"], reference, options


def price(paths: dict[str, Check], tasks: int) -> None:
    rng = random.Random(38)
    answers = list(legitimate(tasks, rng)) + list(suite({"full"}))
    changed: Counter[str] = Counter()
    counted: Counter[str] = Counter()
    examples: list[str] = []
    for what, response, reference, options in answers:
        kind = what if not what.startswith("suite:") else "suite must-pay"
        counted[kind] += 1
        before, after = (paths[name](response, reference, options) for name in paths)
        if before != after:
            changed[f"{kind}: {before[0]} {before[1]} -> {after[0]} {after[1]}"] += 1
            if len(examples) < 12:
                examples.append(f"  {kind}: {response[:90]!r} ({reference}): {before} -> {after}")
    print(f"\nprice: {sum(counted.values())} legitimate answers ({tasks} task ids a difficulty)")
    for kind, count in sorted(counted.items()):
        print(f"  {kind:<24}{count:>6}")
    print(f"verdicts changed: {sum(changed.values())}")
    for change, count in sorted(changed.items()):
        print(f"  {change}: {count}")
    print("\n".join(examples))
    hostile = list(suite({"zero", "invalid", "below_full"}))
    paid = {name: sum(check(r, ref, o)[1] == 1.0 for _, r, ref, o in hostile) for name, check in
            paths.items()}  # fmt: skip
    print(f"\nthe suite's {len(hostile)} hostile cases paid 1.0: {paid}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help="git revision of the baseline")
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=200, help="task ids per difficulty")
    args = parser.parse_args()
    paths = {"baseline": baseline_verifier(args.baseline), "today": today}
    print(f"math rules: today against {args.baseline}")
    price(paths, args.tasks)
    throughput(paths, args.items, args.rounds)


if __name__ == "__main__":
    main()
