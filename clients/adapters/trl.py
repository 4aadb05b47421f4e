"""TRL: a ``reward_funcs`` entry that scores a whole generation batch with one service call,
and an ``environment_factory`` class for the service's multi-turn environments.

    from clients.adapters.trl import RemoteReward
    trainer = GRPOTrainer(model, reward_funcs=[RemoteReward(verifier="math")], ...)

TRL calls ``reward(prompts=..., completions=..., completion_ids=..., **columns)`` with every
dataset column except ``prompt`` as a keyword, one value per completion; async callables run
concurrently on TRL's event loop. A row's ``task_id`` names its task, so the reference never
leaves the server; a row without one is scored against its ``reference_column`` (TRL's examples
call it ``ground_truth``) by the verifier. A completion the service could not score
(``timeout``/``error``) gets ``None``, which TRL treats as unscorable (its advantage is 0) rather
than a reward of 0. So does a row with no usable reference: no task id and a missing reference
(``None``, ``NaN``: a column with gaps), or one the verifier cannot read (``bad_reference``);
the share of such rows in each batch is logged as ``<name>/bad_reference``. With ``run``, the
service counts each task id's outcome for that run's curriculum; with ``record``, every scored
completion is appended to a rollouts file that ``envserver reverify`` scores again.

A curriculum (``curriculum_dataset``): an endless iterable dataset whose prompts the service
draws by the run's measured pass rates, from an environment's tasks or from a dataset's rows:

    train = curriculum_dataset("math", run="grpo-7", dataset=rows_with_task_ids)
    trainer = GRPOTrainer(model, reward_funcs=[RemoteReward(run="grpo-7")],
                          train_dataset=train, args=GRPOConfig(max_steps=500, ...))
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clients.adapters.rows import bad_reference, missing, present_options
from clients.curriculum import TaskDraws
from clients.http import AsyncEnvServerClient, EnvServerClient
from clients.rollouts import RolloutLog
from clients.transitions import observation_text
from envserver.wire import Observation, VerifyResult

if TYPE_CHECKING:
    import datasets


def completion_text(completion: Any) -> str:
    """The text of a completion: a string, or (conversational format) the content of the last
    message of a list of chat messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion:
        last = completion[-1]
        if isinstance(last, Mapping):
            return str(last.get("content") or "")
    raise TypeError(f"cannot read a completion of type {type(completion).__name__}")


class RemoteReward:
    """An async TRL reward function backed by ``POST /v1/verify`` (one request per batch).

    ``__name__`` is what TRL logs (``rewards/<name>/mean``): ``envserver_<verifier>`` unless
    ``name`` is given.
    """

    def __init__(
        self,
        verifier: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        reference_column: str = "ground_truth",
        options: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        name: str | None = None,
        run: str | None = None,
        record: str | Path | None = None,
    ) -> None:
        self.verifier = verifier
        self.base_url = base_url
        self.api_key = api_key
        self.reference_column = reference_column
        self.options = dict(options or {})
        self.timeout_s = timeout_s
        self.__name__ = name or f"envserver_{verifier or 'task'}"
        self.run = run
        self.log = RolloutLog(record) if record is not None else None

    def _items(
        self, completions: Sequence[Any], columns: Mapping[str, Any]
    ) -> list[dict[str, Any] | None]:
        """Each completion's verify item: by the row's task id, else by its reference; None
        for a row with neither."""
        if "task_id" not in columns and self.verifier is None:
            raise ValueError("RemoteReward needs a verifier, or a 'task_id' column in the dataset")
        if "task_id" not in columns and self.reference_column not in columns:
            raise ValueError(f"the dataset has no '{self.reference_column}' column for references")
        rows = len(completions)
        task_ids = columns.get("task_id", [None] * rows)
        references = columns.get(self.reference_column, [None] * rows)
        items: list[dict[str, Any] | None] = []
        for completion, task_id, reference in zip(completions, task_ids, references, strict=True):
            text = completion_text(completion)
            if not missing(task_id):
                items.append({"response": text, "task_id": task_id})
            elif self.verifier is not None and not missing(reference):
                items.append({"response": text, "reference": reference})
            else:
                items.append(None)
        return items

    async def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] = (),
        completion_ids: Any = None,
        **columns: Any,
    ) -> list[float | None]:
        """Rewards in completion order; ``None`` where the service could not score."""
        items = self._items(completions, columns)
        sent = [item for item in items if item is not None]
        scored: list[VerifyResult] = []
        if sent:
            by_reference = any("reference" in item for item in sent)
            verifier = self.verifier if by_reference else None
            reply = await _async_client(self.base_url, self.api_key).verify(
                sent,
                verifier=verifier,
                options=self.options or None,
                timeout_s=self.timeout_s,
                run=self.run,
            )
            scored = reply.results
            if self.log is not None:
                self.log.write(sent, scored, verifier=verifier, options=self.options, run=self.run)
        answers = iter(scored)
        results = [next(answers) if item is not None else None for item in items]
        log_metric = columns.get("log_metric")
        if callable(log_metric) and results:
            unusable = sum(r is None or bad_reference(r) for r in results)
            log_metric(f"{self.__name__}/bad_reference", unusable / len(results))
        return [
            r.reward if r is not None and r.status in ("ok", "invalid") else None for r in results
        ]


# One client per process for resets (TRL calls ``reset`` synchronously) and one per event loop
# for tools and rewards (TRL awaits async tools on its own loop): concurrent rollouts share
# their connections.
_SYNC_CLIENTS: dict[tuple[str | None, str | None], EnvServerClient] = {}
_ASYNC_CLIENTS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str | None, str | None], AsyncEnvServerClient]
] = weakref.WeakKeyDictionary()


def _sync_client(base_url: str | None, api_key: str | None) -> EnvServerClient:
    if (base_url, api_key) not in _SYNC_CLIENTS:
        _SYNC_CLIENTS[base_url, api_key] = EnvServerClient(base_url, api_key=api_key)
    return _SYNC_CLIENTS[base_url, api_key]


def _async_client(base_url: str | None, api_key: str | None) -> AsyncEnvServerClient:
    clients = _ASYNC_CLIENTS.setdefault(asyncio.get_running_loop(), {})
    if (base_url, api_key) not in clients:
        clients[base_url, api_key] = AsyncEnvServerClient(base_url, api_key=api_key)
    return clients[base_url, api_key]


class RemoteEnvironment:
    """A TRL environment: one episode of a service environment per rollout.

        trainer = GRPOTrainer(..., environment_factory=environment_factory("math"))

    TRL calls ``reset(**row)`` with the dataset row and appends the returned text to the
    prompt; ``answer`` is the (async) tool the model calls to act; ``get_reward`` is summed into
    the reward. The row names its task: ``seed`` (with ``options``; options the datasets library
    filled with ``None`` are dropped) or ``task_id``. A row with neither is refused: TRL resets
    one environment per generation, so a random task per reset would give each of a prompt's
    G rollouts a different problem, and GRPO would compare their rewards as if they shared one.
    An episode the model ended without ever answering is scored by the service as an empty
    answer, so the environment's own rule for a missing answer decides its reward. An unscored
    step leaves the reward ``None``, never 0.
    """

    def __init__(
        self, env_id: str, *, base_url: str | None = None, api_key: str | None = None
    ) -> None:
        self.env_id = env_id
        self.base_url, self.api_key = base_url, api_key
        self._state: str | None = None
        self._reward: float | None = 0.0
        self._answered = False
        self.done = False

    def reset(self, **row: Any) -> str:
        """Start the episode the row names; the task text for the prompt."""
        seed, task_id = row.get("seed"), row.get("task_id")
        if missing(seed) and missing(task_id):
            columns = ", ".join(sorted(row)) or "none"
            raise ValueError(
                f"{self.env_id}: a row names its task with a 'seed' (and 'options') or a "
                f"'task_id' column, and this one has neither (its columns: {columns}); without "
                "one, each rollout of a prompt would get a different random task. Number the "
                "rows, e.g. dataset.map(lambda row, i: {'seed': i}, with_indices=True)"
            )
        episode = _sync_client(self.base_url, self.api_key).reset(
            self.env_id,
            seed=None if missing(seed) else seed,
            options=present_options(row.get("options")),
            task_id=None if missing(task_id) else task_id,
        )
        if episode.status != "ok" or episode.state is None:
            raise RuntimeError(f"{self.env_id} reset failed: {episode.status}: {episode.detail}")
        self._state, self._reward, self.done, self._answered = episode.state, 0.0, False, False
        return observation_text(episode.observation)

    async def _step(self, text: str) -> str:
        assert self._state is not None
        client = _async_client(self.base_url, self.api_key)
        step = await client.step(self.env_id, self._state, text)
        self._answered = True
        if step.reward is None:
            self._reward = None  # unscored: masked, not 0
        elif self._reward is not None:
            self._reward += step.reward
        self._state = step.state or self._state
        self.done = step.terminated or step.truncated
        feedback = observation_text(step.observation)
        return feedback or ("The episode has ended." if self.done else "")

    async def answer(self, text: str) -> str:
        """Submit an answer or action to the environment.

        Args:
            text: The answer or action, as the task asks for it.

        Returns:
            What the environment says back (feedback, the next observation, or that it ended).
        """
        if self._state is None or self.done:
            return "The episode has ended."
        return await self._step(text)

    async def get_reward(self) -> float | None:
        """The episode's summed reward (None if a step could not be scored); an episode never
        answered is first scored as an empty answer by the service."""
        if self._state is not None and not self._answered and not self.done:
            await self._step("")
        return self._reward


def environment_factory(env_id: str, **kwargs: Any) -> Callable[[], RemoteEnvironment]:
    """What TRL's ``environment_factory`` wants: a zero-argument constructor."""
    return lambda: RemoteEnvironment(env_id, **kwargs)


def _prompt(observation: Observation | None) -> str | list[dict[str, str]]:
    """An observation as TRL's prompt: text, or (a chat) its messages."""
    if isinstance(observation, list):
        return [message.model_dump() for message in observation]
    return observation or ""


def _curriculum_rows(
    *,
    env: str,
    run: str,
    dataset: datasets.Dataset | None,
    task_column: str,
    draws: dict[str, Any],
    base_url: str | None,
    api_key: str | None,
) -> Iterator[dict[str, Any]]:
    with EnvServerClient(base_url, api_key=api_key) as client:
        if dataset is not None:
            rows: dict[str, list[int]] = {}
            for index, task_id in enumerate(dataset[task_column]):
                rows.setdefault(task_id, []).append(index)
            turns = dict.fromkeys(rows, 0)
            for task_id in TaskDraws(client, env, run, tasks=list(rows), **draws):
                turn, turns[task_id] = turns[task_id], turns[task_id] + 1
                yield dataset[rows[task_id][turn % len(rows[task_id])]]  # shared ids take turns
            return
        source = TaskDraws(client, env, run, **draws)
        while True:
            task_ids = source.draw(source.batch)
            episodes = client.reset_batch(env, [{"task_id": t} for t in task_ids]).results
            for task_id, episode in zip(task_ids, episodes, strict=True):
                if episode.status != "ok":
                    raise RuntimeError(f"reset of {task_id} failed: {episode.detail}")
                yield {"prompt": _prompt(episode.observation), "task_id": task_id}


def curriculum_dataset(
    env: str,
    run: str,
    *,
    dataset: datasets.Dataset | None = None,
    task_column: str = "task_id",
    base_url: str | None = None,
    api_key: str | None = None,
    options: Mapping[str, Any] | None = None,
    target: float = 0.5,
    width: float = 0.2,
    explore: float = 0.1,
    batch: int = 64,
    seed: int | None = None,
) -> datasets.IterableDataset:
    """An endless ``datasets.IterableDataset`` of prompts the service's curriculum draws for
    ``run`` (give TRL ``max_steps``): rows of ``dataset`` (its ``task_column`` names each
    row's task id of ``env``), or, without one, ``{"prompt", "task_id"}`` rows of new and
    measured tasks of ``env`` with ``options`` (their prompts from resets). Score them with
    ``RemoteReward(run=run)``, which reads the ``task_id`` column, so the outcomes move the
    estimates the next draws use. ``target``, ``width``, ``explore``: the rule's
    (``envserver.curriculum``); ``batch``: task ids per request; ``seed``: repeatable draws."""
    import datasets  # noqa: PLC0415 - TRL's dependency, not the client's

    if dataset is not None and task_column not in dataset.column_names:
        raise ValueError(f"the dataset has no {task_column!r} column of task ids")
    draws = {
        "options": dict(options or {}), "target": target, "width": width,
        "explore": explore, "batch": batch, "seed": seed,
    }  # fmt: skip
    return datasets.IterableDataset.from_generator(
        _curriculum_rows,
        gen_kwargs={
            "env": env, "run": run, "dataset": dataset, "task_column": task_column,
            "draws": draws, "base_url": base_url, "api_key": api_key,
        },
    )  # fmt: skip
