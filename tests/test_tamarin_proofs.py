"""Proof scripts, their place in theories and batch-mode verdicts, on recorded real-Tamarin
1.8.0 output (batch runs in ``tests/fixtures/tamarin/``, interactive transcripts as packaged).

Where a test needs ``tamarin-prover`` to run, a stand-in script replays a *recorded* stdout
(it proves nothing itself); the one test with the real binary is skipped without one.
"""

from __future__ import annotations

import json
import re
import stat
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from environments.datafiles import open_text
from environments.tamarin.provers import RECORDINGS
from tests.conftest import TAMARIN_BATCH
from verifiers.tamarin import EXAMPLE_PROOF, EXAMPLE_THEORY, VERIFIER, extract_proof
from verifiers.tamarin import batch as batch_module
from verifiers.tamarin.batch import (
    BatchOutputError,
    BatchVerdict,
    ProofRejected,
    ProverFailed,
    check_proof,
    parse_batch_output,
)
from verifiers.tamarin.proof import (
    MAX_DEPTH,
    MAX_PROOF_CHARS,
    ProofSyntaxError,
    ProofTree,
    parse_proof,
    render_proof,
)
from verifiers.tamarin.prover import Prover, ProverNotFound, find_prover, locate_prover
from verifiers.tamarin.script import find_proof_slot, insert_proof, lemma_proof
from verifiers.tamarin.theory import UnknownLemma, parse_theory

BATCH = TAMARIN_BATCH
TUTORIAL_LEMMAS = (
    "Client_session_key_secrecy",
    "Client_auth",
    "Client_auth_injective",
    "Client_session_key_honest_setup",
)


def read(name: str) -> str:
    return (BATCH / name).read_text(encoding="utf-8")


def sources(transcript: str) -> list[str]:
    """The ``source`` bodies of a recorded interactive session (theory text with the proofs
    real Tamarin rendered)."""
    with open_text(RECORDINGS / transcript) as lines:
        records = [json.loads(line) for line in lines]
    return [r["body"] for r in records if r["path"].endswith("/source")]


def proof_text(theory: str, lemma: str) -> str:
    slot = find_proof_slot(theory, lemma)
    return theory[slot.start : slot.end]


# --- rendering and parsing the recorded proofs -------------------------------------------


@pytest.mark.parametrize(
    "transcript",
    [
        "tutorial_interactive_greedy.jsonl.xz",
        "minimal_loop_interactive_greedy.jsonl.xz",
        "keyreneg_interactive_greedy.jsonl.xz",
        "nslpk3_interactive_greedy.jsonl.xz",
    ],
)
def test_recorded_greedy_proofs_render_exactly(transcript: str) -> None:
    checked = 0
    for body in sources(transcript):
        for lemma in parse_theory(body, trusted=True).lemmas:
            text = proof_text(body, lemma)
            tree = parse_proof(text)
            assert render_proof(tree) == text, lemma
            checked += 1
    assert checked >= 2


def test_greedy_tutorial_proof_sizes() -> None:
    final = sources("tutorial_interactive_greedy.jsonl.xz")[-1]
    trees = {lemma: lemma_proof(final, lemma) for lemma in TUTORIAL_LEMMAS}
    assert {lemma: tree.size for lemma, tree in trees.items() if tree} == {
        "Client_session_key_secrecy": 5,
        "Client_auth": 11,
        "Client_auth_injective": 15,
        # 10 applied methods; the SOLVED leaf is a status, not a method
        "Client_session_key_honest_setup": 10,
    }
    assert all(tree is not None and tree.is_complete for tree in trees.values())
    honest = trees["Client_session_key_honest_setup"]
    assert honest is not None and honest.found_trace
    auth = trees["Client_auth"]
    assert auth is not None and not auth.found_trace and auth.depth == 7


def test_complete_client_auth_script_renders_exactly() -> None:
    theory = read("Tutorial_complete.spthy")
    text = proof_text(theory, "Client_auth")
    tree = parse_proof(text)
    assert render_proof(tree) == text
    assert (tree.size, tree.is_complete) == (11, True)
    assert tree.method == "simplify" and tree.cases[0][0] == ""
    solve = tree.cases[0][1]
    assert solve.method == "solve( Client_1( S, k ) ▶₀ #i )"
    assert [name for name, _ in solve.cases] == ["Client_1"]
    inner = solve.cases[0][1]
    assert [name for name, _ in inner.cases] == ["Serv_1", "c_h"]
    assert inner.cases[0][1].cases[0][1].method == "contradiction /* from formulas */"


@pytest.mark.parametrize("variant", ["partial", "badstep", "badcase"])
def test_variant_scripts_render_exactly(variant: str) -> None:
    theory = read(f"Tutorial_{variant}.spthy")
    text = proof_text(theory, "Client_auth")
    tree = parse_proof(text)
    assert render_proof(tree) == text
    assert not tree.is_complete


@pytest.mark.parametrize("variant", ["complete", "partial", "badstep", "badcase"])
def test_tamarin_reprinted_proofs_parse_and_render_exactly(variant: str) -> None:
    # Tamarin's own annotated output: `sorry /* invalid proof step encountered */` with the
    # old branch below it, `/* unannotated */` steps, comment-less `by contradiction`.
    stdout = read(f"Tutorial_{variant}.check.stdout")
    theory = stdout[stdout.index("theory Tutorial") :]
    for lemma in TUTORIAL_LEMMAS:
        text = proof_text(theory, lemma)
        assert render_proof(parse_proof(text)) == text


def test_multiline_goals_keep_their_layout_at_any_depth() -> None:
    final = sources("minimal_loop_interactive_greedy.jsonl.xz")[-1]
    tree = lemma_proof(final, "Start_before_Loop")
    assert tree is not None
    goal = next(n.method for n in tree.nodes() if n.method and "\n" in n.method)
    assert goal.splitlines()[1].startswith("       (∃ #i.")  # relative to its line's indent
    nested = ProofTree("simplify", (("a", tree), ("b", ProofTree(None))))
    assert parse_proof(render_proof(nested)) == nested


def test_solved_and_sorry_forms() -> None:
    assert render_proof(ProofTree("SOLVED")) == "SOLVED // trace found"
    assert render_proof(ProofTree(None)) == "by sorry"
    assert ProofTree("sorry") == ProofTree(None)
    assert parse_proof("by sorry") == ProofTree(None)
    assert parse_proof("SOLVED") == parse_proof("SOLVED // trace found") == ProofTree("SOLVED")
    tree = parse_proof(
        "simplify\nsolve( A( x ) @ #i )\n  case A\n  SOLVED\nnext\n  case B\n  by sorry\nqed"
    )
    assert tree.found_trace and not tree.is_complete and tree.size == 2
    assert parse_proof("induction // a comment\n/* another\n one */ by contradiction") == (
        ProofTree("induction", (("", ProofTree("contradiction")),))
    )


# --- hypothesis: random trees round-trip ---------------------------------------------------

METHODS = st.sampled_from(
    [
        "simplify",
        "induction",
        "solve( Client_1( S, k ) ▶₀ #i )",
        "solve( !KU( aenc(<'1', ~k>, pk(~ltkS)) ) @ #vk.1 )",
        "solve( (#i < #j)  ∥ (#j < #i) )",
        "sorry /* invalid proof step encountered */",
        "solve( x ) /* unannotated */",
    ]
)
LEAVES = st.builds(
    ProofTree,
    st.sampled_from(
        [
            None,
            "SOLVED",
            "contradiction",
            "contradiction /* from formulas */",
            "contradiction /* cyclic */",
            "sorry /* unannotated */",
            "INVALIDATED",
            "UNFINISHABLE",
        ]
    ),
)
NAMES = st.from_regex(r"[A-Za-z0-9_]{0,8}", fullmatch=True)


def _extend(children: st.SearchStrategy[ProofTree]) -> st.SearchStrategy[ProofTree]:
    single = st.builds(lambda m, c: ProofTree(m, (("", c),)), METHODS, children)
    named = st.builds(
        lambda m, cs: ProofTree(m, tuple(cs)),
        METHODS,
        st.lists(st.tuples(NAMES, children), min_size=1, max_size=4).filter(
            lambda cs: not (len(cs) == 1 and cs[0][0] == "")
        ),
    )
    return single | named


TREES = st.recursive(LEAVES, _extend, max_leaves=30)


@given(TREES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_trees_round_trip(tree: ProofTree) -> None:
    text = render_proof(tree)
    again = parse_proof(text)
    assert again == tree
    assert hash(again) == hash(tree)
    assert render_proof(again) == text
    assert again.size == tree.size and again.is_complete == tree.is_complete


@given(st.text(max_size=400))
@settings(max_examples=300, deadline=None)
def test_arbitrary_text_parses_or_raises_a_syntax_error(text: str) -> None:
    try:
        parse_proof(text)
    except ProofSyntaxError as exc:
        assert str(exc)


# --- hostile input ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   \n\t", "// only a comment\n/* and another */"])
def test_empty_scripts_are_refused(text: str) -> None:
    with pytest.raises(ProofSyntaxError, match="empty"):
        parse_proof(text)


def test_junk_is_refused_quickly() -> None:
    junk = "".join(chr(33 + (i * 7919) % 90) for i in range(100_000))
    start = time.perf_counter()
    with pytest.raises(ProofSyntaxError):
        parse_proof(junk)
    with pytest.raises(ProofSyntaxError, match="longer than"):
        parse_proof("simplify\n" * (MAX_PROOF_CHARS // 9 + 1))
    assert time.perf_counter() - start < 2


def test_ten_thousand_nested_cases_are_refused_without_recursion() -> None:
    depth = 10_000
    lines = [f"solve( A( x ) @ #i )\ncase c{i}" for i in range(depth)]
    text = "\n".join(lines) + "\nby sorry\n" + "qed\n" * depth
    with pytest.raises(ProofSyntaxError, match=f"deeper than {MAX_DEPTH}"):
        parse_proof(text)


def test_the_deepest_accepted_tree_works_iteratively() -> None:
    tree = ProofTree(None)
    for i in range(MAX_DEPTH - 1):
        tree = ProofTree("simplify", ((f"c{i}", tree),) if i % 20 == 0 else (("", tree),))
    text = render_proof(tree)
    again = parse_proof(text)
    assert again == tree and hash(again) == hash(tree)
    assert again.size == MAX_DEPTH - 1 and again.depth == MAX_DEPTH
    assert repr(again).startswith("parse_proof(")


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("by contradiction\nqed", 2, "after the end"),
        ("solve( A )\n  case A\n  by sorry\nqed\nqed", 5, "after the end"),
        ("solve( A )\n  case A\n  by sorry\n", 4, "expected 'next' or 'qed'"),
        ("solve( A )\n  case A\n  by sorry\nnext\nby sorry\nqed", 5, "'next' must be followed"),
        ("simplify\nsolve( A ( )\n", 2, "unbalanced"),
        ("simplify\nsolve A\n", 2, "must be followed by"),
        ('solve( "x" )', 1, "quotes or comments"),
        ("solve( x /* ) */ )", 1, "quotes or comments"),
        ("simplify\n/* never closed", 2, "unterminated"),
        ("simplify\nby\n", 3, "'by' needs a proof method"),
        ("simplify\nlemma evil:", 2, "unknown proof step 'lemma'"),
        ("qed", 1, "expected a proof step"),
        ("simplify\n\n  next", 3, "expected a proof step"),
        ("simplify", 1, "expected a proof step"),
    ],
)
def test_syntax_errors_name_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ProofSyntaxError, match=re.escape(message)) as caught:
        parse_proof(text)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"line {line}: ")


# --- proofs inside theories ------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["complete", "partial", "badstep", "badcase"])
def test_insert_into_a_printed_theory_reproduces_the_recorded_file(variant: str) -> None:
    with_proof = read(f"Tutorial_{variant}.spthy")
    sorry = read("Tutorial_sorry.spthy")
    script = proof_text(with_proof, "Client_auth")
    assert insert_proof(sorry, "Client_auth", script) == with_proof
    assert insert_proof(with_proof, "Client_auth", "by sorry") == sorry


def test_insert_into_an_original_theory() -> None:
    original = read("Tutorial.spthy")
    assert all(lemma_proof(original, lemma) is None for lemma in TUTORIAL_LEMMAS)
    script = proof_text(read("Tutorial_complete.spthy"), "Client_auth")
    inserted = insert_proof(original, "Client_auth", script)
    assert lemma_proof(inserted, "Client_auth") == parse_proof(script)
    # the proof lands right after the formula; the neighbours are untouched
    assert inserted.replace("\n" + script, "", 1) == original
    for other in ("Client_session_key_secrecy", "Client_auth_injective"):
        assert lemma_proof(inserted, other) is None
    again = insert_proof(inserted, "Client_auth", "simplify\nby sorry")
    assert lemma_proof(again, "Client_auth") == parse_proof("simplify\nby sorry")
    assert again.replace("\nsimplify\nby sorry", "", 1) == original


def test_insert_finds_the_lemma_not_a_comment_or_a_longer_name() -> None:
    theory = (
        "theory T begin\n"
        '/* lemma a: "fake" */\n'
        '// lemma a: "fake"\n'
        'lemma a_longer: "All #i. A() @ #i ==> F"\n'
        'lemma a [reuse]:\n  exists-trace "Ex #i. A() @ #i"\n'
        '/*\nguarded formula characterizing all satisfying traces:\n"x"\n*/\n'
        "by sorry\n\nend\n"
    )
    out = insert_proof(theory, "a", "simplify\nSOLVED")
    assert "*/\nsimplify\nSOLVED // trace found\n\nend\n" in out
    assert lemma_proof(out, "a_longer") is None
    out = insert_proof(theory, "a_longer", "by contradiction")
    assert 'F"\nby contradiction\nlemma a [reuse]' in out
    with pytest.raises(UnknownLemma):
        insert_proof(theory, "b", "by sorry")
    with pytest.raises(ProofSyntaxError):
        insert_proof(theory, "a", 'qed\nlemma evil: "x"')


# --- batch outputs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("complete", BatchVerdict("Client_auth", "verified", 11)),
        ("partial", BatchVerdict("Client_auth", "incomplete", 5)),
        ("badstep", BatchVerdict("Client_auth", "incomplete", 4, invalid_step=True)),
        ("badcase", BatchVerdict("Client_auth", "incomplete", 4, invalid_case=True)),
    ],
)
def test_recorded_check_outputs_are_classified(variant: str, expected: BatchVerdict) -> None:
    stdout = read(f"Tutorial_{variant}.check.stdout")
    assert parse_batch_output(stdout, "Client_auth") == expected
    assert parse_batch_output(stdout, "Client_auth").proven == (variant == "complete")
    for other in TUTORIAL_LEMMAS[:1] + TUTORIAL_LEMMAS[2:]:  # their markers are their own
        assert parse_batch_output(stdout, other) == BatchVerdict(other, "incomplete", 1)


@pytest.mark.parametrize(
    ("name", "steps"),
    [
        (
            "Tutorial.prove.stdout",
            {
                lemma: ("verified", n)
                for lemma, n in zip(TUTORIAL_LEMMAS, (5, 11, 15, 5), strict=True)
            },
        ),
        ("Tutorial.noprove.stdout", dict.fromkeys(TUTORIAL_LEMMAS, ("incomplete", 1))),
        (
            "Tutorial.prove_Client_auth_oracle.stdout",
            {**dict.fromkeys(TUTORIAL_LEMMAS, ("incomplete", 1)), "Client_auth": ("verified", 16)},
        ),
    ],
)
def test_recorded_prove_outputs_are_classified(
    name: str, steps: dict[str, tuple[str, int]]
) -> None:
    stdout = read(name)
    for lemma, (status, count) in steps.items():
        verdict = parse_batch_output(stdout, lemma)
        assert (verdict.status, verdict.steps) == (status, count)
        assert not verdict.invalid_step and not verdict.invalid_case
        assert verdict.proven == (status == "verified")


def test_markers_of_another_lemma_do_not_count() -> None:
    # The bad Client_auth proof moved onto the injective lemma: only that lemma is marked.
    stdout = read("Tutorial_badstep.check.stdout")
    marked = proof_text(stdout[stdout.index("theory Tutorial") :], "Client_auth")
    stdout = stdout.replace(marked, "by sorry", 1).replace(
        "*/\nby sorry\n\nlemma Client_session_key_honest_setup",
        f"*/\n{marked}\n\nlemma Client_session_key_honest_setup",
    )
    assert parse_batch_output(stdout, "Client_auth").invalid_step is False
    assert parse_batch_output(stdout, "Client_auth_injective").invalid_step is True


@pytest.mark.parametrize(
    ("line", "status", "steps"),
    [  # summary wordings of the other outcomes (Tamarin's texts; not in the recordings)
        ("falsified - found trace (7 steps)", "falsified", 7),
        ("falsified - no trace found (7 steps)", "falsified", 7),
        ("analysis cannot be finished (reducible operators in subterms)", "unfinishable", None),
        ("proof has been invalidated (3 steps)", "invalidated", 3),
        ("verified (1 step)", "verified", 1),
    ],
)
def test_other_summary_statuses(line: str, status: str, steps: int | None) -> None:
    stdout = f"summary of summaries:\n\n  lemma_x (all-traces): {line}\n\n====\n"
    verdict = parse_batch_output(stdout, "lemma_x")
    assert (verdict.status, verdict.steps) == (status, steps)


def test_outputs_without_a_verdict_are_errors() -> None:
    with pytest.raises(BatchOutputError, match="no 'summary of summaries'"):
        parse_batch_output("theory T begin\nend\n", "a")
    with pytest.raises(BatchOutputError, match="no line for lemma"):
        parse_batch_output(read("Tutorial.prove.stdout"), "Client")
    with pytest.raises(BatchOutputError, match="unknown lemma status"):
        parse_batch_output("summary of summaries:\n  a (all-traces): pondering\n", "a")


# --- check_proof and the verifier, with a stand-in that replays recorded stdout ------------

REPLAY = """#!{python}
import os, shutil, sys, time
shutil.copy(sys.argv[1], os.environ["FAKE_TAMARIN_SEEN"])
time.sleep(float(os.environ.get("FAKE_TAMARIN_SLEEP", "0")))
sys.stdout.write(open(os.environ["FAKE_TAMARIN_STDOUT"], encoding="utf-8").read())
sys.stderr.write(os.environ.get("FAKE_TAMARIN_STDERR", ""))
"""


@pytest.fixture
def replaying(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in ``tamarin-prover`` printing a recorded stdout; returns where it copies the
    file it was given."""
    script = tmp_path / "tamarin-prover"
    script.write_text(REPLAY.format(python=sys.executable), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    seen = tmp_path / "seen.spthy"
    monkeypatch.setenv("FAKE_TAMARIN_SEEN", str(seen))
    monkeypatch.setattr(batch_module, "find_prover", lambda: Prover(str(script), "1.8.0"))
    return seen


def replay(monkeypatch: pytest.MonkeyPatch, stdout: str) -> None:
    monkeypatch.setenv("FAKE_TAMARIN_STDOUT", str(BATCH / stdout))


def running(command: str) -> list[int]:
    """Processes whose command line holds ``command``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and command.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def reference() -> dict[str, str]:
    return {"theory": read("Tutorial.spthy"), "lemma": "Client_auth"}


def test_check_proof_runs_the_file_with_the_proof(
    replaying: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay(monkeypatch, "Tutorial_complete.check.stdout")
    script = proof_text(read("Tutorial_complete.spthy"), "Client_auth")
    verdict = check_proof(read("Tutorial.spthy"), "Client_auth", script, timeout_s=30)
    assert verdict == BatchVerdict("Client_auth", "verified", 11)
    assert replaying.read_text(encoding="utf-8") == insert_proof(
        read("Tutorial.spthy"), "Client_auth", script
    )


def test_check_proof_without_a_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_module, "find_prover", lambda: None)
    with pytest.raises(ProverNotFound, match="install Tamarin"):
        check_proof(read("Tutorial.spthy"), "Client_auth", "by sorry", timeout_s=5)
    score = VERIFIER("simplify\nby sorry", reference())
    assert (score.status, score.reward) == ("error", None)
    assert "no tamarin-prover binary" in score.detail


def test_a_hung_prover_times_out_and_is_reaped(
    replaying: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay(monkeypatch, "Tutorial_complete.check.stdout")
    monkeypatch.setenv("FAKE_TAMARIN_SLEEP", "30")
    start = time.perf_counter()
    score = VERIFIER("by sorry", reference(), VERIFIER.options_model(prover_timeout_s=0.5))
    assert (score.status, score.reward) == ("timeout", None)
    assert time.perf_counter() - start < 10
    assert not running(str(replaying.parent / "tamarin-prover"))


def test_a_refusal_inside_the_proof_is_the_scripts_fault(
    replaying: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (replaying.parent / "empty").write_text("", encoding="utf-8")
    monkeypatch.setenv("FAKE_TAMARIN_STDOUT", str(replaying.parent / "empty"))
    theory = read("Tutorial.spthy")
    text = insert_proof(theory, "Client_auth", "simplify\nby solve( nonsense )")
    line = text.splitlines().index("by solve( nonsense )") + 1
    monkeypatch.setenv(
        "FAKE_TAMARIN_STDERR", f'"theory.spthy" (line {line}, column 8):\nunexpected "n"'
    )
    with pytest.raises(ProofRejected) as caught:
        check_proof(theory, "Client_auth", "simplify\nby solve( nonsense )", timeout_s=30)
    assert caught.value.line == 2
    score = VERIFIER("simplify\nby solve( nonsense )", reference())
    assert (score.status, score.reward) == ("invalid", 0.0)
    monkeypatch.setenv("FAKE_TAMARIN_STDERR", '"theory.spthy" (line 3, column 1):\nbad rule')
    with pytest.raises(ProverFailed, match="gave no verdict"):
        check_proof(theory, "Client_auth", "by sorry", timeout_s=30)
    assert VERIFIER("by sorry", reference()).status == "error"


@pytest.mark.parametrize(
    ("variant", "reward", "components"),
    [
        (
            "complete",
            1.0,
            {"steps": 11.0, "size": 11.0, "verified": 1.0, "proven": 1.0, "complete": 1.0},
        ),
        (
            "partial",
            0.0,
            {"steps": 5.0, "size": 3.0, "verified": 0.0, "proven": 0.0, "complete": 0.0},
        ),
        ("badstep", 0.0, {"steps": 4.0, "invalid_step": 1.0, "invalid_case": 0.0}),
        ("badcase", 0.0, {"steps": 4.0, "invalid_step": 0.0, "invalid_case": 1.0}),
    ],
)
def test_verifier_scores_recorded_verdicts(
    replaying: Path,
    monkeypatch: pytest.MonkeyPatch,
    variant: str,
    reward: float,
    components: dict[str, float],
) -> None:
    replay(monkeypatch, f"Tutorial_{variant}.check.stdout")
    script = proof_text(read(f"Tutorial_{variant}.spthy"), "Client_auth")
    score = VERIFIER(f"Here is the proof:\n```spthy\n{script}\n```\n", reference())
    assert (score.status, score.reward) == ("ok", reward)
    assert components.items() <= {**score.components, **score.metrics}.items()


def test_verifier_refuses_junk_and_bad_references() -> None:
    for junk in ("", "lorem ipsum dolor", "```\n```", "qed"):
        score = VERIFIER(junk, reference())
        assert (score.status, score.reward) == ("invalid", 0.0), junk
    bad = [
        {"theory": "not a theory", "lemma": "x"},
        {"theory": read("Tutorial.spthy"), "lemma": "No_such_lemma"},
        {
            "theory": read("Tutorial.spthy").replace("begin", 'begin\nheuristic: o "x"', 1),
            "lemma": "Client_auth",
        },
        {"lemma": "x"},
        "a string",
    ]
    for ref in bad:
        score = VERIFIER("by sorry", ref)
        assert (score.status, score.reward) == ("error", None), ref


def test_extract_proof_takes_the_last_fenced_block() -> None:
    assert (
        extract_proof("a\n```\nby sorry\n```\nthen\n```spthy\nsimplify\nby contradiction\n```")
        == "simplify\nby contradiction"
    )
    assert extract_proof("  by sorry \n") == "by sorry"
    assert extract_proof("```\nsimplify\nby sorry") == "simplify\nby sorry"  # cut off


def test_the_example_exists_only_where_it_can_be_checked() -> None:
    assert (VERIFIER.example is None) == (locate_prover() is None)
    assert parse_proof(EXAMPLE_PROOF).found_trace
    assert "nothing_needs_to_start" in parse_theory(EXAMPLE_THEORY).lemmas


# --- the real binary ---------------------------------------------------------------------------


@pytest.mark.skipif(
    find_prover() is None, reason="requires tamarin: no tamarin-prover on PATH (or $TAMARIN_PROVER)"
)
def test_real_tamarin_checks_the_recorded_complete_proof() -> None:
    prover = find_prover()
    assert prover is not None
    script = proof_text(read("Tutorial_complete.spthy"), "Client_auth")
    verdict = check_proof(read("Tutorial.spthy"), "Client_auth", script, timeout_s=120)
    if prover.version.startswith("1.8."):  # goal texts and case names are 1.8.0's
        assert verdict == BatchVerdict("Client_auth", "verified", 11)
    partial = check_proof(
        read("Tutorial.spthy"), "Client_auth", "simplify\nby sorry", timeout_s=120
    )
    assert partial.status == "incomplete" and not partial.proven
    assert VERIFIER.example is not None
    assert VERIFIER(*VERIFIER.example).reward == 1.0
