"""The ``tamarin/proof`` environment on the replay backend (recorded real Tamarin 1.8.0), in
process and over HTTP, and the MCTS client against greedy search."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from clients.http import EnvServerClient
from clients.proof_search import MCTSConfig, greedy, mcts
from environments.base import (
    EnvironmentInputError,
    EnvironmentUnavailable,
    EpisodeFinished,
    Expansion,
    StepResult,
)
from environments.datafiles import open_text
from environments.tamarin import episode
from environments.tamarin.family import ProofOptions, TamarinProofEnv
from environments.tamarin.model import NotRecorded
from environments.tamarin.provers import RECORDINGS, provers
from environments.tamarin.replay import ReplayBackend
from tests.conftest import TAMARIN_BATCH
from verifiers.tamarin.proof import ProofTree, parse_proof, render_proof
from verifiers.tamarin.prover import find_prover
from verifiers.tamarin.script import lemma_proof
from verifiers.tamarin.theory import parse_theory

ENV = TamarinProofEnv()
ENV_ID = "tamarin/proof"
TUTORIAL = ("Client_session_key_secrecy", "Client_auth", "Client_auth_injective")
# Method applications of the recorded greedy proofs of the all-traces lemmas (reference §10.2:
# every branch must be closed, so the walk is the whole proof), and the NSLPK3 figures of §3.3.
GREEDY_SIZES = {
    ("Tutorial", "Client_session_key_secrecy"): 5,
    ("Tutorial", "Client_auth"): 11,
    ("Tutorial", "Client_auth_injective"): 15,
    ("Minimal_Loop_Example", "Start_before_Loop"): 8,
    ("Minimal_Loop_Example", "Start_before_Stop"): 4,
    ("Minimal_Loop_Example", "Loop_before_Stop"): 9,
    ("Minimal_Loop_Example", "Stop_unique"): 12,
    ("KeyRenegotiation_Minimal", "secrecy"): 23,
    ("NSLPK3", "types"): 33,
    ("NSLPK3", "nonce_secrecy"): 54,
    ("NSLPK3", "injective_agree"): 92,
}
EXISTS_TRACE = {
    ("Tutorial", "Client_session_key_honest_setup"),
    ("Minimal_Loop_Example", "Satisfied_by_empty_trace_only"),
    ("KeyRenegotiation_Minimal", "Secret_reachable"),
    ("NSLPK3", "session_key_setup_possible"),
}


def reset(theory: str = "Tutorial", lemma: str = "Client_auth", **options: Any) -> Any:
    return ENV.reset(0, ProofOptions(theory=theory, lemma=lemma, **options))


def walk(state: Any, actions: Iterator[str] | None = None) -> StepResult:
    """Step until the episode ends, choosing method 1 unless ``actions`` says otherwise."""
    while True:
        result = ENV.step(state, next(actions, "1") if actions else "1")
        assert result.score.status == "ok", result.score
        if result.terminated or result.truncated:
            return result
        state = result.state


def recorded_sources(theory: str) -> list[str]:
    name = {"Tutorial": "tutorial"}[theory]
    with open_text(RECORDINGS / f"{name}_interactive_greedy.jsonl.xz") as lines:
        return [r["body"] for r in map(json.loads, lines) if r["path"].endswith("/source")]


# --- episodes --------------------------------------------------------------------------------


def test_every_recorded_lemma_is_servable() -> None:
    assert set(provers().servable()) == set(GREEDY_SIZES) | EXISTS_TRACE


@pytest.mark.parametrize(("theory", "lemma"), sorted(GREEDY_SIZES))
def test_greedy_episodes_reproduce_the_recorded_proofs(theory: str, lemma: str) -> None:
    first = reset(theory, lemma)
    assert first.info["backend"] == "replay" and first.info["quantifier"] == "all-traces"
    last = walk(first.state)
    assert last.terminated and last.score.reward == 1.0
    assert last.info["outcome"] == "verified"
    assert last.info["proof_size"] == GREEDY_SIZES[theory, lemma]
    assert last.score.metrics == {"proof_size": float(GREEDY_SIZES[theory, lemma])}


@pytest.mark.parametrize(("theory", "lemma"), sorted(EXISTS_TRACE))
def test_exists_trace_lemmas_end_at_the_first_trace(theory: str, lemma: str) -> None:
    last = walk(reset(theory, lemma).state)
    assert last.info["quantifier"] == "exists-trace"
    assert last.info["outcome"] == "trace_found" and last.score.reward == 1.0
    assert "SOLVED // trace found" in last.info["proof"]


@pytest.mark.parametrize("lemma", TUTORIAL)
def test_rendered_proofs_match_the_scripts_tamarin_printed(lemma: str) -> None:
    last = walk(reset("Tutorial", lemma).state)
    printed = [lemma_proof(source, lemma) for source in recorded_sources("Tutorial")]
    finished = [tree for tree in printed if tree is not None and tree.is_complete]
    assert finished, "the recording printed this lemma's proof"
    assert parse_proof(last.info["proof"]) == finished[0]
    assert episode.to_proof_tree(last.state["proof"]) == finished[0]


def test_the_complete_batch_script_is_the_greedy_proof_of_client_auth() -> None:
    complete = (TAMARIN_BATCH / "Tutorial_complete.spthy").read_text()
    recorded = lemma_proof(complete, "Client_auth")
    assert isinstance(recorded, ProofTree)
    assert walk(reset().state).info["proof"] == render_proof(recorded)


def test_methods_can_be_named_by_text_with_any_spacing() -> None:
    first = reset()
    assert [m["text"] for m in first.info["methods"]] == ["simplify", "induction"]
    after = ENV.step(first.state, "simplify")
    goal = after.info["methods"][0]["text"]
    assert goal == "solve( Client_1( S, k ) ▶₀ #i )"
    assert after.info["methods"][0]["goal_kind"] == "premise"
    by_text = ENV.step(after.state, "solve(Client_1(S,k)▶₀#i)")
    by_rank = ENV.step(after.state, "1")
    assert by_text.state == by_rank.state and by_text.info["path"] == ["", "Client_1"]


def test_observation_shows_system_methods_and_explanations() -> None:
    after = ENV.step(reset().state, "1")
    assert "Constraint system:" in after.observation
    assert "1. solve( Client_1( S, k ) ▶₀ #i )  // nr. 2 (from rule Client_2)" in (
        after.observation
    )
    assert after.info["valid_actions"] == ["1", "2"]


@pytest.mark.parametrize("action", ["", "0", "3", "99", "solve( nothing )", "x" * 10_000])
def test_invalid_actions_change_nothing_but_the_step_count(action: str) -> None:
    first = reset()
    result = ENV.step(first.state, action)
    assert result.score.status == "invalid" and result.score.reward == 0.0
    assert result.state == {**first.state, "steps": 1}
    assert not result.terminated


def test_the_step_limit_truncates() -> None:
    result = walk(reset(max_steps=2).state)
    assert result.truncated and not result.terminated and result.info["steps"] == 2


def test_size_penalty_shapes_the_final_reward() -> None:
    last = walk(reset("Tutorial", "Client_session_key_secrecy", size_penalty=0.1).state)
    assert last.score.reward == pytest.approx(0.5)


def test_a_finished_episode_cannot_be_stepped_or_expanded() -> None:
    last = walk(reset("Tutorial", "Client_session_key_secrecy").state)
    with pytest.raises(EpisodeFinished):
        ENV.step(last.state, "1")
    with pytest.raises(EpisodeFinished):
        ENV.expand(last.state)


def test_off_the_recording_is_an_error_without_a_reward() -> None:
    # The recording's budget ran out below the root: search down for a method never applied.
    frontier: list[Any] = [reset().state]
    failed: list[Expansion] = []
    while not failed:
        state = frontier.pop(0)
        expansions = ENV.expand(state)
        failed = [e for e in expansions if e.score.status == "error"]
        frontier += [b.state for e in expansions for b in e.branches if not b.terminated]
    result = ENV.step(state, failed[0].action)
    assert result.score.status == "error" and result.score.reward is None
    assert "never applied" in result.score.detail
    assert result.state == state


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"theory": "Nope"}, "unknown theory 'Nope'"),
        ({"theory": "Tutorial", "lemma": "nope"}, "has no lemma 'nope'"),
        ({"source": "hello"}, "not a Tamarin theory"),
        (
            {"source": 'theory T begin\nheuristic: o "./x"\nlemma a: "F"\nend'},
            "oracle heuristics",
        ),
        ({"source": 'theory T begin\n#include "/etc/passwd"\nlemma a: "F"\nend'}, "#include"),
    ],
)
def test_bad_resets_say_what_is_wrong(options: dict[str, Any], message: str) -> None:
    with pytest.raises(EnvironmentInputError, match=message):
        ENV.reset(0, ProofOptions(**options))


@pytest.mark.skipif(find_prover() is not None, reason="a prover here can serve any theory")
def test_a_theory_only_a_prover_could_serve_is_the_servers_limit_not_the_callers() -> None:
    with pytest.raises(EnvironmentUnavailable, match="no Tamarin prover") as raised:
        ENV.reset(0, ProofOptions(source='theory Fresh begin\nlemma a: "F"\nend'))
    assert "install Tamarin" in raised.value.why.fix


@pytest.mark.skipif(find_prover() is not None, reason="a prover here serves every theory")
def test_a_reset_lists_only_the_theories_this_server_can_serve() -> None:
    # Shipped theories without a recording need the prover: listed, each would answer 503.
    listed = ENV.reset(0, ProofOptions()).info["theories"]
    assert set(listed) == set(ReplayBackend([RECORDINGS]).recorded)
    for theory in listed:
        assert ENV.reset(0, ProofOptions(theory=theory)).state
    for theory in set(provers().theories) - set(listed):
        with pytest.raises(EnvironmentUnavailable, match="no Tamarin prover"):
            ENV.reset(0, ProofOptions(theory=theory))


# A false lemma under a recorded theory's name (the red-team suite's case): the recording proved
# Start_before_Stop in four steps, leaning on a reuse lemma this text lacks, and those steps
# must never prove this text.
FALSE_UNDER_A_RECORDED_NAME = (
    "theory Minimal_Loop_Example begin\n"
    "rule Start: [ Fr(x) ] --[ Start(x) ]-> [ A(x) ]\n"
    "rule Loop: [ A(x) ] --[ Loop(x) ]-> [ A(x) ]\n"
    "rule Stop: [ A(x) ] --[ Stop(x) ]-> [ ]\n"
    'lemma Start_before_Stop: all-traces "All x #j. Stop(x) @ j ==> Ex #i. Start(x) @ i & j < i"\n'
    "end\n"
)


def test_replay_serves_a_recorded_theory_by_its_text_not_its_name() -> None:
    backend = ReplayBackend([RECORDINGS])
    recorded = provers().theories["Minimal_Loop_Example"]
    assert backend.serves(recorded)
    for text in (FALSE_UNDER_A_RECORDED_NAME, recorded.text + "\n", " " + recorded.text):
        assert not backend.serves(parse_theory(text))
        with pytest.raises(NotRecorded, match="not a recorded text"):
            backend.lemmas(parse_theory(text))


@pytest.mark.skipif(find_prover() is not None, reason="a prover here serves any source")
def test_a_source_under_a_recorded_name_needs_the_prover() -> None:
    with pytest.raises(EnvironmentUnavailable, match="byte for byte") as raised:
        ENV.reset(0, ProofOptions(source=FALSE_UNDER_A_RECORDED_NAME, lemma="Start_before_Stop"))
    assert "install Tamarin" in raised.value.why.fix
    # The recorded text itself, sent as a source, is the recorded theory and replays.
    recorded = provers().theories["Minimal_Loop_Example"].text
    first = ENV.reset(0, ProofOptions(source=recorded, lemma="Start_before_Stop"))
    assert first.info["backend"] == "replay" and walk(first.state).score.reward == 1.0


def test_states_of_another_prover_or_theory_are_refused() -> None:
    state = reset().state
    with pytest.raises(EnvironmentInputError, match="this server runs"):
        ENV.step({**state, "prover": "tamarin-prover 1.11.0"}, "1")
    with pytest.raises(EnvironmentInputError, match="has changed"):
        ENV.step({**state, "digest": "0" * 64}, "1")
    with pytest.raises(EnvironmentInputError, match="malformed"):
        ENV.step({**state, "proof": {"method": 1, "cases": []}}, "1")
    with pytest.raises(EnvironmentInputError, match="focus"):
        ENV.step({**state, "focus": [3]}, "1")


# --- expand ----------------------------------------------------------------------------------


def test_expand_returns_every_method_with_its_cases() -> None:
    expansions = ENV.expand(reset().state)
    assert [e.action for e in expansions] == ["simplify", "induction"]
    assert [b.name for b in expansions[1].branches] == ["empty_trace", "non_empty_trace"]
    branch = expansions[1].branches[1]
    assert branch.info["path"] == ["non_empty_trace"] and not branch.terminated
    # A branch's state focuses its case: a step applies the method there, then the episode goes
    # on with the first open goal in depth-first order (here the sibling case).
    stepped = ENV.step(branch.state, "1")
    assert stepped.score.status == "ok" and stepped.info["path"] == ["empty_trace"]
    (_, first), (_, second) = stepped.state["proof"]["cases"]
    assert first is None and second["method"] == "simplify"


def test_expand_selected_methods_and_refuse_unknown_ones() -> None:
    state = reset().state
    assert [e.action for e in ENV.expand(state, ["2"])] == ["induction"]
    with pytest.raises(EnvironmentInputError, match="no proof method"):
        ENV.expand(state, ["7"])


def test_expanding_a_closing_method_gives_no_branches() -> None:
    state = reset("Tutorial", "Client_session_key_secrecy").state
    for _ in range(4):  # the greedy path down to the goal closed by contradiction
        state = ENV.step(state, "1").state
    closing = ENV.expand(state, ["1"])[0]
    assert closing.action.startswith("contradiction") and closing.branches == ()


def test_replay_serves_only_recorded_theories() -> None:
    backend = ReplayBackend([RECORDINGS])
    assert set(backend.recorded) == {
        "Tutorial",
        "Minimal_Loop_Example",
        "KeyRenegotiation_Minimal",
        "NSLPK3",
    }
    # The greedy transcripts and the explored tree describe the same real states: they merge.
    assert len(backend.recorded["Tutorial"].nodes) == 733


# --- over HTTP, with the MCTS client ---------------------------------------------------------


@pytest.fixture(scope="module")
def client(base_url: str) -> Iterator[EnvServerClient]:
    with EnvServerClient(base_url) as http_client:
        yield http_client


@pytest.mark.parametrize("lemma", [*TUTORIAL, "Client_session_key_honest_setup"])
def test_mcts_finds_a_proof_no_larger_than_greedy(client: EnvServerClient, lemma: str) -> None:
    episode_ = client.reset(ENV_ID, options={"theory": "Tutorial", "lemma": lemma})
    found = mcts(client, ENV_ID, episode_, MCTSConfig(budget=300))
    baseline = greedy(client, ENV_ID, episode_)
    assert found.found and baseline.found, (found, baseline)
    assert found.outcome == baseline.outcome
    assert found.proof_size is not None and baseline.proof_size is not None
    assert found.proof_size <= baseline.proof_size
    assert found.proof is not None and parse_proof(found.proof).size == found.proof_size


def test_http_episode_and_expand_round_trip(client: EnvServerClient) -> None:
    first = client.reset(ENV_ID, options={"theory": "Tutorial", "lemma": "Client_auth"})
    assert first.state is not None and first.info["lemmas"][0] == "Client_session_key_secrecy"
    expanded = client.expand(ENV_ID, first.state)
    assert [e.action for e in expanded.expansions] == ["simplify", "induction"]
    child = expanded.expansions[0].branches[0]
    step = client.step(ENV_ID, child.state, "1")
    assert step.status == "ok" and step.info["path"] == ["", "Client_1"]


def test_http_bad_input(base_url: str, client: EnvServerClient) -> None:
    first = client.reset(ENV_ID, options={"theory": "Tutorial", "lemma": "Client_auth"})
    assert first.state is not None
    with httpx.Client(base_url=base_url, timeout=30) as http:
        url = f"/v1/envs/{ENV_ID}"
        forged = first.state[:-4] + ("AAAA" if not first.state.endswith("AAAA") else "BBBB")
        assert http.post(f"{url}/expand", json={"state": forged}).status_code in (400, 403)
        bad = http.post(f"{url}/expand", json={"state": first.state, "actions": ["42"]})
        assert bad.status_code == 400 and "no proof method" in bad.json()["detail"]
        assert (
            http.post(f"{url}/expand", json={"state": first.state, "actions": []}).status_code
            == 422
        )
        unknown = http.post(f"{url}/reset", json={"options": {"theory": "X" * 150}})
        assert unknown.status_code == 400
        math = http.post("/v1/envs/math/reset", json={"seed": 1}).json()
        refused = http.post("/v1/envs/math/expand", json={"state": math["state"]})
        assert refused.status_code == 400 and "does not support expand" in refused.json()["detail"]
        source = http.post(f"{url}/reset", json={"options": {"source": "junk" * 50_000}})
        assert source.status_code == 400
        if find_prover() is None:  # the test server runs without one unless this machine has it
            options = {"source": FALSE_UNDER_A_RECORDED_NAME, "lemma": "Start_before_Stop"}
            false = http.post(f"{url}/reset", json={"options": options})
            assert false.status_code == 503, false.text
            assert "install Tamarin" in false.json()["fix"]


def test_prove_command_compares_mcts_with_greedy(base_url: str) -> None:
    from typer.testing import CliRunner

    from envserver.cli import app

    result = CliRunner().invoke(
        app,
        [
            "tamarin",
            "prove",
            "--url",
            base_url,
            "--theory",
            "Tutorial",
            "--budget",
            "100",
            "--proof",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split()[1:] for line in result.output.splitlines()[1:]}
    assert rows["Client_session_key_secrecy"][:4] == ["verified", "5", "verified", "5"]
    assert rows["Client_session_key_honest_setup"][:4] == ["trace_found", "4", "trace_found", "4"]
    assert "SOLVED // trace found" in result.output  # the printed MCTS proofs
