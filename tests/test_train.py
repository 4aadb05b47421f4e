"""The GRPO trainer: its loss math on fixed tensors, and a few real steps of a tiny randomly
initialised GPT-2 (built here, no downloads) against a live server."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server import ROOT

# The tests import torch and the trainer themselves: every xdist worker collects this file, and
# importing them at collection cost each worker seconds of CPU for tests it does not run.
if not all(importlib.util.find_spec(name) for name in ("torch", "transformers")):
    pytest.skip("the train extra is not installed", allow_module_level=True)


def test_group_advantages_normalise_within_groups_and_skip_invalid() -> None:
    import torch

    from clients.train.grpo import group_advantages

    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 5.0, 5.0, 5.0, 9.0])
    valid = torch.tensor([True, True, True, True, True, True, True, False])
    a = group_advantages(rewards, valid, group_size=4)
    first = a[:4]
    assert torch.allclose(first.sum(), torch.tensor(0.0), atol=1e-6)
    assert first[0] > 0 > first[1]
    # The invalid 9.0 takes no part: the rest of its group is equal, so no advantage at all.
    assert torch.equal(a[4:], torch.zeros(4))


def test_kl_is_zero_against_an_identical_reference_and_masks_remove_gradient() -> None:
    import torch

    from clients.train.grpo import grpo_loss

    logp = torch.randn(3, 5, requires_grad=True)
    mask = torch.ones(3, 5)
    parts = grpo_loss(logp, logp.detach(), logp.detach(), torch.tensor([1.0, -1.0, 0.5]), mask)
    assert parts.kl == 0.0 and parts.clipped == 0.0
    # Sample 1 is masked (an unscored item): its tokens get no gradient.
    masked = mask.clone()
    masked[1] = 0
    loss = grpo_loss(logp, logp.detach(), logp.detach(), torch.tensor([1.0, 5.0, 0.5]), masked).loss
    torch.autograd.backward(loss)
    assert logp.grad is not None
    assert torch.equal(logp.grad[1], torch.zeros(5)) and logp.grad[0].abs().sum() > 0


def test_the_surrogate_is_clipped_and_kl_grows_with_divergence() -> None:
    import torch

    from clients.train.grpo import grpo_loss

    old = torch.zeros(1, 4)
    far = torch.full((1, 4), 0.5)  # ratio e^0.5 > 1.2: clipped for a positive advantage
    parts = grpo_loss(far, old, old, torch.tensor([1.0]), torch.ones(1, 4), beta=0.1)
    assert parts.clipped == 1.0 and parts.kl > 0


@pytest.mark.timeout(240)
def test_grpo_steps_against_a_live_server(base_url: str, tmp_path: Path) -> None:
    from clients.train.tiny import tiny_model
    from clients.train.trainer import GRPOTrainer, TrainConfig

    model_dir = tmp_path / "tiny"
    tiny_model(model_dir)
    config = TrainConfig(
        model=str(model_dir),
        env="math",
        base_url=base_url,
        output_dir=str(tmp_path / "run"),
        steps=3,
        prompts_per_step=2,
        group_size=4,
        max_new_tokens=8,
        learning_rate=1e-3,
        beta=0.04,
        micro_batch_size=4,
        checkpoint_every=2,
    )
    history = GRPOTrainer(config).train()
    assert [m["step"] for m in history] == [1.0, 2.0, 3.0]
    assert history[0]["kl"] == pytest.approx(0.0, abs=1e-7)  # the policy is the reference at step 0
    assert history[-1]["kl"] > 0  # and has moved since
    assert all(m["masked"] == 0 for m in history)
    logged = [
        json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    ]
    assert [m["step"] for m in logged] == [1.0, 2.0, 3.0]
    assert (tmp_path / "run" / "curves.png").stat().st_size > 1000
    # Resumption: a new trainer on the same directory continues at step 3 and runs to 4.
    resumed = GRPOTrainer(TrainConfig(**{**config.__dict__, "steps": 4}))
    assert resumed.step == 3
    assert [m["step"] for m in resumed.train()] == [4.0]


@pytest.mark.timeout(240)
def test_multi_turn_episodes_train_on_model_tokens_only(base_url: str, tmp_path: Path) -> None:
    from clients.train.tiny import tiny_model
    from clients.train.trainer import GRPOTrainer, TrainConfig

    model_dir = tmp_path / "tiny"
    tiny_model(model_dir)
    config = TrainConfig(
        model=str(model_dir),
        env="math",
        env_options={"max_attempts": 2},
        max_turns=2,
        base_url=base_url,
        output_dir=str(tmp_path / "run"),
        steps=2,
        prompts_per_step=2,
        group_size=2,
        max_new_tokens=6,
    )
    trainer = GRPOTrainer(config)
    rollout = trainer._generate(0)
    assert rollout.scored is not None
    # A random model's first answer is wrong, so every episode got feedback and a second turn:
    # the environment's reply sits between the two turns and is not trained on.
    for row in rollout.loss_mask.tolist():
        first, last = row.index(1), len(row) - 1 - row[::-1].index(1)
        assert 0 in row[first:last], row
    history = trainer.train()
    assert [m["step"] for m in history] == [1.0, 2.0]


@pytest.mark.timeout(240)
def test_a_verifier_and_a_dataset_instead_of_an_environment(base_url: str, tmp_path: Path) -> None:
    from clients.train.tiny import tiny_model
    from clients.train.trainer import GRPOTrainer, TrainConfig

    model_dir = tmp_path / "tiny"
    tiny_model(model_dir)
    dataset = tmp_path / "data.jsonl"
    rows = [{"prompt": f"What is {a} + {a}?", "reference": str(2 * a)} for a in range(3)]
    dataset.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    config = TrainConfig(
        model=str(model_dir),
        verifier="math",
        dataset=str(dataset),
        base_url=base_url,
        output_dir=str(tmp_path / "run"),
        steps=2,
        prompts_per_step=2,
        group_size=2,
        max_new_tokens=4,
    )
    history = GRPOTrainer(config).train()
    assert [m["step"] for m in history] == [1.0, 2.0] and all(m["masked"] == 0 for m in history)
    with pytest.raises(ValueError, match="verifier"):
        GRPOTrainer(
            TrainConfig(model=str(model_dir), dataset=str(dataset), output_dir=str(tmp_path / "x"))
        )


def test_the_command_line(
    base_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clients.train.cli import main
    from clients.train.tiny import tiny_model

    tiny_model(tmp_path / "tiny")
    main(
        [
            "--model", str(tmp_path / "tiny"), "--url", base_url, "--env", "math",
            "--steps", "1", "--prompts-per-step", "1", "--group-size", "2",
            "--max-new-tokens", "3", "--output-dir", str(tmp_path / "run"), "--no-overlap",
        ]
    )  # fmt: skip
    assert "over 1 steps" in capsys.readouterr().out
    assert (tmp_path / "run" / "checkpoint" / "trainer_state.pt").exists()


@pytest.mark.timeout(240)
def test_the_cpu_smoke_command_needs_no_model(base_url: str, tmp_path: Path) -> None:
    # `envserver-train --model tiny`: a random model built from a config, nothing downloaded.
    run = tmp_path / "run"
    result = subprocess.run(
        [
            sys.executable, "-m", "clients.train.cli", "--model", "tiny", "--url", base_url,
            "--env", "math", "--steps", "2", "--prompts-per-step", "1", "--group-size", "2",
            "--max-new-tokens", "3", "--output-dir", str(run),
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=200, check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "over 2 steps" in result.stdout
    assert (run / "tiny-model" / "config.json").exists()
    assert (run / "curves.png").stat().st_size > 1000
