"""Task statistics across two replicas sharing one PostgreSQL database (``tests/
postgres_support.py``), the one EvoEnv's store lives in too: what one records, the other reads
and draws by; an episode started on one and finished on the other counts once; concurrent
writes on both lose nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from clients.http import EnvServerClient
from envserver.wire import CurriculumReport
from tests.conftest import make_server
from tests.math_support import expert_answer

WRONG = "I cannot tell."
FLUSH_S = 0.1


@pytest.fixture(scope="module")
def replicas(
    postgres_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[EnvServerClient, EnvServerClient]]:
    shared = {
        "ENVSERVER_STATS": "1",
        "ENVSERVER_STATS_STORE": postgres_url,
        "ENVSERVER_EVO_STORE": postgres_url,  # one database for both stores
        "ENVSERVER_STATS_FLUSH_S": str(FLUSH_S),
        "ENVSERVER_SECRET": "a-secret-the-replicas-share",
        "ENVSERVER_POOL_WORKERS": "1",
    }
    root = tmp_path_factory.mktemp("replicas")
    with (
        make_server(Path(root) / "a", **shared) as a,
        make_server(Path(root) / "b", **shared) as b,
        EnvServerClient(a.base_url) as first,
        EnvServerClient(b.base_url) as second,
    ):
        yield first, second


def _read(client: EnvServerClient, run: str, attempts: int) -> CurriculumReport:
    """The run's report once it holds ``attempts`` outcomes: another replica writes its own
    every ``FLUSH_S``; a few seconds is a failure."""
    deadline = time.monotonic() + 10
    while True:
        report = client.curriculum(run)
        if report.attempts >= attempts or time.monotonic() > deadline:
            return report
        time.sleep(FLUSH_S)


def test_what_one_replica_records_the_other_reads_and_draws_by(
    replicas: tuple[EnvServerClient, EnvServerClient],
) -> None:
    first, second = replicas
    items = [{"seed": 500 + i, "options": {"difficulty": "easy"}} for i in range(3)]
    tasks = [str(r.task_id) for r in first.reset_batch("math", items).results]
    run = "across-replicas"
    answers = [
        {"task_id": task, "response": expert_answer(task) if n < k else WRONG}
        for task, k in zip(tasks, (4, 2, 0), strict=True)
        for n in range(4)
    ]
    first.verify(answers, run=run)
    report = _read(second, run, 12)
    assert report.attempts == 12
    assert {t.task_id: t.successes for t in report.tasks} == dict(
        zip(tasks, (4.0, 2.0, 0.0), strict=True)
    )
    sample = second.curriculum_sample(
        {"env": "math", "run": run, "n": 3, "tasks": tasks, "explore": 0.0, "seed": 1}
    )
    assert sample.seen == 3 and sample.fresh == 0
    assert {(t.task_id, t.attempts) for t in sample.tasks} <= {(t, 4) for t in tasks}


def test_an_episode_begun_on_one_replica_and_ended_on_the_other_counts_once(
    replicas: tuple[EnvServerClient, EnvServerClient],
) -> None:
    first, second = replicas
    run = "episode-across"
    episode = first.reset("math", seed=77, options={"difficulty": "easy"}, run=run)
    task_id = str(episode.task_id)
    step = second.step("math", str(episode.state), expert_answer(task_id))
    assert step.terminated and step.reward == 1.0
    report = _read(first, run, 1)
    assert [(t.task_id, t.attempts, t.successes) for t in report.tasks] == [(task_id, 1, 1.0)]


def test_concurrent_writes_on_both_replicas_lose_nothing(
    replicas: tuple[EnvServerClient, EnvServerClient],
) -> None:
    first, second = replicas
    run = "concurrent"
    task_id = str(first.reset("math", seed=88, options={"difficulty": "easy"}).task_id)
    right = expert_answer(task_id)
    batch = [{"task_id": task_id, "response": right if i % 4 == 0 else WRONG} for i in range(20)]

    def send(client: EnvServerClient) -> None:
        for _ in range(5):
            client.verify(batch, run=run)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(send, [first, second, first, second]))
    report = _read(second, run, 400)
    assert report.attempts == 400
    assert report.tasks[0].successes == 100.0
