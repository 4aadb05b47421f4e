"""One error vocabulary (issue 39, item 2): every problem kind is a ``ProblemKind`` (the wire's,
used by server and clients alike), every exception the service answers with a problem is in one
table (``envserver.problems.PROBLEMS``), ``Overloaded`` is one class, the OpenAPI document lists
the kinds, and a batch answers per item: a finished episode is its item's problem, not a 409 for
the whole batch."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from clients.errors import ClientError, ItemRefusedError, kind_of
from clients.http import EnvServerClient
from clients.transitions import ensure_ok
from environments.base import (
    EnvironmentGone,
    EnvironmentInputError,
    EnvironmentUnavailable,
    EpisodeFinished,
)
from environments.task_id import TaskIdError
from envserver.app import create_app
from envserver.config import Settings
from envserver.executor import PoolUnavailable
from envserver.problems import PROBLEMS, problem_for
from envserver.registry import Disabled, UnknownEnvironment, UnknownVerifier
from envserver.tokens import TokenError
from envserver.wire import PROBLEM_BASE, ProblemKind, StepRequest
from sandbox.pool import Overloaded
from sandbox.runner import SandboxInputError
from tests.server import ROOT
from verifiers.base import Unavailable

PRODUCT = ("envserver", "environments", "verifiers", "sandbox", "clients")
WHY = Unavailable("no binary here", "install it")
MAKERS = {"Problem", "problem_response", "problem_body", "TokenError"}
"""What makes a problem (or says its kind, a token error)."""


def _product_sources() -> Iterator[tuple[Path, ast.Module]]:
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path, ast.parse(path.read_text(encoding="utf-8"))


def test_no_problem_kind_is_a_string_literal() -> None:
    # Every kind is a ProblemKind member, so mypy checks each one against the vocabulary; a
    # literal kind="..." given to a problem (or a token error), or compared with one, slips by.
    kinds = {kind.value for kind in ProblemKind}
    literals = []
    for path, tree in _product_sources():
        for node in ast.walk(tree):
            found: list[ast.expr] = []
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in MAKERS:
                found += [k.value for k in node.keywords if k.arg == "kind"]
                if getattr(node.func, "id", "") == "TokenError":
                    found += node.args[:1]
            if isinstance(node, ast.Compare) and getattr(node.left, "attr", "") == "kind":
                found += node.comparators
            literals += [
                f"{path.relative_to(ROOT)}:{kind.lineno}"
                for kind in found
                if isinstance(kind, ast.Constant) and kind.value in kinds
            ]
    assert literals == []


def test_overloaded_is_one_class() -> None:
    # The pool's queue and the sandbox's raise the same class, which the table answers with 429.
    defined = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path, tree in _product_sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name == "Overloaded"
    ]
    assert len(defined) == 1 and defined[0].startswith("sandbox/pool.py:"), defined


@pytest.mark.parametrize(
    ("raised", "status", "kind"),
    [
        (EpisodeFinished("over"), 409, ProblemKind.EPISODE_FINISHED),
        (EnvironmentInputError("no"), 400, ProblemKind.BAD_INPUT),
        (TaskIdError("bad id"), 400, ProblemKind.MALFORMED_TASK_ID),
        (TokenError(ProblemKind.MALFORMED_TOKEN, "garbled", forbidden=False), 400,
         ProblemKind.MALFORMED_TOKEN),
        (TokenError(ProblemKind.FOREIGN_TOKEN, "another's", forbidden=True), 403,
         ProblemKind.FOREIGN_TOKEN),
        (SandboxInputError("too much"), 422, ProblemKind.SANDBOX_INPUT),
        (UnknownEnvironment("which?"), 404, ProblemKind.UNKNOWN_ENVIRONMENT),
        (UnknownVerifier("which?"), 404, ProblemKind.UNKNOWN_VERIFIER),
        (EnvironmentGone("retired"), 410, ProblemKind.ENVIRONMENT_GONE),
        (Disabled("environment 'x'", WHY), 503, ProblemKind.ENVIRONMENT_UNAVAILABLE),
        (EnvironmentUnavailable(WHY), 503, ProblemKind.ENVIRONMENT_UNAVAILABLE),
        (Overloaded("9 waiting", 7), 429, ProblemKind.OVERLOADED),
        (PoolUnavailable("no worker", 3), 503, ProblemKind.UNAVAILABLE),
    ],
)  # fmt: skip
def test_one_table_maps_every_exception_to_its_problem(
    raised: Exception, status: int, kind: ProblemKind
) -> None:
    problem = problem_for(raised, "items.2.state")
    assert problem is not None
    assert (problem.status, problem.kind) == (status, kind)
    assert problem.detail.startswith("items.2.state: ") and str(raised) in problem.detail
    body = problem.body()
    assert (body["type"], body["kind"]) == (PROBLEM_BASE + kind, kind.value)
    if isinstance(raised, Overloaded | PoolUnavailable):
        assert problem.headers == {"Retry-After": str(raised.retry_after_s)}
    if kind == ProblemKind.ENVIRONMENT_UNAVAILABLE:
        assert (body["reason"], body["fix"]) == (WHY.reason, WHY.fix)


def test_what_the_table_lacks_is_a_bug_not_a_problem() -> None:
    assert problem_for(ValueError("a family's bug")) is None
    assert all(issubclass(cls, Exception) for cls in PROBLEMS)


@pytest.mark.parametrize(
    "raised", [Overloaded("the queue is full", 7), Disabled("env", WHY)], ids=type
)
def test_an_exception_of_the_table_that_a_route_lets_through_is_its_problem(
    raised: Exception, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(Settings(data_dir=tmp_path))

    @app.get("/raises")
    def raises() -> None:  # as a family route that lets its Overloaded through
        raise raised

    # The test client raises what reaches the catch-all (a bug's path): this must not.
    reply = TestClient(app).get("/raises")
    problem = problem_for(raised)
    assert problem is not None
    assert reply.status_code == problem.status and reply.json() == problem.body()
    assert all(reply.headers[name] == value for name, value in (problem.headers or {}).items())
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_a_kind_from_a_newer_server_stays_text() -> None:
    assert kind_of({"kind": "overloaded"}) is ProblemKind.OVERLOADED
    assert kind_of({"type": PROBLEM_BASE + "unknown-task"}) is ProblemKind.UNKNOWN_TASK
    assert kind_of({"type": PROBLEM_BASE + "brand-new-kind"}) == "brand-new-kind"


def test_the_openapi_document_lists_the_problem_kinds(tmp_path: Path) -> None:
    spec = create_app(Settings(data_dir=tmp_path)).openapi()
    schemas = spec["components"]["schemas"]
    assert schemas["ProblemKind"]["enum"] == [kind.value for kind in ProblemKind]
    kind = schemas["Problem"]["properties"]["kind"]
    assert {"$ref": "#/components/schemas/ProblemKind"} in kind["anyOf"]
    for reply in ("StepResponse", "ResetResponse", "VerifyResult"):
        problem = schemas[reply]["properties"]["problem"]
        assert {"$ref": "#/components/schemas/Problem"} in problem["anyOf"], reply


# --- over HTTP -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=60) as client:
        yield client


def _finished(http: httpx.Client) -> str:
    state = http.post("/v1/envs/math/reset", json={"seed": 1}).json()["state"]
    done = http.post("/v1/envs/math/step", json={"state": state, "action": "\\boxed{0}"}).json()
    assert done["terminated"]
    return str(done["state"])


def test_a_finished_episode_in_a_batch_is_its_items_problem(http: httpx.Client) -> None:
    finished = _finished(http)
    fresh = http.post("/v1/envs/math/reset", json={"seed": 2}).json()["state"]
    items = [{"state": finished, "action": "1"}, {"state": fresh, "action": "\\boxed{1}"}]
    reply = http.post("/v1/envs/math/step/batch", json={"items": items})
    assert reply.status_code == 200, reply.text
    refused, scored = reply.json()["results"]
    assert (refused["status"], refused["reward"], refused["state"]) == ("error", None, finished)
    problem = refused["problem"]
    assert (problem["status"], problem["kind"]) == (409, "episode-finished")
    assert problem["type"] == PROBLEM_BASE + "episode-finished"
    assert problem["detail"] == refused["detail"] and "ended" in problem["detail"]
    assert scored["status"] == "ok" and scored["reward"] is not None and scored["problem"] is None
    # Alone, the same step is the request's problem, as before.
    alone = http.post("/v1/envs/math/step", json=items[0])
    assert alone.status_code == 409 and alone.json()["kind"] == "episode-finished"


def test_a_request_level_problem_still_refuses_the_whole_batch(http: httpx.Client) -> None:
    fresh = http.post("/v1/envs/math/reset", json={"seed": 3}).json()["state"]
    items = [{"state": fresh, "action": "1"}, {"state": "not-a-token", "action": "1"}]
    reply = http.post("/v1/envs/math/step/batch", json={"items": items})
    assert reply.status_code == 400 and reply.json()["kind"] == "malformed-token"
    assert reply.json()["detail"].startswith("items.1.state: ")


def test_a_family_routes_http_error_has_a_typed_kind(http: httpx.Client) -> None:
    # The evo family's route raises FastAPI's HTTPException(404) for an id it does not know.
    reply = http.get("/v1/evo/submissions/no-such-submission")
    assert reply.status_code == 404
    assert reply.json()["kind"] == ProblemKind.NOT_FOUND
    assert http.get("/no/such/route").json()["kind"] == ProblemKind.NOT_FOUND
    assert http.get("/v1/envs/math/step").json()["kind"] == ProblemKind.METHOD_NOT_ALLOWED


def test_the_clients_raise_a_refused_item_as_a_client_error(base_url: str) -> None:
    with httpx.Client(base_url=base_url, timeout=60) as http:
        finished = _finished(http)
    with EnvServerClient(base_url) as client:
        fresh = client.reset("math", seed=4).state
        assert fresh is not None
        results = client.step_batch(
            "math", [StepRequest(state=finished, action="1"), StepRequest(state=fresh, action="1")]
        ).results
        with pytest.raises(ItemRefusedError) as caught:
            ensure_ok(results[0], index=0)
        ensure_ok(results[1], index=1)
        with pytest.raises(ClientError) as alone:
            client.step("math", finished, "1")
    refused = caught.value
    assert isinstance(refused, ClientError) and refused.index == 0
    assert (refused.status, refused.kind) == (409, ProblemKind.EPISODE_FINISHED)
    assert str(refused).startswith("HTTP 409 Conflict: item 0: ")
    assert alone.value.kind is ProblemKind.EPISODE_FINISHED
