"""The family README's hand-written programs score full marks; without one repression, not."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sbol3", reason="the sbol extra is not installed")

from verifiers.sbol import VERIFIER, library

README = Path(__file__).resolve().parent.parent / "environments" / "sbol" / "README.md"
BLOCK = re.compile(
    r"^### (?P<title>[^\n]+)\n.*?```python\n(?P<code>.*?)```", re.DOTALL | re.MULTILINE
)
SPECS: dict[str, dict[str, Any]] = {
    "NOT gate": {"circuit": "not_gate", "inputs": ["pTet"], "output": "YFP", "truth_table": [1, 0]},
    "Toggle switch": {"circuit": "toggle_switch"},
    "Repressilator": {"circuit": "repressilator", "size": 3},
}


def _blocks() -> dict[str, str]:
    return {m["title"]: m["code"] for m in BLOCK.finditer(README.read_text())}


def _reference(title: str) -> dict[str, Any]:
    return {"check": "function", "parts": library.allowed_parts(held_out=True), **SPECS[title]}


def test_the_readme_has_the_three_programs() -> None:
    assert set(_blocks()) == set(SPECS)


@pytest.mark.parametrize("title", sorted(SPECS))
def test_a_hand_written_program_scores_full_marks(title: str) -> None:
    score = VERIFIER(f"```python\n{_blocks()[title]}```", _reference(title))
    assert (score.status, score.reward) == ("ok", 1.0), score.detail
    assert score.detail.startswith("all five levels pass")


def _without_first_repression(source: str) -> str:
    """The program without the statement after the first ``# repression:`` comment."""
    lines = source.splitlines()
    marker = next(i for i, line in enumerate(lines) if line.strip() == "# repression:")
    statement = next(s for s in ast.parse(source).body if s.lineno > marker + 1)
    assert statement.end_lineno is not None
    return "\n".join(lines[: statement.lineno - 1] + lines[statement.end_lineno :]) + "\n"


@pytest.mark.parametrize("title", sorted(SPECS))
def test_without_one_repression_it_does_not(title: str) -> None:
    source = _blocks()[title]
    assert source.count("# repression:") >= 1, "each program marks its repressions"
    shorter = _without_first_repression(source)
    assert shorter.count("sbol3.SBO_INHIBITION") + shorter.count("represses(") < (
        source.count("sbol3.SBO_INHIBITION") + source.count("represses(")
    )
    score = VERIFIER(f"```python\n{shorter}```", _reference(title))
    assert score.status == "ok"
    assert score.reward < 1.0
    assert score.components["L5_function"] == 0.0
    assert score.detail.startswith("L5 function failed: the circuit is ")
