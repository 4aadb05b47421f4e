"""``tamarin/proof`` when the prover cannot answer: ``expand`` gives a method the status ``step``
gives it, and a proof search from a failed reset reports it instead of failing."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from clients.http import EnvServerClient
from clients.proof_search import greedy, mcts
from environments.tamarin import FAMILY
from environments.tamarin.interactive import ExistingServer, InteractiveBackend
from environments.tamarin.provers import SHIPPED, Provers, provers
from envserver.wire import ResetResponse
from tests.tamarin_fake import ReplayServer, read_transcript

ENV = next(env for env in FAMILY.load().environments if env.spec.id == "tamarin/proof")
TRANSCRIPT = "tutorial_interactive_greedy.jsonl"


def _transcript() -> Any:
    """The recorded Tutorial transcript (the packaged one ships xz-compressed), wherever this
    process's recordings live."""
    for folder in provers().recordings:
        for suffix in ("", ".gz", ".xz"):
            if (folder / f"{TRANSCRIPT}{suffix}").is_file():
                return folder / f"{TRANSCRIPT}{suffix}"
    pytest.fail(f"no recording {TRANSCRIPT}: the package ships one")


def test_expand_and_step_agree_on_a_node_off_the_recording(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The interactive backend over a recorded Tamarin transcript (tests/tamarin_fake.py): a
    # method the recording never applied is a request the server cannot answer (404). step calls
    # that `error` (no verdict, state unchanged); expand must say the same, not `invalid`.
    transcript = _transcript()
    with ReplayServer(read_transcript(transcript)) as fake:
        configured = Provers("interactive", list(provers().recordings), [SHIPPED])
        backend = InteractiveBackend(ExistingServer(fake.base_url, "tamarin-prover 1.8.0"))
        configured.__dict__["live"] = backend  # the prover this process would have started
        monkeypatch.setattr(sys.modules[type(ENV).__module__], "provers", lambda: configured)
        try:
            options = ENV.spec.options_model(theory="Tutorial", lemma="Client_session_key_secrecy")
            state = ENV.reset(0, options).state
            (recorded,) = ENV.expand(state, ["1"])
            assert recorded.score.status == "ok" and recorded.branches
            stepped = ENV.step(state, "2")
            (expanded,) = ENV.expand(state, ["2"])
        finally:
            backend.close()
    assert (stepped.score.status, stepped.score.reward) == ("error", None)
    assert (expanded.score.status, expanded.score.reward) == ("error", None)
    assert expanded.score.detail == stepped.score.detail
    assert "has no /thy/" in expanded.score.detail and expanded.branches == ()


@pytest.mark.parametrize("search", [greedy, mcts])
def test_searches_from_a_failed_reset_report_it(search: Any) -> None:
    # A reset that timed out holds no state: the search says so instead of asserting.
    failed = ResetResponse(status="timeout", detail="the prover did not answer")
    result = search(EnvServerClient("http://127.0.0.1:9"), "tamarin/proof", failed)
    assert (result.found, result.calls) == (False, 0)
    assert result.detail == "the reset failed (timeout): the prover did not answer"
