"""Statistics, the curriculum, stamps, reverify and pass@k through a live server keeping task
statistics (``stats_server``: SQLite, two API keys). Across replicas sharing PostgreSQL:
``tests/test_stats_replicas.py``; through TRL, verl and the built-in trainer:
``tests/test_curriculum_trainers.py``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from clients.adapters.trl import RemoteReward
from clients.cli import EXIT_DRIFT, app
from clients.errors import ClientError, UnavailableError
from clients.http import EnvServerClient
from clients.train.evaluate import evaluate, held_out_tasks
from envserver.wire import CurriculumReport, CurriculumSample
from tests.conftest import FIXTURES, STATS_KEYS
from tests.math_support import expert_answer
from tests.server import LiveServer

WRONG = "I cannot tell."  # no final answer: invalid, reward 0
DRIFT = FIXTURES / "reverify" / "math_580135c.jsonl"
DRIFTED = {"distant-boxes", "star", "bar", "arrow", "newline", "hedge", "subscript"}
"""The rows of ``DRIFT`` the math verifier paid 1 before 580135c and pays 0 now."""
OLD_DIGEST = "42937bf4f9fadff0"
"""The math family's digest at 580135c^ (``record_math_drift.py`` computed it from git)."""


@pytest.fixture(scope="module")
def alice(stats_server: LiveServer) -> Iterator[EnvServerClient]:
    with EnvServerClient(stats_server.base_url, api_key=STATS_KEYS["alice"]) as client:
        yield client


@pytest.fixture(scope="module")
def bob(stats_server: LiveServer) -> Iterator[EnvServerClient]:
    with EnvServerClient(stats_server.base_url, api_key=STATS_KEYS["bob"]) as client:
        yield client


def _tasks(client: EnvServerClient, count: int, first_seed: int) -> list[str]:
    items = [{"seed": first_seed + i, "options": {"difficulty": "easy"}} for i in range(count)]
    return [str(r.task_id) for r in client.reset_batch("math", items).results]


def test_results_say_who_scored_them_and_the_digest_of_that_code(
    alice: EnvServerClient, stats_server: LiveServer
) -> None:
    catalogue = alice.envs()
    math_verifier = next(v for v in catalogue.verifiers if v.name == "math")
    assert math_verifier.family == "math"
    stamp = f"math@{math_verifier.version}"
    task_id = _tasks(alice, 1, 10)[0]
    by_task = alice.verify([{"task_id": task_id, "response": expert_answer(task_id)}]).results[0]
    by_reference = alice.verify([{"response": "\\boxed{2}", "reference": "2"}], "math").results[0]
    episode = alice.reset("math", task_id=task_id)
    step = alice.step("math", str(episode.state), expert_answer(task_id))
    assert {by_task.scorer, by_reference.scorer, step.scorer} == {stamp}
    assert by_task.reward == step.reward == by_reference.reward == 1.0
    assert by_task.digest == by_reference.digest == step.digest
    assert len(by_task.digest) == 16 and int(by_task.digest, 16) >= 0
    metrics = httpx.get(
        f"{stats_server.base_url}/metrics",
        headers={"Authorization": f"Bearer {STATS_KEYS['alice']}"},
    ).text
    assert f'envserver_family_code_info{{digest="{by_task.digest}",family="math"}} 1.0' in metrics


def test_a_curriculum_run_draws_the_tasks_its_outcomes_put_near_the_target(
    alice: EnvServerClient,
) -> None:
    pool = _tasks(alice, 12, 1000)
    solved, hopeless, halfway = pool[:4], pool[4:8], pool[8:]
    run = "curriculum-run"
    first = alice.curriculum_sample(
        {"env": "math", "run": run, "n": 12, "tasks": pool, "explore": 0.0, "seed": 1}
    )
    assert sorted(t.task_id for t in first.tasks) == sorted(pool)  # nothing seen: each once
    assert all(t.fresh and t.attempts == 0 for t in first.tasks) and first.seen == 0
    items = []
    for task_id in pool:
        right = expert_answer(task_id)
        for sample in range(20):
            correct = task_id in solved or (task_id in halfway and sample % 2 == 0)
            items.append({"task_id": task_id, "response": right if correct else WRONG})
    results = alice.verify(items, run=run).results
    assert [r.reward for r in results] == [
        1.0 if item["response"] != WRONG else 0.0 for item in items
    ]
    report = alice.curriculum(run, "math")
    estimates = {t.task_id: t for t in report.tasks}
    assert report.total == 12 and report.attempts == 240
    assert {estimates[t].successes for t in solved} == {20.0}
    assert {estimates[t].successes for t in hopeless} == {0.0}
    assert {estimates[t].successes for t in halfway} == {10.0}
    assert estimates[halfway[0]].mean == pytest.approx(11 / 22)
    assert sum(b.tasks for b in report.histogram) == 12
    counts = [b.tasks for b in report.histogram]
    assert counts[0] == counts[9] == 4

    def share(among: list[str], **rule: float) -> float:
        request = {"env": "math", "run": run, "n": 4, "tasks": pool, "explore": 0.0, **rule}
        replies = [alice.curriculum_sample({**request, "seed": seed}) for seed in range(10)]
        assert all(r.seen == 12 and r.fresh == 0 for r in replies)
        drawn = [t.task_id for reply in replies for t in reply.tasks]
        return sum(t in among for t in drawn) / len(drawn)

    # A task solved half the time is near the target (a Beta(11, 11) posterior leaves the band
    # about one draw in 40); the solved and hopeless ones are far from it.
    assert share(halfway) >= 0.85
    # Centred elsewhere, the same outcomes draw the solved tasks.
    assert share(solved, target=0.95, width=0.05) >= 0.85


def test_new_seeds_fill_a_thin_pool_and_finished_episodes_count(alice: EnvServerClient) -> None:
    run = "generator-run"
    request = {"env": "math", "run": run, "n": 6, "options": {"difficulty": "hard"}, "seed": 4}
    first = alice.curriculum_sample(request)
    assert first.fresh == 6 and len({t.task_id for t in first.tasks}) == 6
    assert all("difficulty=hard" in t.task_id for t in first.tasks)
    # One episode per task, started for the run; the state token carries the run to its end.
    chosen = first.tasks[0].task_id
    for answer in (expert_answer(chosen), WRONG):
        episode = alice.reset("math", task_id=chosen, run=run)
        step = alice.step("math", str(episode.state), answer)
        assert step.terminated
    # An episode reset without a run is not counted, nor a verify without one.
    plain = alice.reset("math", task_id=chosen)
    alice.step("math", str(plain.state), expert_answer(chosen))
    alice.verify([{"task_id": chosen, "response": expert_answer(chosen)}])
    report = alice.curriculum(run)
    assert [(t.task_id, t.attempts, t.successes) for t in report.tasks] == [(chosen, 2, 1.0)]
    again = alice.curriculum_sample({**request, "seed": 5, "explore": 0.0})
    assert again.seen == 1 and again.fresh >= 5  # one seen task: the rest is new seeds
    # Another difficulty is another pool.
    easy = alice.curriculum_sample({**request, "options": {"difficulty": "easy"}})
    assert easy.seen == 0


def test_a_run_belongs_to_the_key_that_made_it(
    alice: EnvServerClient, bob: EnvServerClient
) -> None:
    task_id = _tasks(alice, 1, 2000)[0]
    alice.verify([{"task_id": task_id, "response": expert_answer(task_id)}], run="shared-name")
    assert alice.curriculum("shared-name").total == 1
    assert bob.curriculum("shared-name").total == 0
    sample = bob.curriculum_sample(
        {"env": "math", "run": "shared-name", "n": 1, "tasks": [task_id]}
    )
    assert sample.seen == 0 and sample.tasks[0].fresh


def _problem(client: EnvServerClient, request: dict[str, Any]) -> tuple[int | None, str]:
    with pytest.raises(ClientError) as raised:
        client.curriculum_sample(request)
    return raised.value.status, raised.value.kind


def _raw(stats_server: LiveServer, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(
        f"{stats_server.base_url}/v1/curriculum/sample",
        json=body,
        headers={"Authorization": f"Bearer {STATS_KEYS['alice']}"},
    )


@pytest.mark.parametrize(
    ("change", "status", "kind"),
    [
        ({"n": 0}, 422, "validation-error"),
        ({"n": 4097}, 422, "validation-error"),
        ({"target": 1.0}, 422, "validation-error"),
        ({"target": 0.0}, 422, "validation-error"),
        ({"width": 0.0}, 422, "validation-error"),
        ({"explore": 1.5}, 422, "validation-error"),
        ({"run": "has space"}, 422, "validation-error"),
        ({"run": ""}, 422, "validation-error"),
        ({"options": {"difficulty": "impossible"}}, 422, "invalid-options"),
        ({"options": {"difficulty": "easy"}, "tasks": ["math@1/1"]}, 422, "validation-error"),
        ({"env": "no-such-env"}, 404, "unknown-environment"),
        ({"env": "alfworld"}, 400, "not-single-turn"),
        ({"tasks": ["not a task id"]}, 400, "malformed-task-id"),
        ({"tasks": ["code@1/3"]}, 400, "foreign-task"),
    ],
)
def test_bad_requests_get_clear_problems(
    stats_server: LiveServer, change: dict[str, Any], status: int, kind: str
) -> None:
    body = {"env": "math", "run": "checked", "n": 2, **change}
    reply = _raw(stats_server, body)
    assert reply.status_code == status, reply.text
    assert reply.json()["type"].rsplit("/", 1)[-1] == kind
    if change.get("tasks") == ["not a task id"]:
        assert reply.json()["detail"].startswith("tasks.0: ")


def test_the_report_refuses_bad_arguments(alice: EnvServerClient) -> None:
    with pytest.raises(ClientError) as raised:
        alice.curriculum("x", env_id="no-such-env")
    assert raised.value.status == 404
    for bad in ("has space", "-leading"):
        with pytest.raises(ClientError) as raised:
            alice.curriculum(bad)
        assert raised.value.status == 422
    with pytest.raises(ClientError) as raised:
        alice.curriculum("x", limit=0)
    assert raised.value.status == 422


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for item in value.values() for k in _keys(item)}
    if isinstance(value, list):
        return {k for item in value for k in _keys(item)}
    return set()


SAMPLE_KEYS = {"env", "run", "tasks", "seen", "in_band", "fresh", "task_id", "attempts", "mean"}
REPORT_KEYS = {"run", "env", "total", "attempts", "tasks", "histogram", "task_id", "successes",
               "mean", "sd", "low", "high"}  # fmt: skip


def test_curriculum_replies_hold_task_ids_and_estimates_only(
    alice: EnvServerClient, stats_server: LiveServer
) -> None:
    """Red team: nothing of a task (its prompt, its reference, a hidden test) leaves the server
    through the curriculum routes, for every single-turn environment served: the replies hold
    task ids, counts and estimates, and no other text."""
    single_turn = [env.id for env in alice.envs().envs if env.kind == "single_turn"]
    assert {"math", "code"} <= set(single_turn)
    headers = {"Authorization": f"Bearer {STATS_KEYS['alice']}"}
    for env in single_turn:
        run = f"leak-{env.replace('/', '-')}"
        reply = _raw(stats_server, {"env": env, "run": run, "n": 3, "seed": 9})
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert _keys(body) <= SAMPLE_KEYS, env
        task_ids = [t["task_id"] for t in body["tasks"]]
        assert all(t.startswith(f"{env}@") for t in task_ids)
        assert set(_strings(body)) <= {env, run, *task_ids}, env
        # Outcomes recorded (wrong answers), then the report: still ids and numbers only.
        alice.verify([{"task_id": t, "response": WRONG} for t in task_ids], run=run)
        report = httpx.get(
            f"{stats_server.base_url}/v1/curriculum/{run}", params={"env": env}, headers=headers
        ).json()
        assert _keys(report) <= REPORT_KEYS, env
        assert set(_strings(report)) <= {env, run, *task_ids}, env
        assert report["total"] == 3
    assert CurriculumSample.model_fields.keys() | {"task_id", "attempts", "mean"} >= SAMPLE_KEYS
    assert set(CurriculumReport.model_fields) <= REPORT_KEYS


def test_a_server_without_statistics_says_how_to_keep_them(base_url: str) -> None:
    with EnvServerClient(base_url) as client:
        with pytest.raises(UnavailableError) as raised:
            client.curriculum_sample({"env": "math", "run": "r", "n": 1})
        assert "ENVSERVER_STATS=1" in raised.value.fix
        with pytest.raises(UnavailableError):
            client.curriculum("r")
        # A run on the scoring routes is accepted and ignored there.
        result = client.verify([{"response": "\\boxed{2}", "reference": "2"}], "math", run="r")
        assert result.results[0].reward == 1.0


def test_reverify_shows_exactly_the_drift_of_an_older_verifier(stats_server: LiveServer) -> None:
    runner = CliRunner()
    url = stats_server.base_url
    key = STATS_KEYS["alice"]
    result = runner.invoke(app, ["reverify", str(DRIFT), "--url", url, "--api-key", key, "--json"])
    assert result.exit_code == EXIT_DRIFT, result.output
    drift = json.loads(result.output)
    math = drift["families"]["math"]
    assert math["rows"] == 14 and math["changed"] == len(DRIFTED) and math["unscored"] == 0
    assert math["differing_digests"] == [OLD_DIGEST]
    assert math["digests_then"] == {OLD_DIGEST: 14}
    assert list(math["digests_now"]) != [OLD_DIGEST]
    rows = {json.loads(line)["id"]: line_no for line_no, line in enumerate(DRIFT.open(), 1)}
    changed = {change["id"] for change in drift["changes"]}
    assert changed == DRIFTED
    assert all(c["stored"] == 1.0 and c["now"] == 0.0 for c in drift["changes"])
    assert {c["line"] for c in drift["changes"]} == {rows[i] for i in DRIFTED}
    text = runner.invoke(app, ["reverify", str(DRIFT), "--url", url, "--api-key", key])
    assert f"stored {OLD_DIGEST} (14 rows) differ" in text.output
    assert "line " in text.output and "1 -> 0" in text.output


def test_rollouts_recorded_now_reverify_without_drift(
    stats_server: LiveServer, alice: EnvServerClient, tmp_path: Path
) -> None:
    path = tmp_path / "rollouts.jsonl"
    task_ids = _tasks(alice, 3, 3000)
    by_task = RemoteReward(
        base_url=stats_server.base_url, api_key=STATS_KEYS["alice"], record=path, run="recorded"
    )
    by_reference = RemoteReward(
        "math", base_url=stats_server.base_url, api_key=STATS_KEYS["alice"], record=path
    )

    async def score() -> None:
        answers = [expert_answer(t) for t in task_ids]
        await by_task(completions=[*answers, WRONG], task_id=[*task_ids, task_ids[0]])
        await by_reference(completions=["\\boxed{3}", "\\boxed{4}"], ground_truth=["3", "3"])

    asyncio.run(score())
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 6
    assert [r["reward"] for r in rows] == [1.0, 1.0, 1.0, 0.0, 1.0, 0.0]
    assert {r["scorer"] for r in rows} == {rows[0]["scorer"]}
    assert rows[0]["scorer"].startswith("math@")
    assert rows[0]["run"] == "recorded" and "run" not in rows[4]
    result = CliRunner().invoke(
        app,
        ["reverify", str(path), "--url", stats_server.base_url, "--api-key", STATS_KEYS["alice"]],
    )
    assert result.exit_code == 0, result.output
    assert "same as stored" in result.output
    assert alice.curriculum("recorded").attempts == 4  # the task-id rows, counted for the run


def test_reverify_refuses_a_file_that_is_not_rollouts(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"response": "x", "reward": 1.0}\n')
    result = CliRunner().invoke(app, ["reverify", str(path), "--url", "http://127.0.0.1:9"])
    assert result.exit_code == 2
    assert f"{path}:1" in result.output and "task_id, or a verifier" in result.output


def test_pass_at_k_through_the_service_matches_the_hand_computed_values(
    alice: EnvServerClient,
) -> None:
    tasks = held_out_tasks(alice, "math", 3, {"difficulty": "easy"}, group_by=None)
    assert len({t.task_id for t in tasks}) == 3
    correct_per_task = [2, 0, 4]  # of 4 samples each

    def generate(prompts: Any, n: int) -> list[list[str]]:
        assert n == 4 and len(prompts) == 3
        return [
            [expert_answer(task.task_id)] * right + [WRONG] * (n - right)
            for task, right in zip(tasks, correct_per_task, strict=True)
        ]

    rows, results = evaluate(alice, tasks, generate, [1, 2, 4])
    assert [r.correct for r in results] == correct_per_task
    values = {row.k: row.value for row in rows if row.group == "all"}
    # pass@1 = (2/4 + 0 + 1) / 3; pass@2 = ((1 - C(2,2)/C(4,2)) + 0 + 1) / 3 = (5/6 + 1) / 3;
    # pass@4 = (1 + 0 + 1) / 3.
    assert values[1] == pytest.approx(0.5)
    assert values[2] == pytest.approx(11 / 18)
    assert values[4] == pytest.approx(2 / 3)


def test_pass_at_k_groups_by_difficulty(alice: EnvServerClient) -> None:
    tasks = held_out_tasks(alice, "math", 6, None)
    assert [t.group for t in tasks] == ["easy", "medium", "hard"] * 2
    assert all(f"difficulty={t.group}" in t.task_id or t.group == "medium" for t in tasks)
    with pytest.raises(ValueError, match="multi-turn"):
        held_out_tasks(alice, "alfworld", 2)


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_no_input_makes_the_curriculum_routes_fail(stats_server: LiveServer, mode: str) -> None:
    """Schema-driven cases (schemathesis, from the server's OpenAPI document) against the
    curriculum routes of a server keeping statistics: every answer below 500, every error a
    problem document. (``tests/test_fuzz.py`` fuzzes every route of a server without them.)"""
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from schemathesis import GenerationMode

    headers = {"Authorization": f"Bearer {STATS_KEYS['bob']}"}
    schema = schemathesis.openapi.from_url(f"{stats_server.base_url}/openapi.json", headers=headers)
    operations = [
        result.ok()
        for result in schema.get_all_operations()
        if result.ok().path.startswith("/v1/curriculum")
    ]
    assert len(operations) == 2
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=GenerationMode(mode)))
        @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
        def call(case: Any) -> None:
            response = case.call(base_url=stats_server.base_url, headers=headers, timeout=60)
            assert response.status_code < 500 or response.status_code == 503, (
                case.as_curl_command(),
                response.text,
            )
            if response.status_code >= 400:
                assert response.headers["content-type"][0].startswith("application/problem+json")
                assert response.json()["detail"]

        call()
