"""The code verifier's answer rules from issue 38 (one program per response; tests a program
doing nothing passes count only beside one it does not) and the family's search space: its
moves make mutants settled by construction, constant programs deserve exactly their share, and
a search finds both old rules and nothing once they are fixed."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

import verifiers.code
from environments.code import search as code_search
from environments.search import Mutant, Probe, SearchSpace
from envserver import redteam
from envserver.config import Settings
from envserver.registry import Registry, discover
from envserver.search import search
from verifiers.code import VERIFIER
from verifiers.code.extract import SeveralPrograms, extract_code

EMPTY_FIRST = "code@1/1?format=stdin"
"""The primes up to n: its first hidden test (n < 2) expects no output."""
PRIMES = """```python
n = int(input())
print(" ".join(str(p) for p in range(2, n + 1) if all(p % d for d in range(2, p))))
```"""


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with discover().opened(Settings(data_dir=tmp_path_factory.mktemp("data"))) as opened:
        yield opened


def _score(registry: Registry, probe: Probe) -> redteam.Got:
    return redteam.score_case(redteam.InProcess(registry), probe)


# --- one program per response ----------------------------------------------------------------


@pytest.mark.parametrize(
    "response",
    [
        "```python\nprint(1)\n```\nBetter:\n```python\nprint(2)\n```",
        "```py\nprint(1)\n```\n```python3\nprint(2)\n```",
        "```\nprint(1)\n```\n```\nprint(2)\n```",
        "```js\n1\n```\n```ts\n2\n```",
    ],
)
def test_two_different_programs_are_several(response: str) -> None:
    with pytest.raises(SeveralPrograms):
        extract_code(response, "python")
    score = VERIFIER(response, {"tests": {"items": [{"stdin": "", "stdout": "2"}]}})
    assert (score.status, score.reward) == ("invalid", 0.0)


@pytest.mark.parametrize(
    ("response", "program"),
    [
        ("```python\nprint(2)\n```\nAgain:\n```python\nprint(2)\n```", "print(2)"),
        ("Input:\n```\n3 4\n```\n```python\nprint(2)\n```", "print(2)"),
        ("```python\nprint(2)\n```\nRun it with:\n```bash\npython main.py\n```", "print(2)"),
        ("print(2)", "print(2)"),
        ("```python\nprint(2)", "print(2)"),
    ],
)
def test_one_program_is_read_beside_blocks_of_another_kind(response: str, program: str) -> None:
    assert extract_code(response, "python") == program


# --- tests a program doing nothing passes ----------------------------------------------------


@pytest.mark.parametrize("program", ["...", "None", "import sys\nsys.exit(0)", "pass"])
def test_a_program_doing_nothing_earns_nothing_where_a_test_expects_no_output(
    registry: Registry, program: str
) -> None:
    # Before issue 38 each of these paid 1/5: the first test expects the empty output.
    got = _score(registry, Probe(f"```python\n{program}\n```", task_id=EMPTY_FIRST))
    assert (got.status, got.reward) == ("ok", 0.0), got.detail
    assert "does nothing" in got.detail


def test_a_program_that_solves_the_task_keeps_the_empty_test(registry: Registry) -> None:
    assert _score(registry, Probe(PRIMES, task_id=EMPTY_FIRST)).reward == 1.0


def test_a_suite_that_only_expects_nothing_is_still_passed_by_nothing() -> None:
    reference = {"tests": {"items": [{"stdin": "1", "stdout": ""}, {"stdin": "2", "stdout": ""}]}}
    assert VERIFIER("```python\npass\n```", reference).reward == 1.0
    items = [{"args": [1], "expected": None}, {"args": [2], "expected": 3}]
    calls = {"tests": {"kind": "call", "entry_point": "f", "items": items}}
    assert VERIFIER("```python\ndef f(x):\n    pass\n```", calls).reward == 0.0
    right = "```python\ndef f(x):\n    return None if x == 1 else 3\n```"
    assert VERIFIER(right, calls).reward == 1.0


# --- the search space ------------------------------------------------------------------------


def _parents(rng: random.Random) -> list[Mutant]:
    task_ids = [
        f"code@1/{seed}?format={fmt}" for seed in (1, 2) for fmt in ("stdin", "call", "assert")
    ]
    cpp = "code@1/3?format=stdin&language=cpp"
    return [
        Mutant(Probe(str(code_search._generated(task_id)["expert"]), task_id=task_id), 1.0)
        for task_id in [*task_ids, cpp]
    ]


def test_every_move_makes_mutants_for_every_format() -> None:
    rng = random.Random(1)
    parents = _parents(rng)
    for move in code_search.SEARCH.mutators:
        for parent in parents[:-1]:
            made = list(move(parent, rng))
            assert made, (move.name, parent.probe.task_id)
        if move.name in ("harness", "tests", "slow", "output"):
            assert all(m.deserves == 0.0 for parent in parents for m in move(parent, rng))
    (exits_move,) = [move for move in code_search.SEARCH.mutators if move.name == "exit"]
    exits = list(exits_move(parents[-1], rng))
    assert exits and "```cpp" in exits[0].probe.response


def test_seeds_are_experts_constants_and_must_pay_cases() -> None:
    rng = random.Random(2)
    drawn = [m for _ in range(10) for m in code_search.seeds(rng)]
    assert {m.probe.origin.split(":")[0] for m in drawn} == {"seed", "seed > constant", "redteam"}
    assert all(m.deserves == 1.0 for m in drawn if m.probe.origin != "seed > constant")


def test_constant_programs_deserve_exactly_their_share(registry: Registry) -> None:
    rng = random.Random(3)
    shares = set()
    for parent in _parents(rng):
        for _ in range(3):
            for mutant in code_search._constants(parent.probe, rng):
                got = _score(registry, mutant.probe)
                assert got.reward == pytest.approx(mutant.deserves), mutant.probe.response
                shares.add(mutant.deserves)
    assert len(shares) >= 2  # partial shares, not only 0 and 1


def test_decoys_and_experts_score_as_they_deserve(registry: Registry) -> None:
    rng = random.Random(4)
    for _ in range(4):
        expert, *_ = code_search.seeds(rng)
        assert _score(registry, expert.probe).reward == 1.0
        for decoy in code_search.decoys(expert.probe, rng):
            assert _score(registry, expert.probe.answer(decoy, "decoy")).reward == 0.0


def test_a_search_finds_both_old_rules_and_nothing_once_they_are_fixed(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = redteam.InProcess(registry)
    expert = Mutant(Probe(PRIMES, task_id=EMPTY_FIRST), 1.0)
    space = SearchSpace(lambda rng: iter([expert]), code_search.SEARCH.mutators)
    fixed = search("code", space, target, budget_s=120, seed=5, max_tries=120)
    assert not fixed.failed, fixed.as_json()

    def last_block(response: str, language: str) -> str:
        blocks = code_search_blocks(response)
        return blocks[-1] if blocks else response

    def code_search_blocks(response: str) -> list[str]:
        return [b.split("\n", 1)[1] for b in response.split("```")[1::2] if "\n" in b]

    monkeypatch.setattr(verifiers.code, "extract_code", last_block)
    monkeypatch.setattr(verifiers.code, "_passed_by_nothing", lambda tests, judge: [False] * 5)
    before = search("code", space, target, budget_s=120, seed=5, max_tries=120)
    assert {"several", "vacuous", "exit"} <= set(before.paid), before.as_json()
