"""verl: a sampler for the training dataloader whose prompts the service's curriculum draws by
the run's measured pass rates (``envserver.curriculum``).

verl's ``RayPPOTrainer`` takes the sampler of its ``StatefulDataLoader`` as ``train_sampler``
(without one it builds a random or sequential one from ``data.shuffle``):

    from clients.adapters.verl_curriculum import CurriculumSampler
    sampler = CurriculumSampler(train_dataset, env="math", run="grpo-7", url=URL)
    trainer = RayPPOTrainer(config, ..., train_dataset=train_dataset, train_sampler=sampler)

and its reward function scores with the same run, so the outcomes reach the statistics the next
draws read: ``+reward.custom_reward_function.reward_kwargs.run=grpo-7`` (``clients/adapters/
verl.py``). Each row names its task in ``extra_info["task_id"]`` (a task id of ``env``, as a
reset or ``envserver`` export gives it); the sampler asks the service for the next ``batch``
task ids among the dataset's, and yields their rows' indices. An epoch is ``len(dataset)``
indices, as verl counts its steps.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence, Sized
from typing import Any

from torch.utils.data import Sampler

from clients.curriculum import TaskDraws
from clients.http import EnvServerClient


def task_ids_of(dataset: Any) -> list[str]:
    """Each row's ``extra_info["task_id"]`` of a verl ``RLHFDataset`` (read from its table,
    without tokenizing a row); raises ValueError naming the first row without one."""
    table = getattr(dataset, "dataframe", dataset)
    infos = table["extra_info"] if "extra_info" in getattr(table, "column_names", ()) else None
    if infos is None:
        raise ValueError("the dataset has no extra_info column naming each row's task_id")
    task_ids = []
    for index, info in enumerate(infos):
        task_id = info.get("task_id") if isinstance(info, Mapping) else None
        if not isinstance(task_id, str) or not task_id:
            raise ValueError(f"row {index} has no extra_info['task_id']")
        task_ids.append(task_id)
    return task_ids


class CurriculumSampler(Sampler[int]):
    """Indices of ``data_source`` rows drawn through the service's curriculum for ``run``
    (see the module docstring). ``task_ids``: each row's task id (default: read from the
    rows' ``extra_info``); ``target``, ``width``, ``explore``: the rule's; ``batch``: task ids
    per request; ``seed``: repeatable draws. Rows that share a task id take turns."""

    def __init__(
        self,
        data_source: Sized,
        env: str,
        run: str,
        *,
        task_ids: Sequence[str] | None = None,
        url: str | None = None,
        api_key: str | None = None,
        target: float = 0.5,
        width: float = 0.2,
        explore: float = 0.1,
        batch: int = 256,
        seed: int | None = None,
    ) -> None:
        self.size = len(data_source)
        ids = list(task_ids) if task_ids is not None else task_ids_of(data_source)
        if len(ids) != self.size:
            raise ValueError(f"{len(ids)} task ids for {self.size} rows")
        self.rows: dict[str, list[int]] = {}
        for index, task_id in enumerate(ids):
            self.rows.setdefault(task_id, []).append(index)
        self.env, self.run, self.url, self.api_key = env, run, url, api_key
        self.draws: dict[str, Any] = {
            "target": target, "width": width, "explore": explore, "batch": batch, "seed": seed,
        }  # fmt: skip
        self._turns = dict.fromkeys(self.rows, 0)
        self._epochs = 0

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[int]:
        draws = dict(self.draws)
        if draws["seed"] is not None:  # each epoch draws anew, repeatably
            draws["seed"] += self._epochs * 1_000_003
        self._epochs += 1
        with EnvServerClient(self.url, api_key=self.api_key) as client:
            source = TaskDraws(client, self.env, self.run, tasks=list(self.rows), **draws)
            given = 0
            while given < self.size:
                for task_id in source.draw(min(source.batch, self.size - given)):
                    indices = self.rows[task_id]
                    turn = self._turns[task_id]
                    self._turns[task_id] = turn + 1
                    yield indices[turn % len(indices)]
                    given += 1
