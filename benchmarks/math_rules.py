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
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.common import math_rates, print_rates, unboxed
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
    sources = {
        name: subprocess.run(
            ["git", "show", f"{revision}:verifiers/{name}.py"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for name in MODULES
    }
    with tempfile.TemporaryDirectory(prefix="math-baseline-") as folder:
        package = Path(folder) / "baseline_verifiers"
        package.mkdir()
        (package / "__init__.py").write_text("")
        for name, source in sources.items():
            text = source
            for other in MODULES:
                text = text.replace(f"from verifiers.{other} ", f"from baseline_verifiers.{other} ")
            (package / f"{name}.py").write_text(text)
        sys.path.insert(0, folder)
        try:  # the package's modules are all imported here: the folder can go
            module: ModuleType = importlib.import_module("baseline_verifiers.math")
        finally:
            sys.path.remove(folder)
    options_model = module.MathOptions

    def check(response: str, reference: Any, options: MathOptions) -> tuple[str, float | None]:
        score = module.VERIFIER(response, reference, options_model(**options.model_dump()))
        return score.status, score.reward

    return check


def today(response: str, reference: Any, options: MathOptions) -> tuple[str, float | None]:
    score = VERIFIER(response, reference, options)
    return score.status, score.reward


# --- throughput -------------------------------------------------------------------------------


def throughput(paths: dict[str, Check], items: int, rounds: int) -> None:
    options = MathOptions()

    def with_options(check: Check) -> Callable[[str, str], object]:
        return lambda response, reference: check(response, reference, options)

    checks = {name: with_options(check) for name, check in paths.items()}
    for shape, form in (("boxed", list), ("unboxed", unboxed)):
        rates = math_rates(checks, form, items, rounds)
        title = f"\nthroughput, {shape} answers, {items} items x {rounds} rounds (medians)"
        print_rates(title, rates, "baseline")


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
