"""The adapters driven by the trainers' own code (verl's config composition and reward managers,
OpenRLHF's executors and sample generator) against a live server. Skipped where the library is
not installed (the ``trainers`` extra and the Makefile's no-deps line install them)."""

from __future__ import annotations

import asyncio
import importlib.util
import math
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from tests.conftest import make_server
from tests.server import ROOT, LiveServer

ADAPTERS = ROOT / "clients" / "adapters"


def _tokenizer(tmp_path: Path) -> Any:
    pytest.importorskip("torch")
    from clients.train.tiny import tiny_model

    return tiny_model(tmp_path / "tiny")[1]


def _verl_config(overrides: list[str]) -> Any:
    verl = pytest.importorskip("verl")
    from hydra import compose, initialize_config_dir

    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


def _verl_batch(tokenizer: Any, sources: list[str], responses: list[str], truths: list[Any]) -> Any:
    """A batch as verl's rollout hands it to a reward manager: one prompt, the responses
    right-padded, the rows' data source, ground truth and extra info."""
    import torch
    from verl import DataProto

    prompt = tokenizer("What is 3 + 4?", return_tensors="pt")["input_ids"]
    encoded = [tokenizer(r, return_tensors="pt")["input_ids"][0] for r in responses]
    width = max(len(e) for e in encoded)
    padded = torch.stack(
        [torch.cat([e, torch.full((width - len(e),), tokenizer.pad_token_id)]) for e in encoded]
    )
    mask = torch.stack(
        [
            torch.cat([torch.ones(prompt.shape[1] + len(e)), torch.zeros(width - len(e))])
            for e in encoded
        ]
    ).long()
    rows = len(responses)
    return DataProto.from_dict(
        tensors={"prompts": prompt.repeat(rows, 1), "responses": padded, "attention_mask": mask},
        non_tensors={
            "data_source": np.array(sources, dtype=object),
            "reward_model": np.array([{"ground_truth": t} for t in truths], dtype=object),
            "extra_info": np.array([{"index": i} for i in range(rows)], dtype=object),
        },
    )


def _verl_manager(base_url: str, tmp_path: Path, manager: str, function: str) -> Any:
    """verl's own reward manager ``manager``, loaded by its ``load_reward_manager`` from its own
    Hydra config with the README's settings, calling the adapter's ``function``."""
    config = _verl_config(
        [
            f"reward.custom_reward_function.path={ADAPTERS / 'verl.py'}",
            f"reward.custom_reward_function.name={function}",
            f"+reward.custom_reward_function.reward_kwargs.url={base_url}",
            f"reward.sandbox_fusion.url={base_url}/run_code",
            f"reward.reward_manager.name={manager}",
            "reward.num_workers=1",
        ]
    )
    from verl.trainer.ppo.reward import load_reward_manager

    return load_reward_manager(config, _tokenizer(tmp_path))


def _run_loop(manager: Any, data: Any) -> list[dict[str, Any]]:
    """The reward loop: every sample's ``run_single`` awaited together, on the loop verl gave
    the manager."""

    async def loop() -> list[dict[str, Any]]:
        singles = (manager.run_single(data[i : i + 1]) for i in range(len(data)))
        return list(await asyncio.gather(*singles))

    results: list[dict[str, Any]] = manager.loop.run_until_complete(loop())
    return results


# Each manager of verl 0.9.1's reward loop that can await: the README's table names the async
# compute_score for them (remote cannot await; it is tested on a Ray cluster, test_ray_serve.py).
LOOP_MANAGERS = ("naive", "dapo", "gdpo", "rate_limited")


@pytest.mark.timeout(280)
@pytest.mark.parametrize("manager", LOOP_MANAGERS)
def test_verl_reward_managers_call_the_service(base_url: str, tmp_path: Path, manager: str) -> None:
    # Ground truths as verl's parquet rows hold them, gaps included: a column with gaps gives
    # None (or NaN through pandas), scored like an empty one: 0, flagged bad_reference.
    from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls

    loaded = _verl_manager(base_url, tmp_path, manager, "compute_score")
    assert isinstance(loaded, get_reward_manager_cls(manager))
    sources = ["openai/gsm8k", "lighteval/MATH", "aime2024"] + ["openai/gsm8k"] * 3
    responses = [
        "The answer is \\boxed{7}",
        "\\boxed{8}",
        "\\boxed{5}",
        "\\boxed{1}",
        "\\boxed{1}",
        "1",
    ]
    truths = [np.int64(7), "9", np.array(["4", "5"]), None, np.nan, ""]
    data = _verl_batch(loaded.tokenizer, sources, responses, truths)
    results = _run_loop(loaded, data)
    assert [r["reward_score"] for r in results] == [1.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    flags = [r["reward_extra_info"]["bad_reference"] for r in results]
    assert flags == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]


def test_verl_reward_manager_never_turns_an_unscored_sample_into_0(
    base_url: str, tmp_path: Path
) -> None:
    # verl cannot mask a sample: the adapter raises, and verl's loop stops, rather than train on
    # a made-up 0 (data source "test.raise": a verifier that always fails).
    loaded = _verl_manager(base_url, tmp_path, "naive", "compute_score")
    data = _verl_batch(loaded.tokenizer, ["test.raise"], ["1"], ["1"])
    with pytest.raises(RuntimeError, match="sample 0: error"):
        _run_loop(loaded, data)
    # Except verl's `rate_limited` manager, which catches every exception of the function it calls
    # and scores 0 itself (flagged "error"): the README says so.
    limited = _verl_manager(base_url, tmp_path, "rate_limited", "compute_score")
    (result,) = _run_loop(limited, data)
    assert result["reward_score"] == 0.0
    assert "sample 0: error" in result["reward_extra_info"]["error"]


def test_verl_settings_before_0_9_do_not_compose_on_0_9() -> None:
    # What the README showed before: verl 0.9 refuses it at composition (reward_model.* moved).
    errors = pytest.importorskip("hydra.errors")

    with pytest.raises(
        errors.ConfigCompositionException, match=r"reward_model\.sandbox_fusion\.url"
    ):
        _verl_config(["reward_model.sandbox_fusion.url=http://127.0.0.1:1/run_code"])


@dataclass
class _Output:
    token_ids: list[int]
    text: str
    finish_reason: str = "stop"
    logprobs: Any = None


@dataclass
class _Request:
    outputs: list[_Output]


@dataclass
class _ScriptedEngine:
    """Stands in for vLLM (not under test): answers each turn with the next scripted text."""

    tokenizer: Any
    turns: list[str]
    prompts: list[list[int]] = field(default_factory=list)

    async def generate(self, prompt_ids: list[int], params: Any, **_: Any) -> _Request:
        self.prompts.append(prompt_ids)
        text = self.turns[min(len(self.prompts) - 1, len(self.turns) - 1)]
        return _Request([_Output(self.tokenizer(text)["input_ids"], text)])


@dataclass
class _Sampling:
    max_tokens: int | None = 64
    logprobs: int | None = None


def _openrlhf_executor(monkeypatch: pytest.MonkeyPatch, base_url: str, env_id: str = "math") -> Any:
    pytest.importorskip("openrlhf.utils.agent")
    monkeypatch.setenv("ENVSERVER_URL", base_url)
    monkeypatch.setenv("ENVSERVER_ENV", env_id)
    # How OpenRLHF loads --train.agent_func_path (its loader module also imports vLLM).
    spec = importlib.util.spec_from_file_location("agent_module", ADAPTERS / "openrlhf_agent.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.AgentExecutor()


@pytest.mark.parametrize("label", ["math@1/not-a-seed", "{not json", "[1, 2]"])
def test_openrlhf_multi_turn_bad_label_is_flagged_and_scores_0(
    base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, label: str
) -> None:
    executor = _openrlhf_executor(monkeypatch, base_url)
    tokenizer = _tokenizer(tmp_path)
    engine = _ScriptedEngine(tokenizer, ["\\boxed{1}"])
    out = asyncio.run(executor.execute("What is 1?", label, _Sampling(), 256, tokenizer, engine))
    assert out["reward"] == 0.0
    assert float(out["extra_logs"]["bad_label"]) == 1.0
    assert len(engine.prompts) == 1  # the episode ended at its first step


def test_openrlhf_multi_turn_episode_through_its_executor(
    base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from environments.math.family import MathTaskOptions, MathTasks

    executor = _openrlhf_executor(monkeypatch, base_url)
    tokenizer = _tokenizer(tmp_path)
    task = MathTasks().generate(9, MathTaskOptions())
    engine = _ScriptedEngine(tokenizer, ["\\boxed{nothing}", MathTasks().expert_response(task)])
    label = "math@1/9?max_attempts=2"
    out = asyncio.run(executor.execute("p", label, _Sampling(), 512, tokenizer, engine))
    assert out["reward"] == 1.0 and len(engine.prompts) == 2
    assert set(out["extra_logs"]) == {"valid", "bad_label", "unscored", "correct"}


def test_openrlhf_multi_turn_labels_from_a_datasets_struct_column(
    base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A label column of dicts that set different keys: the datasets library gives every row
    # every key, None where a row had none (options included); the agent drops those.
    datasets = pytest.importorskip("datasets")
    from environments.math.family import MathTaskOptions, MathTasks

    rows = datasets.Dataset.from_list(
        [
            {"label": {"seed": 9, "options": {"max_attempts": 2}}},
            {"label": {"seed": 9, "options": {"difficulty": "easy"}}},
            {"label": {"task_id": "math@1/9"}},
        ]
    )
    assert rows[0]["label"] == {
        "seed": 9,
        "options": {"max_attempts": 2, "difficulty": None},
        "task_id": None,
    }
    executor = _openrlhf_executor(monkeypatch, base_url)
    tokenizer = _tokenizer(tmp_path)
    expert = MathTasks().expert_response(MathTasks().generate(9, MathTaskOptions()))
    easy = MathTasks().generate(9, MathTaskOptions(difficulty="easy"))
    for row, answer in zip(rows, [expert, MathTasks().expert_response(easy), expert], strict=True):
        engine = _ScriptedEngine(tokenizer, [answer])
        out = asyncio.run(executor.execute("p", row["label"], _Sampling(), 512, tokenizer, engine))
        assert (out["reward"], float(out["extra_logs"]["bad_label"])) == (1.0, 0.0), row
    # A label without a seed or a task id would give each sample of the prompt another random
    # task: it names no episode.
    engine = _ScriptedEngine(tokenizer, [expert])
    label = {"seed": None, "options": {"max_attempts": 2}}
    out = asyncio.run(executor.execute("p", label, _Sampling(), 512, tokenizer, engine))
    assert (out["reward"], float(out["extra_logs"]["bad_label"])) == (0.0, 1.0)


# --- what OpenRLHF does with a sample the service could not score -----------------------------


@pytest.fixture(scope="module")
def unscorable_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server that also serves ``test.unscorable`` (tests/plugins/unscorable.py)."""
    plugins = "tests.plugins.faulty,tests.plugins.unscorable"
    server: LiveServer = make_server(
        tmp_path_factory.mktemp("unscorable"), ENVSERVER_PLUGINS=plugins
    )
    with server:
        yield server.base_url


def _samples_generator(monkeypatch: pytest.MonkeyPatch) -> Any:
    """OpenRLHF's ``samples_generator`` module. It imports vLLM (a GPU package, absent here)
    for names the code under test does not use; those come from a stand-in module."""
    pytest.importorskip("openrlhf.utils.agent")
    if "vllm" not in sys.modules and importlib.util.find_spec("vllm") is None:
        vllm = types.ModuleType("vllm")
        vllm.SamplingParams = _Sampling  # type: ignore[attr-defined]
        inputs, utils = types.ModuleType("vllm.inputs"), types.ModuleType("vllm.utils")
        inputs.TokensPrompt = dict  # type: ignore[attr-defined]
        utils.random_uuid = lambda: "0"  # type: ignore[attr-defined]
        for name, module in (("vllm", vllm), ("vllm.inputs", inputs), ("vllm.utils", utils)):
            monkeypatch.setitem(sys.modules, name, module)
    from openrlhf.trainer.ppo_utils import samples_generator

    return samples_generator


GROUP = 4  # samples per prompt (--rollout.n_samples_per_prompt)


def _generate(
    monkeypatch: pytest.MonkeyPatch,
    executor: Any,
    prompts: list[tuple[str, Any, list[str]]],
    tokenizer: Any,
    *,
    filtering: bool,
) -> list[Any]:
    """OpenRLHF's ``SamplesGenerator._generate_vllm`` over ``prompts`` (prompt, label, the
    group's scripted responses), two at a time, each group played by ``executor`` as its
    vLLM actor's ``generate_responses`` does. Ray, which carries the groups between actors,
    hands them over in order (``ray.wait`` and ``ray.get`` on plain values)."""
    generator_module = _samples_generator(monkeypatch)
    monkeypatch.setattr(
        generator_module,
        "ray",
        types.SimpleNamespace(wait=lambda refs, **_: (refs[:1], refs[1:]), get=lambda ref: ref),
    )
    args = types.SimpleNamespace(
        algo=types.SimpleNamespace(dynamic_filtering_range=(0.0, 1.0)),
        rollout=types.SimpleNamespace(n_samples_per_prompt=GROUP),
    )
    generator = generator_module.SamplesGenerator(
        types.SimpleNamespace(args=args), None, None, tokenizer, []
    )
    scripts = {prompt: responses for prompt, _, responses in prompts}

    async def group(prompt: str, label: Any) -> list[dict[str, Any]]:
        runs = (
            executor.execute(prompt, label, _Sampling(), 256, tokenizer, engine)
            for engine in (_ScriptedEngine(tokenizer, [text]) for text in scripts[prompt])
        )
        return list(await asyncio.gather(*runs))

    def dispatch(batch: list[str], labels: list[Any], **_: Any) -> list[Any]:
        return [asyncio.run(group(*call)) for call in zip(batch, labels, strict=True)]

    monkeypatch.setattr(generator, "_dispatch_prompts_to_vllm", dispatch)
    loader = iter([(None, [prompt], [label], [None]) for prompt, label, _ in prompts])
    experiences, _, _ = generator._generate_vllm(loader, 2, dynamic_filtering=filtering)
    return list(experiences)


def _route_requests(base_url: str) -> float:
    text = httpx.get(f"{base_url}/metrics").text
    route = re.escape('route="/openrlhf/{verifier}/get_reward"')
    return sum(
        float(m)
        for m in re.findall(rf"envserver_http_requests_total\{{[^}}]*{route}[^}}]*\}} (\S+)", text)
    )


def test_openrlhf_drops_the_group_of_an_unscored_sample_with_dynamic_filtering(
    unscorable_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The single-turn route through OpenRLHF's own executor, which posts each sample to it.
    from openrlhf.trainer.ppo_utils.experience import Experience
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    executor = SingleTurnAgentExecutor(f"{unscorable_url}/openrlhf/test.unscorable/get_reward")
    tokenizer = _tokenizer(tmp_path)
    prompts = [
        ("A", "1", ["1", "unscorable", "1", "0"]),  # one sample the service cannot score
        ("B", "2", ["2", "0", "2", "2"]),
        ("C", "3", ["3", "3", "0", "0"]),  # drawn in A's place
    ]
    before = _route_requests(unscorable_url)
    kept = _generate(monkeypatch, executor, prompts, tokenizer, filtering=True)
    assert [e.prompts[0] for e in kept] == ["B"] * GROUP + ["C"] * GROUP
    assert [float(e.rewards[0]) for e in kept] == [1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    assert all(float(e.info["unscored"][0]) == 0.0 for e in kept)
    Experience.concat_experiences(kept, pad_token_id=0)  # the batch trains
    # One request per sample: the unscored one was answered at once, not retried.
    assert _route_requests(unscorable_url) - before == 3 * GROUP
    # Without dynamic filtering OpenRLHF has nothing to skip with: the batch stops there
    # instead of training on a made-up reward.
    every = _generate(monkeypatch, executor, prompts[:2], tokenizer, filtering=False)
    assert [e.rewards is None for e in every] == [False, True, False, False] + [False] * GROUP
    assert math.isnan(float(every[1].scores[0]))
    with pytest.raises((TypeError, ValueError, AttributeError)):
        Experience.concat_experiences(every, pad_token_id=0)


def test_openrlhf_agent_drops_the_group_of_an_unscored_episode_with_dynamic_filtering(
    unscorable_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The multi-turn agent through OpenRLHF's own executor: the same for an episode.
    executor = _openrlhf_executor(monkeypatch, unscorable_url, "test.unscorable")
    tokenizer = _tokenizer(tmp_path)
    prompts = [
        ("A", '{"seed": 1}', ["1", "unscorable", "1", "0"]),
        ("B", '{"seed": 2}', ["2", "0", "2", "2"]),
        ("C", '{"seed": 3}', ["3", "3", "0", "0"]),
    ]
    kept = _generate(monkeypatch, executor, prompts, tokenizer, filtering=True)
    assert [e.prompts[0] for e in kept] == ["B"] * GROUP + ["C"] * GROUP
    assert [float(e.rewards[0]) for e in kept] == [1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    every = _generate(monkeypatch, executor, prompts[:1], tokenizer, filtering=False)
    assert [e.rewards is None for e in every] == [False, True, False, False]
    assert float(every[1].info["unscored"][0]) == 1.0
