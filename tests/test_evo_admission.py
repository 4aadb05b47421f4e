"""EvoEnv's admission pipeline (L1-L5) on the ten seeds and on a submission of each bad kind,
every one run in a real sandbox (the process's own, with full isolation where the kernel
allows it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from environments.evo.admission import Admission, admit
from environments.evo.calibration import Rollout
from environments.evo.contract import ContractError, check_source, normalised_digest
from environments.evo.novelty import PoolEntry
from environments.evo.seeds import seed_sources
from tests.evo_support import SETTINGS

SEEDS = seed_sources()
LIS = SEEDS["lis"]


def run(source: str, pool: list[PoolEntry] | None = None, **kwargs: object) -> Admission:
    return admit(source, pool or [], settings=SETTINGS, **kwargs)  # type: ignore[arg-type]


def entry(name: str, admission: Admission) -> PoolEntry:
    return PoolEntry(name, admission.normalised, admission.fingerprint)


def test_there_are_ten_seeds_each_to_the_contract() -> None:
    assert len(SEEDS) == 10
    names = {check_source(source).name for source in SEEDS.values()}
    assert len(names) == 10


def test_the_ten_seeds_are_admitted_against_each_other() -> None:
    pool: list[PoolEntry] = []
    for name, source in SEEDS.items():
        admission = run(source, pool)
        assert admission.outcome == "admitted", (name, admission.reports)
        assert [r.stage for r in admission.reports] == ["L1", "L2", "L3", "L4", "L5"]
        assert "uncalibrated" in admission.reports[3].detail
        pool.append(entry(name, admission))


@pytest.mark.parametrize(
    ("escape", "why"),
    [
        ("import os\nos.system('touch /tmp/evo-escaped')", "imports 'os'"),
        ("import subprocess", "imports 'subprocess'"),
        ("SHELL = ().__class__.__base__.__subclasses__()", "dunder attribute __"),
        ("LOADER = __import__('socket')", "uses __import__"),
        ("RUN = eval('1 + 1')", "uses eval"),
        ("HANDLE = open('/etc/passwd').read()", "uses open"),
        ("from . import secrets", "imports None"),
    ],
)
def test_an_escape_attempt_is_rejected_at_l1_before_it_runs(escape: str, why: str) -> None:
    admission = run(LIS.replace("import random\n", f"import random\n{escape}\n", 1))
    assert (admission.outcome, admission.stage) == ("rejected", "L1")
    assert why in admission.reason


def test_an_escape_the_static_check_lets_through_is_held_by_the_sandbox() -> None:
    # A memory bomb at import: plain Python, so it reaches the sandbox, which stops it.
    bomb = LIS.replace("import random\n", "import random\nBALLAST = [0] * (10**10)\n", 1)
    admission = run(bomb)
    assert (admission.outcome, admission.stage) == ("rejected", "L1")
    assert "MemoryError" in admission.reason or "memory" in admission.reason


def test_a_flaky_environment_is_rejected_at_l1() -> None:
    # The module-level RNG: a different instance on every call.
    flaky = LIS.replace(
        'rng = random.Random(f"{NAME}/{seed}/{difficulty}")', "rng = random.Random()"
    )
    admission = run(flaky)
    assert (admission.outcome, admission.stage) == ("rejected", "L1")
    assert "two instances in one run" in admission.reason


def test_a_slow_environment_is_rejected_at_l1() -> None:
    endless = "    while seed >= 0:\n        seed += 1\n    size = 6\n"
    slow = LIS.replace("    size = 6 + 6 * difficulty\n", endless)
    admission = run(slow)
    assert (admission.outcome, admission.stage) == ("rejected", "L1")
    assert "timeout" in admission.reason


def test_a_non_json_instance_is_rejected_at_l1() -> None:
    tupled = LIS.replace('return {"values": [', 'return {"values": tuple([', 1).replace(
        "for _ in range(size)]}", "for _ in range(size)])}"
    )
    admission = run(tupled)
    assert (admission.outcome, admission.stage) == ("rejected", "L1")
    assert "JSON round trip" in admission.reason


def test_a_trivial_environment_is_rejected_at_l2() -> None:
    trivial = re.sub(
        r"def score\(.*", "def score(instance, response):\n    return 1.0\n", LIS, flags=re.S
    )
    admission = run(trivial)
    assert (admission.outcome, admission.stage) == ("rejected", "L2")
    assert "a junk or hostile response scores 1: junk ''" in admission.reason


def test_a_wrong_oracle_is_rejected_at_l2() -> None:
    oracle = "{_solve(instance['values'])}</answer>"
    wrong = LIS.replace(oracle, oracle.replace(")}", ") + 1}"))
    assert wrong != LIS
    admission = run(wrong)
    assert (admission.outcome, admission.stage) == ("rejected", "L2")
    assert "reference response does not score 1" in admission.reason


def test_levels_that_do_not_differ_are_rejected_at_l2() -> None:
    flat = LIS.replace('random.Random(f"{NAME}/{seed}/{difficulty}")', 'random.Random(f"{seed}")')
    flat = flat.replace("size = 6 + 6 * difficulty", "size = 12").replace(
        "10 + 15 * difficulty", "40"
    )
    admission = run(flat)
    assert (admission.outcome, admission.stage) == ("rejected", "L2")
    assert "levels do not differ" in admission.reason


def test_a_leaking_environment_is_rejected_at_l3() -> None:
    leaking = LIS.replace(
        '(not necessarily contiguous)? Reply with {ANSWER_FORMAT}."',
        "(not necessarily contiguous)? (It is {_solve(instance['values'])}.) Reply with "
        '{ANSWER_FORMAT}."',
    )
    assert leaking != LIS
    admission = run(leaking)
    assert (admission.outcome, admission.stage) == ("rejected", "L3")
    assert "leaks the answer" in admission.reason


def test_a_prompt_that_hides_the_format_is_rejected_at_l3() -> None:
    silent = LIS.replace(" Reply with {ANSWER_FORMAT}.", "")
    admission = run(silent)
    assert (admission.outcome, admission.stage) == ("rejected", "L3")
    assert "format" in admission.reason


def test_a_renamed_seed_is_rejected_at_l5_as_a_duplicate() -> None:
    original = run(LIS)
    renamed = (
        LIS.replace('NAME = "longest_increasing_subsequence"', 'NAME = "rising_run"')
        .replace("_solve", "_longest")
        .replace("values", "numbers")
        .replace("Sequence:", "Numbers:")
    )
    assert check_source(renamed).name == "rising_run"
    assert normalised_digest(renamed) == normalised_digest(LIS)
    admission = run(renamed, [entry("longest_increasing_subsequence", original)])
    assert (admission.outcome, admission.stage) == ("rejected", "L5")
    assert "longest_increasing_subsequence" in admission.reason


def test_a_behavioural_copy_under_new_code_is_rejected_at_l5() -> None:
    # Same tasks and answers, the DP written another way: only the fingerprint can tell.
    original = run(LIS)
    rewritten = LIS.replace(
        "    best = [1] * len(values)\n",
        "    best = [1 for _ in values]\n",
    )
    assert normalised_digest(rewritten) != normalised_digest(LIS)
    admission = run(rewritten, [entry("longest_increasing_subsequence", original)])
    assert (admission.outcome, admission.stage) == ("rejected", "L5")
    assert "probe tasks" in admission.reason


def test_rollouts_calibrate_l4_inside_the_band() -> None:
    # Half the rollouts give the oracle's answer (taken from the environment itself).
    from environments.evo.program import run_calls, task_call

    tasks = run_calls(LIS, [task_call(s, level) for level in (1, 2, 3, 4, 5) for s in range(8)])
    rollouts = [
        Rollout(s, level, task.value["reference"] if s % 2 else "<answer>0</answer>")
        for (level, s), task in zip(
            [(level, s) for level in (1, 2, 3, 4, 5) for s in range(8)], tasks, strict=True
        )
    ]
    admission = run(LIS, rollouts=rollouts)
    assert admission.outcome == "admitted", admission.reports
    assert admission.pass_rates == dict.fromkeys((1, 2, 3, 4, 5), 0.5)
    too_easy = [Rollout(r.seed, r.difficulty, tasks[i].value["reference"])
                for i, r in enumerate(rollouts)]  # fmt: skip
    easy = run(LIS, rollouts=too_easy)
    assert (easy.outcome, easy.stage) == ("rejected", "L4")
    assert "too easy" in easy.reason
    wrong = [Rollout(r.seed, r.difficulty, "<answer>0</answer>") for r in rollouts]
    hard = run(LIS, rollouts=wrong)
    assert (hard.outcome, hard.stage) == ("rejected", "L4")
    assert "too hard" in hard.reason


def test_the_static_contract_names_what_is_missing() -> None:
    with pytest.raises(ContractError, match="function score is missing"):
        check_source(LIS.split("def score")[0])
    with pytest.raises(ContractError, match="DIFFICULTIES"):
        check_source(LIS.replace("DIFFICULTIES = [1, 2, 3, 4, 5]", "DIFFICULTIES = [1]"))


def test_the_readme_example_is_admitted_and_matches_the_knapsack_seed() -> None:
    readme = (Path(__file__).parents[1] / "environments" / "evo" / "README.md").read_text()
    example = re.search(r"```python\n(.*?)```", readme, re.DOTALL)
    assert example is not None
    admission = run(example.group(1))
    assert admission.outcome == "admitted", admission.reports
    seed = run(SEEDS["knapsack"])
    assert admission.fingerprint == seed.fingerprint


KNAPSACK = SEEDS["knapsack"]
KNAPSACK_HEAD = KNAPSACK.split("def score")[0]


def test_a_scorer_that_finds_the_answer_anywhere_in_the_response_is_rejected_at_l2() -> None:
    # Issue 25: "the answer is in the response" passes the junk and the perturbed references,
    # and then <answer>0123456789</answer> (or every integer listed) scores 1 when served.
    loose = KNAPSACK_HEAD + (
        "def score(instance, response):\n"
        '    if "<answer>" not in response:\n'
        "        return None\n"
        '    best = _best(instance["items"], instance["capacity"])\n'
        "    return 1.0 if str(best) in response else 0.0\n"
    )
    admission = run(loose)
    assert (admission.outcome, admission.stage) == ("rejected", "L2")
    assert "a junk or hostile response scores 1: every small integer listed" in admission.reason


def test_a_scorer_that_accepts_any_of_several_answers_is_rejected_at_l2() -> None:
    # Any <answer> tag may hold it (not the last): several tags, several candidates.
    hedging = KNAPSACK_HEAD + (
        "def score(instance, response):\n"
        '    found = re.findall(r"<answer>\\s*(-?\\d+)\\s*</answer>", response)\n'
        "    if not found:\n"
        "        return None\n"
        '    best = _best(instance["items"], instance["capacity"])\n'
        "    return 1.0 if any(int(number) == best for number in found) else 0.0\n"
    )
    admission = run(hedging)
    assert (admission.outcome, admission.stage) == ("rejected", "L2")
    assert "a hedged response scores 1" in admission.reason


def test_a_prompt_that_asks_for_words_while_the_scorer_reads_digits_is_rejected_at_l3() -> None:
    # The right answer in the form the prompt asks for ("fifty-seven") scores 0.
    words = KNAPSACK.replace(
        'ANSWER_FORMAT = "<answer>an integer</answer>"',
        'ANSWER_FORMAT = "<answer>the value in English words, not digits</answer>"',
    )
    assert words != KNAPSACK
    admission = run(words)
    assert (admission.outcome, admission.stage) == ("rejected", "L3")
    assert "(numbers in words) does not score 1" in admission.reason
    assert "contradicts the prompt" in admission.reason


def test_the_forms_a_prompt_asks_for_are_recognised_and_the_reference_rewritten() -> None:
    from environments.evo.forms import COMMAS_FORM, WORDS_FORM, asked_forms, in_words, rewritten

    assert [in_words(n) for n in (0, 13, 42, 100, 1999, -7)] == [
        "zero", "thirteen", "forty-two", "one hundred", "one thousand nine hundred ninety-nine",
        "minus seven",
    ]  # fmt: skip
    assert asked_forms("Reply with the number spelled out.", "<answer>x</answer>") == [WORDS_FORM]
    assert asked_forms("Data: 1, 2, 3", "<answer>comma-separated</answer>") == [COMMAS_FORM]
    assert asked_forms("Data: 3, 4 (comma-separated)", "<answer>an integer</answer>") == []
    assert rewritten("so <answer>42</answer>", WORDS_FORM) == [
        "<answer>forty-two</answer>", "<answer>forty two</answer>",
    ]  # fmt: skip
    assert rewritten("<answer>forty-two</answer>", WORDS_FORM) == []
    assert rewritten("<answer>1 2 3</answer>", COMMAS_FORM) == ["<answer>1, 2, 3</answer>"]
