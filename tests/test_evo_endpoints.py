"""The configured model endpoints of L3 (reviewer) and L4 (solver), against an
OpenAI-compatible chat-completions server on loopback that gives a set reply, and an endpoint
that does not answer (infrastructure: outcome error, never a rejection)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pydantic import SecretStr

from environments.evo.admission import admit
from environments.evo.seeds import seed_sources
from environments.evo.settings import EvoSettings
from tests.server import free_port

LIS = seed_sources()["lis"]


@dataclass
class Model:
    """A chat-completions server answering ``reply``; ``prompts`` records what it was asked."""

    url: str = ""
    reply: str = "VERDICT: PASS"
    prompts: list[str] = field(default_factory=list)


@pytest.fixture
def model() -> Iterator[Model]:
    state = Model()

    class Chat(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.prompts.append(body["messages"][0]["content"])
            data = json.dumps({"choices": [{"message": {"content": state.reply}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Chat)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield state
    server.shutdown()
    server.server_close()


def settings(reviewer: str = "", solver: str = "") -> EvoSettings:
    return EvoSettings(
        data_dir=Path(),
        store="sqlite://",
        reviewer_url=reviewer,
        solver_url=solver,
        model="judge",
        pass_band=(0.05, 0.95),
        solver_samples=2,
        # Given, so that no admission makes a key file in data_dir: the checkout, here.
        probe_secret=SecretStr("the endpoint tests' probe secret"),
    )


def test_the_model_reviewer_passes_and_rejects_at_l3(model: Model) -> None:
    admitted = admit(LIS, [], settings=settings(reviewer=model.url))
    assert admitted.outcome == "admitted"
    assert admitted.reports[2].detail == "passed the model and rules review"
    assert "SOURCE:" in model.prompts[0] and "def score" in model.prompts[0]
    model.reply = "The scorer checks more than the prompt says.\nVERDICT: FAIL: hidden constraint"
    rejected = admit(LIS, [], settings=settings(reviewer=model.url))
    assert (rejected.outcome, rejected.stage) == ("rejected", "L3")
    assert rejected.reason == "the model reviewer: hidden constraint"


def test_the_solver_endpoint_calibrates_l4(model: Model) -> None:
    model.reply = "I think it is <answer>1</answer>"  # never the longest run of 12+ values
    rejected = admit(LIS, [], settings=settings(solver=model.url))
    assert (rejected.outcome, rejected.stage) == ("rejected", "L4")
    assert "too hard" in rejected.reason
    assert len(model.prompts) == 2 * 5  # two samples at each of the five levels
    assert all("<answer>" in prompt for prompt in model.prompts)


def test_an_endpoint_that_does_not_answer_is_an_error_not_a_rejection() -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    admission = admit(LIS, [], settings=settings(reviewer=dead))
    assert (admission.outcome, admission.stage) == ("error", "L3")
    assert dead in admission.reason
