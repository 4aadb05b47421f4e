"""TRL's own GRPOTrainer, with the service's reward function, on a tiny local model."""

from __future__ import annotations

from pathlib import Path

import pytest

from clients.adapters.trl import RemoteReward


@pytest.mark.timeout(240)
def test_trl_grpo_trainer_runs_with_the_service_reward(base_url: str, tmp_path: Path) -> None:
    # Imported here, not at collection: every xdist worker collects this file, and importing
    # TRL and torch cost each worker seconds of CPU for a test it does not run.
    pytest.importorskip("torch")
    trl = pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    from clients.train.tiny import tiny_model

    model_dir = tmp_path / "tiny"
    _, tokenizer = tiny_model(model_dir)
    # Columns with gaps, as datasets gives them: a row named by its task id (no reference), one
    # by its reference (no task id), one by neither (unscorable: None, which TRL masks). Each
    # step's batch holds the three prompts' generations.
    dataset = datasets.Dataset.from_dict(
        {
            "prompt": ["What is 1 + 2?", "What is 3 + 4?", "What is 5 + 6?"],
            "ground_truth": [None, "7", None],
            "task_id": ["math@1/3", None, None],
        }
    )
    config = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=12,
        num_generations=4,
        max_completion_length=6,
        max_steps=2,
        use_cpu=True,
        bf16=False,
        report_to="none",
        save_strategy="no",
        beta=0.04,
        logging_steps=1,
    )
    reward = RemoteReward("math", base_url=base_url)
    trainer = trl.GRPOTrainer(
        model=str(model_dir),
        reward_funcs=[reward],
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    logged = [
        entry for entry in trainer.state.log_history if "rewards/envserver_math/mean" in entry
    ]
    assert len(logged) == 2
    assert all(0.0 <= entry["rewards/envserver_math/mean"] <= 1.0 for entry in logged)
    # The reward function logged the share of rows without a usable reference: one in three.
    shares = [
        e["envserver_math/bad_reference"]
        for e in trainer.state.log_history
        if "envserver_math/bad_reference" in e
    ]
    assert shares == pytest.approx([1 / 3, 1 / 3]), trainer.state.log_history
