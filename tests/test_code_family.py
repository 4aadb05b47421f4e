"""The code family (environments/code): seeded problems, hidden tests, reference solutions."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from environments.base import Environment
from environments.code import FAMILY as DECLARED
from environments.code.arithmetic import primes_up_to
from environments.code.family import CodeTask, CodeTaskOptions, CodeTasks, draw_problem
from environments.code.kinds import KINDS
from environments.code.problem import SIZES, Difficulty, Problem
from environments.code.render import Format
from environments.task_id import TaskId
from sandbox.values import decode, encode

REPO_ROOT = Path(__file__).resolve().parents[1]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")
FORMATS: tuple[Format, ...] = ("stdin", "call", "assert")
FAMILY = CodeTasks()

ENVIRONMENTS = DECLARED.load().environments


def _task(
    seed: int, difficulty: Difficulty = "easy", fmt: str = "any", language: str = "python"
) -> CodeTask:
    options = {"difficulty": difficulty, "format": fmt, "language": language}
    return FAMILY.generate(seed, CodeTaskOptions.model_validate(options))


def _seeds_by_kind(difficulty: Difficulty, per_kind: int) -> dict[str, list[int]]:
    """The first ``per_kind`` seeds of each kind at ``difficulty`` (scanned in seed order)."""
    found: dict[str, list[int]] = {kind: [] for kind in KINDS}
    for seed in range(5000):
        kind = draw_problem(seed, difficulty)[0]
        if len(found[kind]) < per_kind:
            found[kind].append(seed)
        if all(len(seeds) == per_kind for seeds in found.values()):
            return found
    raise AssertionError(f"some kind never drawn: {found}")


SEEDS = {difficulty: _seeds_by_kind(difficulty, 2) for difficulty in DIFFICULTIES}


def _source(response: str, language: str = "python") -> str:
    match = re.search(rf"```{language}\n(.*?)```", response, re.DOTALL)
    assert match, response
    return match.group(1)


def _prompt(task: CodeTask) -> str:
    assert isinstance(task.prompt, str)
    return task.prompt


# --- running the trusted references in-process (our own code, never a model's) --------------


def _run_program(source: str, stdin: str) -> str:
    out = io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, "main.py", "exec"), {"__name__": "__main__"})
    finally:
        sys.stdin = saved
    return out.getvalue()


def _define(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "solution"}
    exec(compile(source, "solution.py", "exec"), namespace)
    return namespace


def _passes(task: CodeTask, source: str) -> list[bool]:
    """For each hidden test, whether the Python ``source`` passes it (exact stdout)."""
    assert isinstance(task.reference, dict)
    suite = task.reference["tests"]
    if suite["kind"] == "stdin":
        return [_run_program(source, item["stdin"]) == item["stdout"] for item in suite["items"]]
    function = _define(source)[suite["entry_point"]]
    if suite["kind"] == "call":
        return [
            encode(function(*decode(item["args"]), **decode(item["kwargs"]))) == item["expected"]
            for item in suite["items"]
        ]
    results = []
    for item in suite["items"]:
        try:
            exec(item["code"], {suite["entry_point"]: function, "candidate": function})
        except AssertionError:
            results.append(False)
        else:
            results.append(True)
    return results


def _off_by_one(task: CodeTask, source: str) -> str:
    """The reference with its result corrupted on every other call, the first included."""
    entry = re.search(r"^def (\w+)\(", source, re.MULTILINE)
    assert entry
    name = entry.group(1)
    wrapper = (
        f"_right = {name}\n"
        "_calls = [0]\n\n\n"
        f"def {name}(*args):\n"
        "    result = _right(*args)\n"
        "    _calls[0] += 1\n"
        "    if _calls[0] % 2 == 0:\n"
        "        return result\n"
        "    if isinstance(result, bool):\n"
        "        return not result\n"
        "    if isinstance(result, int):\n"
        "        return result + 1\n"
        "    if isinstance(result, str):\n"
        "        return result + 'x'\n"
        "    return result[:-1] if result else [result]\n"
    )
    if source.rstrip().endswith("main()"):  # a stdin program: wrap before main runs
        head = source.rstrip()[: -len("main()")]
        return f"{head}{wrapper}\n\nmain()\n"
    return f"{source}\n\n{wrapper}"


# --- the family's contract -------------------------------------------------------------------


def test_family_identity_and_options() -> None:
    assert (FAMILY.id, FAMILY.version) == ("code", "1")
    assert FAMILY.description
    assert CodeTaskOptions() == CodeTaskOptions(difficulty="easy", format="any", language="python")
    schema = CodeTaskOptions.model_json_schema()["properties"]
    assert all(schema[name]["description"] for name in ("difficulty", "format", "language"))
    with pytest.raises(ValidationError):
        CodeTaskOptions(difficulty="impossible")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        CodeTaskOptions(level="hard")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="cpp"):
        CodeTaskOptions(language="cpp", format="call")
    with pytest.raises(ValidationError, match="cpp"):
        CodeTaskOptions(language="cpp", format="assert")
    options = CodeTaskOptions(difficulty="hard")
    with pytest.raises(ValidationError):
        options.difficulty = "easy"  # type: ignore[misc]
    assert FAMILY.generate(1, CodeTaskOptions(format="call")) == _task(1, fmt="call")


def test_there_are_many_kinds() -> None:
    assert len(KINDS) >= 12
    assert set(SEEDS["easy"]) == set(KINDS)


def test_environment_spec() -> None:
    (environment,) = ENVIRONMENTS
    assert isinstance(environment, Environment)
    spec = environment.spec
    assert (spec.id, spec.version, spec.verifier, spec.kind) == ("code", "1", "code", "single_turn")
    properties = spec.options_model.model_json_schema()["properties"]
    assert {"difficulty", "format", "language", "max_attempts"} <= set(properties)


# --- determinism -----------------------------------------------------------------------------


def _tasks_json(seeds: range) -> str:
    tasks = [
        asdict(_task(seed, difficulty, fmt))
        for difficulty in DIFFICULTIES
        for fmt in (*FORMATS, "any")
        for seed in seeds
    ]
    return json.dumps(tasks, sort_keys=True)


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_same_seed_gives_identical_task(difficulty: Difficulty) -> None:
    for seed in [*range(30), 2**31, 2**63 - 1]:
        for fmt in (*FORMATS, "any"):
            first = _task(seed, difficulty, fmt)
            options = CodeTaskOptions.model_validate({"difficulty": difficulty, "format": fmt})
            second = CodeTasks().generate(seed, options)
            assert first == second
            assert json.dumps(asdict(first)) == json.dumps(asdict(second))


def test_same_seed_gives_identical_task_in_another_process() -> None:
    # A fixed hash seed in the child (the parent's is random) catches any dependence on set
    # iteration order or str hashing.
    code = (
        "import sys\n"
        "sys.path.insert(0, 'tests')\n"
        "from test_code_family import _tasks_json\n"
        "sys.stdout.write(_tasks_json(range(15)))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(REPO_ROOT)}
    child = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout == _tasks_json(range(15))


def test_generation_leaves_global_random_state_alone() -> None:
    random.seed(7)
    before = random.getstate()
    for seed in range(30):
        _task(seed, "hard")
    assert random.getstate() == before


def test_one_seed_is_one_problem_in_every_format() -> None:
    for seed in range(20):
        tasks = [_task(seed, "medium", fmt) for fmt in FORMATS]
        assert len({task.metadata["kind"] for task in tasks}) == 1
        counts = {len(task.reference["tests"]["items"]) for task in tasks}  # type: ignore[index]
        assert counts == {SIZES["medium"].tests}
        call, asserted = tasks[1].reference["tests"], tasks[2].reference["tests"]  # type: ignore[index]
        assert call["entry_point"] == asserted["entry_point"]


def test_any_format_is_drawn_from_the_seed() -> None:
    drawn = [_task(seed).metadata["format"] for seed in range(60)]
    assert set(drawn) == set(FORMATS)
    for seed in range(20):
        task = _task(seed, fmt="any", language="cpp")
        assert task.metadata["format"] == "stdin"
        assert task.reference["language"] == "cpp"  # type: ignore[index]


# --- variety and shape -----------------------------------------------------------------------


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_seeds_give_varied_problems(difficulty: Difficulty) -> None:
    tasks = [_task(seed, difficulty) for seed in range(200)]
    assert {task.metadata["kind"] for task in tasks} == set(KINDS)
    assert len({_prompt(task) for task in tasks}) >= 195


def test_difficulty_scales_the_tests() -> None:
    for seed in range(10):
        sizes = {}
        for difficulty in DIFFICULTIES:
            task = _task(seed, difficulty, "stdin")
            items = task.reference["tests"]["items"]  # type: ignore[index]
            assert len(items) == task.metadata["tests"] == SIZES[difficulty].tests
            sizes[difficulty] = max(len(item["stdin"]) for item in items)
        assert sizes["easy"] <= sizes["hard"]


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_every_kind_and_format_generates_a_sound_task(difficulty: Difficulty) -> None:
    for kind, seeds in SEEDS[difficulty].items():
        for seed in seeds:
            for fmt in FORMATS:
                task = _task(seed, difficulty, fmt)
                reference: Any = task.reference
                prompt = _prompt(task)
                assert task.metadata == {
                    "kind": kind,
                    "difficulty": difficulty,
                    "format": fmt,
                    "language": "python",
                    "tests": SIZES[difficulty].tests,
                }
                assert task.verifier_options == {}
                assert reference["language"] == "python"
                assert reference["time_limit_s"] > 0
                suite = reference["tests"]
                assert suite["kind"] == fmt
                assert "```python" in prompt
                if fmt == "stdin":
                    assert "standard input" in prompt and "standard output" in prompt
                    assert "entry_point" not in suite
                    expected = [item["stdout"] for item in suite["items"]]
                else:
                    entry = suite["entry_point"]
                    assert f"`{entry}(" in prompt
                    if fmt == "assert":
                        assert "assert statements" in prompt
                        assert all(entry in item["code"] for item in suite["items"])
                        expected = [item["code"].split(" == ")[-1] for item in suite["items"]]
                    else:
                        assert all(item["kwargs"] == {} for item in suite["items"])
                        expected = [json.dumps(item["expected"]) for item in suite["items"]]
                # Tests that all expect the same output would not tell programs apart.
                assert len(set(expected)) > 1, (kind, seed, fmt)
                json.dumps(reference)  # plain JSON


def test_cpp_tasks_ask_for_cpp() -> None:
    for kind, (seed, _) in SEEDS["easy"].items():
        task = _task(seed, "easy", "stdin", "cpp")
        prompt = _prompt(task)
        assert "C++" in prompt and "```cpp" in prompt, kind
        assert task.metadata["language"] == "cpp"
        same = _task(seed, "easy", "stdin")  # the same hidden tests as the Python task
        assert task.reference["tests"] == same.reference["tests"]  # type: ignore[index]


# --- the hidden tests stay hidden ------------------------------------------------------------


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_metadata_and_prompt_do_not_leak_the_tests(difficulty: Difficulty) -> None:
    for seed in range(60):
        for fmt in FORMATS:
            task = _task(seed, difficulty, fmt)
            assert set(task.metadata) == {"kind", "difficulty", "format", "language", "tests"}
            assert all(isinstance(v, str | int) for v in task.metadata.values())
            suite: Any = task.reference["tests"]  # type: ignore[index]
            prompt = _prompt(task)
            for item in suite["items"]:
                if fmt == "assert":
                    assert item["code"] not in prompt
                elif fmt == "call":
                    args = ", ".join(repr(a) for a in decode(item["args"]))
                    assert f"({args})` returns" not in prompt
                elif item["stdin"].strip():
                    assert f"```\n{item['stdin']}```" not in prompt


# --- the reference solutions pass their hidden tests, and wrong ones do not -------------------


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_expert_passes_its_tests_in_process(difficulty: Difficulty, fmt: Format) -> None:
    for kind, seeds in SEEDS[difficulty].items():
        for seed in seeds:
            task = _task(seed, difficulty, fmt)
            source = _source(FAMILY.expert_response(task))
            assert all(_passes(task, source)), (kind, seed)
            assert not all(_passes(task, _off_by_one(task, source))), (kind, seed)


def test_solve_agrees_with_the_reference_bodies_on_many_seeds() -> None:
    # The trusted solve computes the tests; the shown Python reference must agree with it on
    # far more cases than the tests sample.
    for seed in range(400):
        kind, problem, example, cases = draw_problem(seed, "medium")
        task = _task(seed, "medium", "call")
        function = _define(_source(FAMILY.expert_response(task)))[problem.name]
        rng = random.Random(seed)
        more = [problem.random_case(rng, SIZES["hard"]) for _ in range(5)]
        for args in [example[0], *(args for args, _ in cases), *more, *problem.edge_cases]:
            assert function(*args) == problem.solve(*args), (kind, seed, args)


def _brute_two_sum(nums: list[int], target: int) -> list[int]:
    pairs = [(j, i) for j in range(len(nums)) for i in range(j) if nums[i] + nums[j] == target]
    return list(reversed(min(pairs))) if pairs else [-1, -1]


def _brute_rotation(problem: Problem, a: str, b: str) -> bool:
    if "ignoring case" in problem.rules:
        a, b = a.lower(), b.lower()
    return any(a[k:] + a[:k] == b for k in range(len(a))) or a == b


def _brute_primes(problem: Problem, n: int) -> Any:
    found = [p for p in range(2, n + 1) if all(p % d for d in range(2, int(p**0.5) + 1))]
    if problem.returns == "ints":
        return found
    return len(found) if "count" in problem.name else sum(found)


def _independent(kind: str, problem: Problem, args: tuple[Any, ...]) -> Any:
    if kind == "two_sum":
        return _brute_two_sum(*args)
    if kind == "is_rotation":
        return _brute_rotation(problem, *args)
    return _brute_primes(problem, *args)


@pytest.mark.parametrize("kind", ["two_sum", "is_rotation", "primes"])
def test_expected_outputs_agree_with_brute_force(kind: str) -> None:
    for difficulty in DIFFICULTIES:
        for seed in SEEDS[difficulty][kind]:
            _, problem, _, cases = draw_problem(seed, difficulty)
            for args, expected in cases:
                if kind == "primes" and args[0] > 5000:
                    continue  # trial division is too slow there; the sieve is tested below
                assert expected == _independent(kind, problem, args), (seed, args)
    assert primes_up_to(100_000)[-3:] == [99971, 99989, 99991]
    assert len(primes_up_to(100_000)) == 9592


@pytest.fixture(scope="module")
def cpp_binary(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    """Every kind's C++ reference, compiled once into one binary (``./main <kind index>``):
    one compile instead of one per kind keeps this fast; each program keeps its own namespace."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    prelude = "#include <bits/stdc++.h>\nusing namespace std;\n"
    parts, order = [prelude], []
    for index, (kind, (seed, _)) in enumerate(SEEDS["hard"].items()):
        program = _source(FAMILY.expert_response(_task(seed, "hard", "stdin", "cpp")), "cpp")
        assert program.startswith(prelude)
        body = program[len(prelude) :].replace("int main() {", "int run() {")
        parts.append(f"namespace k{index} {{\n{body}}}\n")
        order.append(kind)
    calls = "".join(f"    if (which == {i}) return k{i}::run();\n" for i in range(len(order)))
    parts.append(f"int main(int argc, char** argv) {{\n    int which = atoi(argv[1]);\n{calls}}}\n")
    directory = tmp_path_factory.mktemp("cpp")
    (directory / "main.cpp").write_text("".join(parts))
    subprocess.run(
        ["g++", "-O1", "-std=gnu++17", "-o", "main", "main.cpp"],
        cwd=directory,
        check=True,
        capture_output=True,
    )
    yield directory / "main", order


def test_cpp_expert_passes_its_tests(cpp_binary: tuple[Path, list[str]]) -> None:
    binary, order = cpp_binary
    for index, kind in enumerate(order):
        seed = SEEDS["hard"][kind][0]
        task = _task(seed, "hard", "stdin", "cpp")
        for item in task.reference["tests"]["items"]:  # type: ignore[index]
            run = subprocess.run(
                [str(binary), str(index)],
                check=False,
                input=item["stdin"],
                capture_output=True,
                text=True,
            )
            assert run.returncode == 0, (kind, run.stderr)
            assert run.stdout == item["stdout"], (kind, seed, item["stdin"][:200])


# --- end to end, through the real code verifier and the environment --------------------------


def _verifier() -> Any:
    return pytest.importorskip("verifiers.code").VERIFIER


def _score(task: CodeTask, response: str) -> Any:
    verifier = _verifier()
    return verifier(response, task.reference, verifier.options_model(**task.verifier_options))


@pytest.mark.parametrize("fmt", FORMATS)
def test_expert_scores_one_through_the_verifier(fmt: Format) -> None:
    for kind, (seed, _) in SEEDS["hard"].items():
        task = _task(seed, "hard", fmt)
        score = _score(task, FAMILY.expert_response(task))
        assert (score.status, score.reward) == ("ok", 1.0), (kind, seed, score)
        wrong = f"```python\n{_off_by_one(task, _source(FAMILY.expert_response(task)))}```"
        score = _score(task, wrong)
        assert score.status == "ok" and score.reward < 1.0, (kind, seed, score)


def test_cpp_expert_scores_one_through_the_verifier() -> None:
    # Two kinds only: each C++ answer compiles for about a second.
    for kind in ("two_sum", "anagram_groups"):
        task = _task(SEEDS["medium"][kind][0], "medium", "stdin", "cpp")
        score = _score(task, FAMILY.expert_response(task))
        assert (score.status, score.reward) == ("ok", 1.0), (kind, score)


def test_episode_and_task_id() -> None:
    _verifier()
    (environment,) = ENVIRONMENTS
    parsed = TaskId.parse("code@1/42?difficulty=medium&format=assert")
    options: BaseModel = environment.spec.options_model.model_validate(
        {**parsed.options, "max_attempts": 2}
    )
    task = _task(42, "medium", "assert")
    reset = environment.reset(parsed.seed, options)
    assert reset.observation == task.prompt
    assert reset.info["metadata"] == task.metadata
    wrong = environment.step(reset.state, "```python\ndef nothing():\n    pass\n```")
    assert (wrong.score.reward, wrong.terminated) == (0.0, False)
    right = environment.step(wrong.state, environment.expert_action(wrong.state))
    assert (right.score.reward, right.terminated) == (1.0, True)
