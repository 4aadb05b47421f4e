"""The trainers' own wire formats against a live server: OpenRLHF's remote reward protocol
(exactly the body it posts), TRL's reward-function call and verl's compute_score forms."""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import re

import httpx
import numpy as np
import pytest

from clients.adapters import trl as trl_adapter
from clients.adapters import verl as verl_adapter
from clients.adapters.trl import RemoteReward, completion_text, environment_factory
from clients.adapters.verl import (
    RewardUnavailable,
    UnknownDataSource,
    compute_score,
    compute_score_batch,
    compute_score_sync,
)
from environments.math.family import MathTaskOptions, MathTasks

PROMPT = "<|user|>What is 6 times 7?<|assistant|>"
CODE_LABEL = json.dumps(
    {"tests": {"kind": "call", "entry_point": "f", "items": [{"args": [2], "expected": 4}]}}
)


def _get_reward(
    base_url: str, verifier: str, body: dict[str, object], query: str = ""
) -> httpx.Response:
    return httpx.post(f"{base_url}/openrlhf/{verifier}/get_reward{query}", json=body, timeout=60)


def test_openrlhf_remote_reward_one_sample_as_it_sends_it(base_url: str) -> None:
    right = {"query": [PROMPT + "So it is \\boxed{42}</s>"], "prompts": [PROMPT], "labels": ["42"]}
    reply = _get_reward(base_url, "math", right)
    assert reply.status_code == 200, reply.text
    data = reply.json()
    assert data["rewards"] == [1.0] and data["scores"] == [1.0]
    assert data["extra_logs"]["valid"] == [1.0]
    wrong = {"query": [PROMPT + "\\boxed{41}"], "prompts": [PROMPT], "labels": ["42"]}
    assert _get_reward(base_url, "math", wrong).json()["rewards"] == [0.0]


def test_openrlhf_mini_batches_structured_labels_and_options(base_url: str) -> None:
    batch = {
        "query": ["p\\boxed{1}", "p\\boxed{2}", "p\\boxed{3}"],
        "prompts": ["p", "p", "p"],
        "labels": ["1", "5", "3"],
    }
    assert _get_reward(base_url, "math", batch).json()["rewards"] == [1.0, 0.0, 1.0]
    code = {"query": ["```python\ndef f(x):\n    return 2 * x\n```"], "labels": [CODE_LABEL]}
    data = _get_reward(base_url, "code", code).json()
    assert data["rewards"] == [1.0] and data["extra_logs"]["passed"] == [1.0]
    half = {
        "query": ["def f(x):\n    return x * x"],
        "labels": [
            CODE_LABEL.replace('"expected": 4}', '"expected": 4}, {"args": [3], "expected": 6}')
        ],
    }
    assert _get_reward(base_url, "code", half).json()["rewards"] == [0.5]
    assert _get_reward(base_url, "code", half, "?reward=all").json()["rewards"] == [0.0]


def test_openrlhf_refuses_what_it_cannot_score(base_url: str) -> None:
    one = {"query": ["x"], "labels": ["x"]}
    assert _get_reward(base_url, "nope", one).status_code == 404
    assert _get_reward(base_url, "math", {"query": ["x"], "labels": []}).status_code == 422
    assert _get_reward(base_url, "math", one, "?bogus=1").status_code == 422


def test_openrlhf_unscored_sample_is_nan_for_its_dynamic_filtering(base_url: str) -> None:
    # A sample the service could not score is never a made-up 0: its score is NaN (read by
    # Python's json, as OpenRLHF reads answers; its dynamic filtering drops the group) and the
    # answer's rewards null (OpenRLHF without it stops rather than train on a fake reward).
    crashed = _get_reward(base_url, "test.crash", {"query": ["crash"], "labels": ["x"]})
    assert crashed.status_code == 200, crashed.text
    assert '"scores":[NaN]' in crashed.text
    data = json.loads(crashed.text)
    assert data["rewards"] is None and math.isnan(data["scores"][0])
    assert data["extra_logs"] == {"valid": [0.0], "bad_label": [0.0], "unscored": [1.0]}


def test_openrlhf_mixed_batch_flags_bad_labels_and_keeps_the_good_rewards(base_url: str) -> None:
    # Unreadable labels are data errors: reward 0, flagged; the other samples keep theirs.
    batch = {
        "query": [PROMPT + "\\boxed{42}", PROMPT + "\\boxed{1}", PROMPT + "\\boxed{1}", PROMPT],
        "prompts": [PROMPT] * 4,
        "labels": ["42", "", "\\frac{", "7"],
    }
    reply = _get_reward(base_url, "math", batch)
    assert reply.status_code == 200, reply.text
    data = reply.json()
    assert data["rewards"] == [1.0, 0.0, 0.0, 0.0] == data["scores"]
    assert data["extra_logs"]["bad_label"] == [0.0, 1.0, 1.0, 0.0]
    assert data["extra_logs"]["valid"] == [1.0, 0.0, 0.0, 0.0]  # the last has no answer
    assert data["extra_logs"]["correct"] == [1.0, 0.0, 0.0, 0.0]
    # One sample per request, as OpenRLHF sends them: every answer logs the same keys.
    keys = set()
    for query, label in (("\\boxed{42}", "42"), ("no answer", "42"), ("\\boxed{1}", "")):
        one = _get_reward(base_url, "math", {"query": [query], "labels": [label]}).json()
        keys.add(frozenset(one["extra_logs"]))
    assert keys == {frozenset({"correct", "valid", "bad_label", "unscored"})}
    # A label that is not the JSON a structured verifier's references are: the same.
    code = {"query": ["```python\ndef f(x):\n    return 2 * x\n```"] * 2}
    reply = _get_reward(base_url, "code", {**code, "labels": ["not json", CODE_LABEL]})
    assert reply.json()["rewards"] == [0.0, 1.0]
    assert reply.json()["extra_logs"]["bad_label"] == [1.0, 0.0]
    # Every label bad: nothing to score, still an answer.
    reply = _get_reward(base_url, "math", {"query": ["a", "b"], "labels": ["", None]})
    assert reply.json()["rewards"] == [0.0, 0.0]
    # An infrastructure failure in the same batch is never a 0: NaN, and no rewards at all.
    mixed = {"query": ["ok", "crash", "x"], "labels": ["ok", "x", ""]}
    data = json.loads(_get_reward(base_url, "test.crash", mixed).text)
    assert data["rewards"] is None
    assert data["scores"][0] == 1.0 and math.isnan(data["scores"][1]) and data["scores"][2] == 0.0
    assert data["extra_logs"]["unscored"] == [0.0, 1.0, 0.0]
    assert data["extra_logs"]["bad_label"] == [0.0, 0.0, 1.0]


def test_trl_reward_function(base_url: str) -> None:
    reward = RemoteReward("math", base_url=base_url)
    assert reward.__name__ == "envserver_math"
    # TRL passes every dataset column but the prompt, plus its own extras.
    rewards = asyncio.run(
        reward(
            prompts=["q1", "q2", "q3"],
            completions=["\\boxed{2}", [{"role": "assistant", "content": "\\boxed{3}"}], "none"],
            completion_ids=[[1], [2], [3]],
            ground_truth=["2", "4", "5"],
            trainer_state=object(),
        )
    )
    assert rewards == [1.0, 0.0, 0.0]
    crash = RemoteReward("test.crash", base_url=base_url, name="crashy")
    assert crash.__name__ == "crashy"
    assert asyncio.run(crash(completions=["crash", "x"], ground_truth=["x", "x"])) == [None, 1.0]
    with pytest.raises(ValueError, match="ground_truth"):
        asyncio.run(reward(completions=["a"], answer=["a"]))
    with pytest.raises(TypeError):
        completion_text(42)


def test_trl_reward_function_rows_with_gaps(base_url: str) -> None:
    # A task_id column beside a ground_truth column, each with gaps, as the datasets library
    # gives them (None; pandas gives NaN): a row is scored by its task id, else its reference;
    # a row with neither usable is unscorable (None, which TRL masks), never a crash.
    datasets = pytest.importorskip("datasets")
    task = MathTasks().generate(3, MathTaskOptions())
    rows = datasets.Dataset.from_dict(
        {
            "task_id": [f"math@{MathTasks.version}/3", None, None, None],
            "ground_truth": [None, "4", None, ""],  # "": the server cannot read it
        }
    )
    logged: dict[str, float] = {}
    rewards = asyncio.run(
        RemoteReward("math", base_url=base_url)(
            completions=[MathTasks().expert_response(task), "\\boxed{4}", "a", "b", "c"],
            task_id=[*rows["task_id"], None],
            ground_truth=[*rows["ground_truth"], float("nan")],  # pandas' gap
            log_metric=logged.__setitem__,
        )
    )
    assert rewards == [1.0, 1.0, None, None, None]
    assert logged == {"envserver_math/bad_reference": 0.6}


def test_trl_reward_function_by_task_id(base_url: str) -> None:
    episode = httpx.post(f"{base_url}/v1/envs/math/reset", json={"seed": 3}).json()
    rewards = asyncio.run(
        RemoteReward(base_url=base_url)(completions=["\\boxed{0}"], task_id=[episode["task_id"]])
    )
    assert rewards in ([0.0], [1.0])


def _verify_requests(base_url: str) -> float:
    """How many ``POST /v1/verify`` requests the server has answered."""
    text = httpx.get(f"{base_url}/metrics").text
    pattern = r'envserver_http_requests_total\{[^}]*route="/v1/verify"[^}]*\} ([0-9.e+]+)'
    return sum(float(m) for m in re.findall(pattern, text))


def test_verl_compute_score_forms(base_url: str) -> None:
    one = compute_score_sync("openai/gsm8k", "#### \\boxed{18}", "18", url=base_url)
    assert one["score"] == 1.0
    assert asyncio.run(compute_score("openai/gsm8k", "\\boxed{18}", "18", url=base_url)) == one
    # The batch manager passes numpy object arrays.
    scores = compute_score_batch(
        data_sources=np.array(["lighteval/MATH", "lighteval/MATH", "code"], dtype=object),
        solution_strs=[
            "\\boxed{\\frac{1}{2}}",
            "\\boxed{3}",
            "```python\ndef f(x):\n    return 2 * x\n```",
        ],
        ground_truths=np.array(["0.5", "4", json.loads(CODE_LABEL)], dtype=object),
        extra_infos=np.array([{"index": 0}, None, {}], dtype=object),
        url=base_url,
    )
    assert [s["score"] for s in scores] == [1.0, 0.0, 1.0]
    assert scores[2]["passed"] == 1.0
    with pytest.raises(RewardUnavailable, match="error"):
        compute_score_sync("x", "crash", "x", url=base_url, verifier="test.crash")
    with pytest.raises(RewardUnavailable, match="error"):
        asyncio.run(compute_score("x", "crash", "x", url=base_url, verifier="test.crash"))


def test_verl_first_call_says_which_service_scores(
    base_url: str, capfd: pytest.CaptureFixture[str]
) -> None:
    verl_adapter._ANNOUNCED.clear()
    for _ in range(2):
        asyncio.run(compute_score("openai/gsm8k", "\\boxed{1}", "1", url=base_url))
    said = capfd.readouterr().err
    assert said.count(f"scoring with the service at {base_url}") == 1, said


def test_verl_results_carry_the_same_keys(base_url: str) -> None:
    # Right, wrong, no final answer (no components from the server), unusable ground truth, and
    # a code sample: verl stacks these dicts into columns, so every key must be in every dict.
    responses = ["\\boxed{4}", "\\boxed{5}", "I am not sure.", "\\boxed{1}", "print(2)"]
    truths: list[object] = ["4", "4", "4", "\\frac{", json.loads(CODE_LABEL)]
    sources = ["openai/gsm8k"] * 4 + ["codecontests"]
    scores = compute_score_batch(sources, responses, truths, None, url=base_url)
    keys = set(scores[0])
    assert all(set(score) == keys for score in scores), scores
    assert {"score", "bad_reference", "correct", "passed", "quality_ratio"} <= keys
    assert [s["score"] for s in scores] == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert [s["bad_reference"] for s in scores] == [0.0, 0.0, 0.0, 1.0, 0.0]
    assert scores[2]["correct"] == 0.0  # filled with the neutral value
    # The per-sample forms (verl's naive manager, the reward loop) give the same dicts.
    for source, response, truth, batched in zip(sources, responses, truths, scores, strict=True):
        assert compute_score_sync(source, response, truth, url=base_url) == batched
        assert asyncio.run(compute_score(source, response, truth, url=base_url)) == batched
    # A pinned verifier keeps only its own components.
    pinned = compute_score_batch(
        sources[:4], responses[:4], truths[:4], url=base_url, verifier="math"
    )
    assert all(set(score) == {"score", "bad_reference", "correct"} for score in pinned)
    chosen = compute_score_sync(
        "math", "\\boxed{4}", "4", url=base_url, components=["correct", "other"]
    )
    assert chosen == {"score": 1.0, "bad_reference": 0.0, "correct": 1.0, "other": 0.0}


DOUBLER = "```python\ndef double(x):\n    return 2 * x\n```"
ADDER = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
WRONG_ADDER = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"


@pytest.mark.parametrize("source", ["codecontests", "apps", "taco"])
def test_verl_code_datasets_rows_are_scored(base_url: str, source: str) -> None:
    # The rows verl's preprocessing writes: a JSON string of inputs and outputs (stdin style)
    # and, for call-style tasks, fn_name with each expected value wrapped in a list.
    stdin_truth = json.dumps({"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"]})
    call_truth = {"fn_name": "double", "inputs": [[2], [5]], "outputs": [[4], [10]]}
    # SandboxFusion's own dataset format for stdin tests.
    fusion_truth = [
        {"input": {"stdin": "1 2\n"}, "output": {"stdout": "3\n"}},
        {"input": {"stdin": "2 2\n"}, "output": {"stdout": "4\n"}},
    ]
    scores = compute_score_batch(
        [source] * 5,
        [ADDER, WRONG_ADDER, DOUBLER, ADDER, DOUBLER],
        np.array([stdin_truth, stdin_truth, call_truth, fusion_truth, stdin_truth], dtype=object),
        None,
        url=base_url,
    )
    assert [s["score"] for s in scores] == [1.0, 0.0, 1.0, 1.0, 0.0]
    assert [s["bad_reference"] for s in scores] == [0.0] * 5
    assert scores[0]["passed"] == 2.0
    one = asyncio.run(compute_score(source, ADDER, stdin_truth, url=base_url))
    assert one == scores[0]


def test_verl_numpy_values_lists_and_data_sources(base_url: str) -> None:
    # A numpy scalar ground truth (verl reads parquet into numpy) and a numpy array of
    # acceptable answers: the best of them counts.
    scores = compute_score_batch(
        ["openai/gsm8k"] * 3,
        ["\\boxed{18}", "\\boxed{0.5}", "\\boxed{7}"],
        np.array([np.int64(18), np.array(["1/2", "0.5"]), ["8", "9"]], dtype=object),
        None,
        url=base_url,
    )
    assert [s["score"] for s in scores] == [1.0, 1.0, 0.0]
    assert [s["bad_reference"] for s in scores] == [0.0, 0.0, 0.0]
    assert (
        asyncio.run(compute_score("aime2025", "\\boxed{18}", np.int64(18), url=base_url))["score"]
        == 1.0
    )
    # A data source no verifier covers: a clear error naming it and the fix, before any request.
    with pytest.raises(UnknownDataSource, match=r"'my/private_set'.*reward_kwargs\.verifier"):
        compute_score_sync("my/private_set", "\\boxed{1}", "1", url=base_url)
    with pytest.raises(UnknownDataSource, match="source_verifiers"):
        asyncio.run(compute_score("my/private_set", "\\boxed{1}", "1", url=base_url))
    mapped = compute_score_sync(
        "my/private_set",
        "\\boxed{1}",
        "1",
        url=base_url,
        source_verifiers={"my/private_set": "math"},
    )
    assert mapped["score"] == 1.0


def test_verl_concurrent_calls_share_requests(base_url: str) -> None:
    truths = [str(n) for n in range(24)]

    async def score_all() -> list[dict[str, float]]:
        return await asyncio.gather(
            *(compute_score("openai/gsm8k", f"\\boxed{{{t}}}", t, url=base_url) for t in truths)
        )

    before = _verify_requests(base_url)
    scores = asyncio.run(score_all())
    sent = _verify_requests(base_url) - before
    assert [s["score"] for s in scores] == [1.0] * len(truths)
    assert 1 <= sent <= 2, sent  # 24 samples awaited together: one request (two if split)


def test_trl_environment_drives_an_episode(base_url: str) -> None:
    make = environment_factory("math", base_url=base_url)
    env = make()
    # TRL exposes every public method but reset/get_reward as a tool: only ``answer`` here,
    # async so that TRL awaits it on its loop.
    public = {n for n in dir(env) if not n.startswith("_") and callable(getattr(env, n))}
    assert public == {"reset", "answer", "get_reward"}
    assert inspect.iscoroutinefunction(env.answer)
    task = MathTasks().generate(5, MathTaskOptions())

    async def play() -> tuple[str, float | None, str]:
        feedback = await env.answer("\\boxed{nothing}")
        await env.answer(MathTasks().expert_response(task))
        return feedback, await env.get_reward(), await env.answer("again")

    prompt = env.reset(seed=5, options={"max_attempts": 2})
    assert prompt
    feedback, reward, after = asyncio.run(play())
    assert feedback  # one attempt left, and the env says so
    assert env.done and reward == 1.0
    assert after == "The episode has ended."


def test_trl_environment_rows_from_a_datasets_dataset(base_url: str) -> None:
    # Rows that set different options: the datasets library gives every row every key, None
    # where a row had none, and the service refuses None as a value.
    datasets = pytest.importorskip("datasets")
    rows = datasets.Dataset.from_list(
        [
            {"prompt": "p", "seed": 1, "options": {"max_attempts": 2}},
            {"prompt": "p", "seed": 2, "options": {"difficulty": "easy"}},
        ]
    )
    assert rows[1]["options"] == {"max_attempts": None, "difficulty": "easy"}
    env = environment_factory("math", base_url=base_url)()
    for row in rows:
        assert env.reset(**row)


def test_trl_environment_refuses_a_row_that_names_no_task(base_url: str) -> None:
    # TRL resets one environment per generation: without a seed or task id, each of a prompt's
    # G rollouts would get another random problem. A row names its task, or is refused.
    datasets = pytest.importorskip("datasets")
    rows = datasets.Dataset.from_list([{"prompt": "p", "seed": None}, {"prompt": "p", "seed": 7}])
    make = environment_factory("math", base_url=base_url)
    with pytest.raises(ValueError, match=r"names its task with a 'seed'.*neither"):
        make().reset(**rows[0])
    with pytest.raises(ValueError, match="with_indices=True"):
        make().reset(prompt="p")
    group = [make() for _ in range(4)]
    prompts = {env.reset(**rows[1]) for env in group}
    assert len(prompts) == 1  # one task for the whole group


def _math_steps(base_url: str) -> float:
    """How many steps of math episodes the server has scored."""
    text = httpx.get(f"{base_url}/metrics").text
    pattern = r'envserver_items_total\{kind="step",status="\w+",target="math"\} (\S+)'
    return sum(float(m) for m in re.findall(pattern, text))


def test_trl_episode_never_answered_is_scored_by_the_service(base_url: str) -> None:
    # A rollout in which the model never calls the tool: the environment's own rule for a
    # missing answer decides, from the service (math: an empty answer is invalid, a real 0).
    env = environment_factory("math", base_url=base_url)()
    env.reset(seed=4, options={"max_attempts": 1})
    before = _math_steps(base_url)
    assert asyncio.run(env.get_reward()) == 0.0
    assert env.done
    assert _math_steps(base_url) == before + 1  # the service judged it
    # Concurrent rollouts share one client.
    envs = [environment_factory("math", base_url=base_url)() for _ in range(4)]
    for index, one in enumerate(envs):
        one.reset(seed=10 + index)

    async def rewards() -> tuple[list[float | None], int]:
        scored = await asyncio.gather(*(one.get_reward() for one in envs))
        return list(scored), len(trl_adapter._ASYNC_CLIENTS[asyncio.get_running_loop()])

    assert asyncio.run(rewards()) == ([0.0] * 4, 1)


def test_openrlhf_agent_plays_an_episode(base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    from clients.adapters import openrlhf_agent

    monkeypatch.setenv("ENVSERVER_URL", base_url)
    monkeypatch.setenv("ENVSERVER_ENV", "math")
    executor = openrlhf_agent.AgentExecutor()
    agent = executor.agent_instance_cls()
    task = MathTasks().generate(9, MathTaskOptions())
    task_id = "math@1/9?max_attempts=2"

    async def play() -> list[dict[str, object]]:
        await agent.reset({"observation": "prompt", "label": task_id})
        wrong = await agent.step(
            {"observation_text": "p", "action_text": "\\boxed{nothing}", "label": task_id}
        )
        right = await agent.step(
            {
                "observation_text": "p",
                "action_text": MathTasks().expert_response(task),
                "label": task_id,
            }
        )
        return [wrong, right]

    wrong, right = asyncio.run(play())
    assert not wrong["done"] and wrong["environment_feedback"]
    # Every step logs the same keys, so OpenRLHF can merge the samples' logs.
    keys = {"valid", "bad_label", "unscored", "correct"}
    assert set(wrong["extra_logs"]) == set(right["extra_logs"]) == keys  # type: ignore[arg-type]
    assert float(wrong["rewards"]) == 0.0  # type: ignore[arg-type]
    assert right["done"] and torch.equal(right["rewards"], torch.tensor(1.0))
    # A JSON label names the episode by seed and options instead; options the datasets
    # library filled with None are dropped.
    asyncio.run(agent.reset({"observation": "p", "label": json.dumps({"seed": 9})}))
    assert agent.state
    label = {"seed": 9, "options": {"max_attempts": 2, "difficulty": None}, "task_id": None}
    asyncio.run(agent.reset({"observation": "p", "label": label}))
    assert agent.state and agent.bad_label is None
