"""The curriculum through the trainers' own code, against a live server keeping statistics:
TRL's GRPOTrainer on ``curriculum_dataset``, verl's dataset and dataloader with
``CurriculumSampler``, ``envserver-train --curriculum --eval-every`` and ``envserver eval`` on
the tiny model."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from clients.adapters.trl import RemoteReward, curriculum_dataset
from clients.cli import app
from clients.http import EnvServerClient
from tests.conftest import STATS_KEYS
from tests.server import ROOT, LiveServer

KEY = STATS_KEYS["alice"]


def _pool(stats_server: LiveServer, count: int, first_seed: int) -> list[str]:
    with EnvServerClient(stats_server.base_url, api_key=KEY) as client:
        items = [{"seed": first_seed + i, "options": {"difficulty": "easy"}} for i in range(count)]
        return [str(r.task_id) for r in client.reset_batch("math", items).results]


def _report(stats_server: LiveServer, run: str) -> Any:
    with EnvServerClient(stats_server.base_url, api_key=KEY) as client:
        return client.curriculum(run)


@pytest.mark.timeout(300)
def test_trl_trains_on_a_dataset_drawn_by_the_curriculum(
    stats_server: LiveServer, tmp_path: Path
) -> None:
    pytest.importorskip("torch")
    trl = pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    from clients.train.tiny import tiny_model

    pool = _pool(stats_server, 6, 4000)
    rows = datasets.Dataset.from_dict(
        {"prompt": [f"Task {i}: what is it?" for i in range(6)], "task_id": pool}
    )
    run = "trl-curriculum"
    train = curriculum_dataset(
        "math", run, dataset=rows, base_url=stats_server.base_url, api_key=KEY, batch=8, seed=1
    )
    first = list(train.take(8))
    assert {row["task_id"] for row in first} <= set(pool)
    assert {row["prompt"] for row in first} <= set(rows["prompt"])
    model_dir = tmp_path / "tiny"
    _, tokenizer = tiny_model(model_dir)
    record = tmp_path / "rollouts.jsonl"
    reward = RemoteReward(base_url=stats_server.base_url, api_key=KEY, run=run, record=record)
    config = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=4,
        max_steps=2,
        shuffle_dataset=False,  # the curriculum's draws are shuffled already
        use_cpu=True,
        bf16=False,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
    )
    trainer = trl.GRPOTrainer(
        model=str(model_dir),
        reward_funcs=[reward],
        args=config,
        train_dataset=train,
        processing_class=tokenizer,
    )
    trainer.train()
    scored = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(scored) == 8  # 2 steps x 2 prompts x 2 generations
    assert {row["task_id"] for row in scored} <= set(pool)
    assert all(row["run"] == run and row["scorer"].startswith("math@") for row in scored)
    report = _report(stats_server, run)
    assert report.attempts == 8
    assert {t.task_id for t in report.tasks} == {row["task_id"] for row in scored}


def test_trl_curriculum_without_a_dataset_draws_new_tasks_with_prompts(
    stats_server: LiveServer,
) -> None:
    pytest.importorskip("datasets")
    train = curriculum_dataset(
        "math", "trl-fresh", base_url=stats_server.base_url, api_key=KEY, batch=3,
        options={"difficulty": "hard"}, seed=2,
    )  # fmt: skip
    rows = list(train.take(5))
    assert len({row["task_id"] for row in rows}) == 5
    assert all("difficulty=hard" in row["task_id"] for row in rows)
    assert all(isinstance(row["prompt"], str) and row["prompt"] for row in rows)
    with pytest.raises(ValueError, match="no 'task_id' column"):
        datasets = pytest.importorskip("datasets")
        curriculum_dataset("math", "x", dataset=datasets.Dataset.from_dict({"prompt": ["a"]}))


def _verl_adapter() -> Any:
    """``clients/adapters/verl.py`` loaded by path, as verl loads a custom reward function."""
    spec = importlib.util.spec_from_file_location(
        "custom_reward", ROOT / "clients/adapters/verl.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(300)
def test_verl_dataloader_draws_rows_through_the_sampler(
    stats_server: LiveServer, tmp_path: Path
) -> None:
    pytest.importorskip("verl")
    from omegaconf import OmegaConf
    from torchdata.stateful_dataloader import StatefulDataLoader
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    from clients.adapters.verl_curriculum import CurriculumSampler, task_ids_of
    from clients.train.tiny import tiny_model

    pool = _pool(stats_server, 8, 5000)
    data = tmp_path / "train.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {
                    "data_source": "math",
                    "prompt": [{"role": "user", "content": f"Task {i}"}],
                    "reward_model": {"ground_truth": ""},
                    "extra_info": {"index": i, "task_id": task_id},
                }
            )
            + "\n"
            for i, task_id in enumerate(pool)
        )
    )
    _, tokenizer = tiny_model(tmp_path / "tiny")
    config = OmegaConf.create(
        {"prompt_key": "prompt", "filter_overlong_prompts": False, "cache_dir": str(tmp_path)}
    )
    dataset = RLHFDataset(data_files=[str(data)], tokenizer=tokenizer, config=config)
    assert task_ids_of(dataset) == pool
    run = "verl-curriculum"
    # One request per epoch here (batch 8): its draws are distinct while nothing is measured.
    sampler = CurriculumSampler(
        dataset, "math", run, url=stats_server.base_url, api_key=KEY, batch=8, seed=3
    )
    loader = StatefulDataLoader(dataset, batch_size=4, sampler=sampler, collate_fn=collate_fn)
    batches = list(loader)
    assert len(batches) == 2 and len(sampler) == 8
    drawn = [info["task_id"] for batch in batches for info in batch["extra_info"]]
    assert Counter(drawn) == Counter(pool)  # nothing measured: every row once per epoch
    # verl's reward function scores each row by its task id for the run.
    adapter = _verl_adapter()

    async def score() -> list[dict[str, float]]:
        calls = [
            adapter.compute_score(
                "math", "I do not know.", "", info, url=stats_server.base_url, api_key=KEY, run=run
            )
            for batch in batches
            for info in batch["extra_info"]
        ]
        return list(await asyncio.gather(*calls))

    assert [row["score"] for row in asyncio.run(score())] == [0.0] * 8
    report = _report(stats_server, run)
    assert report.attempts == 8 and report.total == 8
    datasets = pytest.importorskip("datasets")
    with pytest.raises(ValueError, match="row 0 has no extra_info"):
        task_ids_of(datasets.Dataset.from_dict({"extra_info": [{"index": 0}]}))
    with pytest.raises(ValueError, match="no extra_info column"):
        task_ids_of(datasets.Dataset.from_dict({"prompt": ["a"]}))


def test_the_builtin_trainer_with_a_curriculum_and_evaluations(
    stats_server: LiveServer, tmp_path: Path
) -> None:
    pytest.importorskip("torch")
    from clients.train.cli import main

    out = tmp_path / "run"
    main(
        [
            "--env", "math", "--model", "tiny", "--url", stats_server.base_url, "--api-key", KEY,
            "--env-options", '{"difficulty": "easy"}', "--curriculum", "--run", "builtin",
            "--steps", "2", "--prompts-per-step", "2", "--group-size", "2",
            "--max-new-tokens", "4", "--eval-every", "1", "--eval-tasks", "2", "--eval-k", "1,2",
            "--output-dir", str(out), "--checkpoint-every", "100",
        ]
    )  # fmt: skip
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert len(metrics) == 2
    assert all(0.0 <= m["eval_pass@1"] <= m["eval_pass@2"] <= 1.0 for m in metrics)
    evaluations = [json.loads(line) for line in (out / "eval.jsonl").read_text().splitlines()]
    assert [e["step"] for e in evaluations] == [1, 2]
    assert {row["tasks"] for e in evaluations for row in e["pass_at_k"]} == {2}
    assert (out / "eval-passk.png").stat().st_size > 1000
    report = _report(stats_server, "builtin")
    assert report.attempts == 8  # 2 steps x 2 prompts x 2 completions, each episode's end
    assert all("difficulty=easy" in t.task_id for t in report.tasks)


def test_envserver_eval_on_the_tiny_model(stats_server: LiveServer, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    args = [
        "eval", "--env", "math", "--model", "tiny", "--tasks", "3", "--k", "1,2",
        "--max-new-tokens", "4", "--output-dir", str(tmp_path), "--url", stats_server.base_url,
        "--api-key", KEY,
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "math: 3 held-out tasks, 2 samples each, 0 unscored" in result.output
    assert "95% CI (bootstrap)" in result.output
    saved = json.loads((tmp_path / "passk.json").read_text())
    assert {(row["group"], row["k"]) for row in saved["pass_at_k"]} == {
        (group, k) for group in ("easy", "medium", "hard", "all") for k in (1, 2)
    }
    assert (tmp_path / "passk.png").stat().st_size > 1000
    bad = CliRunner().invoke(app, [*args[:8], "0,x", *args[9:]])
    assert bad.exit_code == 2 and "positive integers" in bad.output
    multi = CliRunner().invoke(app, [*args[:2], "alfworld", *args[3:]])
    assert multi.exit_code == 2 and "multi-turn" in multi.output
