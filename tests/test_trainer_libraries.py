"""The adapters driven by the trainers' own code (verl's config composition and reward manager,
OpenRLHF's multi-turn executor) against a live server. Skipped where the library is not
installed (the ``trainers`` extra and the Makefile's no-deps line install them)."""

from __future__ import annotations

import asyncio
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.server import ROOT

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


@pytest.mark.timeout(280)
def test_verl_own_config_and_reward_manager_call_the_service(base_url: str, tmp_path: Path) -> None:
    # The README's settings for verl 0.9, composed by verl's own Hydra config, loaded by its own
    # load_reward_manager, and run by its own reward manager as its reward loop does.
    config = _verl_config(
        [
            f"reward.custom_reward_function.path={ADAPTERS / 'verl.py'}",
            "reward.custom_reward_function.name=compute_score",
            f"+reward.custom_reward_function.reward_kwargs.url={base_url}",
            f"reward.sandbox_fusion.url={base_url}/run_code",
        ]
    )
    import torch
    from verl import DataProto
    from verl.trainer.ppo.reward import load_reward_manager

    tokenizer = _tokenizer(tmp_path)
    manager = load_reward_manager(config, tokenizer)
    responses = ["The answer is \\boxed{7}", "\\boxed{8}", "\\boxed{5}"]
    truths = [np.int64(7), "9", np.array(["4", "5"])]
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
    data = DataProto.from_dict(
        tensors={"prompts": prompt.repeat(3, 1), "responses": padded, "attention_mask": mask},
        non_tensors={
            "data_source": np.array(["openai/gsm8k", "lighteval/MATH", "aime2024"], dtype=object),
            "reward_model": np.array([{"ground_truth": t} for t in truths], dtype=object),
            "extra_info": np.array([{"index": i} for i in range(3)], dtype=object),
        },
    )

    async def reward_loop() -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(manager.run_single(data[i : i + 1]) for i in range(3))))

    results = manager.loop.run_until_complete(reward_loop())  # the loop verl gave it
    assert [r["reward_score"] for r in results] == [1.0, 0.0, 1.0]
    assert all(r["reward_extra_info"]["bad_reference"] == 0.0 for r in results)


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


def _openrlhf_executor(monkeypatch: pytest.MonkeyPatch, base_url: str) -> Any:
    pytest.importorskip("openrlhf.utils.agent")
    monkeypatch.setenv("ENVSERVER_URL", base_url)
    monkeypatch.setenv("ENVSERVER_ENV", "math")
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
    assert set(out["extra_logs"]) == {"valid", "bad_label", "correct"}
