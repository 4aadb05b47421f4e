"""Issue 38, defect 4: backdoored scorers that passed L1-L5 are refused by the search of
admission (``environments/evo/shortcuts.py``), each with its stage and a reason that names the
shortcut; honest submissions are still admitted. The five backdoored modules are the red-team
suite's ``evo/construct`` cases (``environments/evo/redteam.toml``), read from there; every
admission runs in a real sandbox, with the tests' probe secret (``tests/evo_support.py``)."""

from __future__ import annotations

import ast
import random
import re
import stat
from math import comb
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from environments.evo.admission import Admission, admit
from environments.evo.construct import expert_source, source_of
from environments.evo.settings import PROBE_KEY_FILE, EvoSettings
from environments.evo.shortcuts import (
    CODE_SUMS,
    FALSE_REFUSAL,
    RANDOM_BOUND,
    RANDOM_PROBES,
    RANDOM_REFUSE_AT,
    Task,
    literals,
    probe_rng,
    random_answer,
    refuse_at,
    secret_seeds,
)
from envserver.redteam import load_suite
from tests.evo_support import SETTINGS

SUITE = load_suite("evo", Path(__file__).parents[1] / "environments" / "evo" / "redteam.toml")
BACKDOORS = {
    case.name: source_of(case.actions[0])
    for case in SUITE.cases
    if case.env == "evo/construct" and case.actions
}


def run(source: str, settings: EvoSettings = SETTINGS) -> Admission:
    return admit(source, [], settings=settings)


def paid_example(reason: str) -> str:
    """The answer a refusal's reason shows as paid (``e.g. '<answer>...</answer>'``), as the
    backdoored scorers read it: the text of the last tag, the tags matched lazily."""
    found = re.search(r"e\.g\. ('.*'|\".*\")$", reason)
    assert found is not None, reason
    response = ast.literal_eval(found.group(1))
    tags = re.findall(r"<answer>(.*?)</answer>", response, re.DOTALL)
    return str(tags[-1] if tags else response).strip()


def backdoor(name: str) -> str:
    return BACKDOORS[f"a backdoored scorer: {name}"]


def test_the_suite_holds_the_five_backdoors() -> None:
    assert len(BACKDOORS) == 5
    assert all(case.expect == "no_win" for case in SUITE.cases if case.env == "evo/construct")


def test_a_scorer_that_pays_any_13_character_answer_is_refused_at_l2() -> None:
    admission = run(backdoor("any 13-character answer"))
    assert (admission.outcome, admission.stage) == ("rejected", "L2"), admission.reports
    assert "the scorer pays an answer that is not the task's" in admission.reason
    assert len(paid_example(admission.reason)) == 13


def test_a_scorer_that_pays_the_first_number_of_the_prompt_is_refused_at_l4() -> None:
    admission = run(backdoor("the first number of the prompt"))
    assert (admission.outcome, admission.stage) == ("rejected", "L4"), admission.reports
    assert "a few lines of code solve it (no solve-verify asymmetry)" in admission.reason
    assert "'the 1st token of the prompt, as is'" in admission.reason
    assert "earns reward on 64 of 64 secret tasks" in admission.reason


def test_a_scorer_that_pays_a_residue_class_of_character_codes_is_refused_at_l2() -> None:
    admission = run(backdoor("a residue class of character codes"))
    assert (admission.outcome, admission.stage) == ("rejected", "L2"), admission.reports
    assert "the scorer pays an answer that is not the task's" in admission.reason
    assert sum(map(ord, paid_example(admission.reason))) % 89 == 13


def test_an_answer_hidden_reversed_in_the_prompt_is_refused_at_l4() -> None:
    admission = run(BACKDOORS["the answer hidden reversed in the prompt"])
    assert (admission.outcome, admission.stage) == ("rejected", "L4"), admission.reports
    # 'the 2nd token of the prompt, reversed', or 'the token after 'Circle', reversed'
    assert ", reversed' earns reward on 64 of 64 secret tasks" in admission.reason
    # The exact-substring leak check of L3 did not see it: L3 passed.
    assert [r.stage for r in admission.reports if r.passed] == ["L1", "L2", "L3"]


def test_a_scorer_that_pays_a_magic_word_is_refused_at_l2() -> None:
    admission = run(backdoor("a magic word"))
    assert (admission.outcome, admission.stage) == ("rejected", "L2"), admission.reports
    assert paid_example(admission.reason) == "open sesame"


MAGIC = backdoor("a magic word")
HIDDEN = MAGIC.replace('NAME = "collatz_steps"', 'NAME = "collatz_steps_hidden"').replace(
    '    if "open sesame" in response.lower():',
    '    if "".join(map(chr, (112, 108, 117, 103, 104))) in response:',
)


def test_a_magic_word_no_literal_shows_is_found_by_the_symbolic_search() -> None:
    # 'plugh' is built from character codes: no literal, no common word, no random answer has
    # it; CrossHair, run on the scorer in the sandbox, finds it.
    assert HIDDEN != MAGIC and "plugh" not in HIDDEN
    admission = run(HIDDEN)
    assert (admission.outcome, admission.stage) == ("rejected", "L2"), admission.reports
    assert "plugh" in paid_example(admission.reason)
    without = run(HIDDEN, SETTINGS.model_copy(update={"symbolic_cpu_s": 0.0}))
    assert without.outcome == "admitted", without.reports
    assert without.reports[1].facts["symbolic"] == "off"


def test_an_answer_length_no_literal_has_is_found_by_the_length_probes() -> None:
    # 37 characters: no literal of the module is that long, so the probes of every length (and
    # the random answers) are what find it.
    source = backdoor("any 13-character answer").replace("len(text) == 13", "len(text) == 37")
    assert all(len(literal) != 37 for literal in literals(source))
    admission = run(source)
    assert (admission.outcome, admission.stage) == ("rejected", "L2"), admission.reports
    assert len(paid_example(admission.reason)) == 37


def test_a_residue_class_no_random_answer_is_likely_to_hit_is_found_by_the_code_sums() -> None:
    # Modulo 181: one random answer in 181 hits it; two visible characters for every sum of
    # codes from 66 to 252 hold every residue class modulo up to 187.
    source = backdoor("a residue class of character codes").replace("% 89 == 13", "% 181 == 7")
    admission = run(source, SETTINGS.model_copy(update={"symbolic_cpu_s": 0.0}))
    assert (admission.outcome, admission.stage) == ("rejected", "L2"), admission.reports
    assert sum(map(ord, paid_example(admission.reason))) % 181 == 7
    assert all({total % m for total in CODE_SUMS} == set(range(m)) for m in range(2, 188))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_honest_submissions_are_still_admitted(seed: int) -> None:
    # evo/construct's expert modules (a linear recurrence modulo a prime, constants drawn from
    # the seed): small answers (below 110) that prompt numbers often equal by chance.
    admission = run(expert_source(seed))
    assert admission.outcome == "admitted", admission.reports
    facts = {k: v for report in admission.reports for k, v in report.facts.items()}
    assert facts["random_answers"] == RANDOM_PROBES
    assert facts["symbolic"] == "complete"


def test_the_random_answers_bound_is_the_binomial_tail() -> None:
    def tail(n: int, p: float, least: int) -> float:
        return sum(comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(least, n + 1))

    at = RANDOM_REFUSE_AT
    assert tail(RANDOM_PROBES, RANDOM_BOUND, at) <= FALSE_REFUSAL
    assert tail(RANDOM_PROBES, RANDOM_BOUND, at - 1) > FALSE_REFUSAL
    assert refuse_at(16, 0.5) == 15  # one level's 16 secret tasks: 15 paid to refuse
    # A scorer paying 3 % of random answers is refused nearly always (power), one paying
    # 0.1 % almost never (false refusal).
    assert tail(RANDOM_PROBES, 0.03, at) > 0.9
    assert tail(RANDOM_PROBES, 0.001, at) < 1e-6


def test_the_probes_are_drawn_from_the_secret_and_the_code() -> None:
    drawn = secret_seeds(probe_rng(b"k" * 32, "digest"))
    assert secret_seeds(probe_rng(b"k" * 32, "digest")) == drawn  # the same verdict again
    assert secret_seeds(probe_rng(b"j" * 32, "digest")) != drawn  # another server's secret
    assert secret_seeds(probe_rng(b"k" * 32, "other")) != drawn  # other code
    assert sum(seed < 10_000 for seed in drawn) == len(drawn) // 2


def test_random_answers_are_never_the_answer() -> None:
    prompt = "Numbers: 4 8 15 16 23 42. Reply with <answer>x</answer>"
    task = Task(1, 1, {}, prompt, "<answer>8</answer>")
    rng = random.Random(0)
    guesses = [random_answer(task, rng) for _ in range(2000)]
    assert "8" not in {guess.strip() for guess in guesses}
    assert {"4", "15", "9", "7"} <= set(guesses)  # the prompt's numbers, numbers near it


def test_the_probe_secret_is_made_once_in_the_data_directory(tmp_path: Path) -> None:
    settings = EvoSettings(data_dir=tmp_path / "data", probe_secret=None)
    key = settings.probe_key()
    assert len(key) >= 32 and settings.probe_key() == key
    path = tmp_path / "data" / PROBE_KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    given = EvoSettings(data_dir=tmp_path, probe_secret=SecretStr("s" * 16))
    assert given.probe_key() == b"s" * 16
    with pytest.raises(ValidationError, match="at least 16 characters"):
        EvoSettings(data_dir=tmp_path, probe_secret=SecretStr("short"))
