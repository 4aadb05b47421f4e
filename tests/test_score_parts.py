"""Reward parts apart from diagnostics (issue 39, item 3): a score's ``components`` are what its
reward is made of and its ``metrics`` what is recorded beside it (never both); each verifier
declares both once and its scores keep to them; ``gate`` runs a second part only after the first
passed and carries a timeout or an error through; ``Verifier`` is generic over its options."""

from __future__ import annotations

from typing import Any

import pytest

from envserver.registry import discover
from verifiers.base import Verifier
from verifiers.numbers import Options
from verifiers.score import Score, gate

REGISTRY = discover()


def test_a_name_is_a_component_or_a_metric_never_both() -> None:
    with pytest.raises(ValueError, match=r"\['passed'\] are both components and metrics"):
        Score.ok(1.0, {"passed": 1.0}, metrics={"passed": 1.0, "total": 1.0})
    score = Score.invalid("no answer", {"syntax": 0.0}, {"levels_passed": 0.0})
    assert (score.components, score.metrics) == ({"syntax": 0.0}, {"levels_passed": 0.0})


@pytest.mark.parametrize("name", sorted(REGISTRY.verifiers))
def test_a_verifier_declares_its_parts_once_and_keeps_to_them(name: str) -> None:
    verifier = REGISTRY.verifiers[name]
    assert not set(verifier.components) & set(verifier.metrics), name
    if verifier.example is None:
        pytest.skip(f"{name} has no example to score")
    score = verifier(*verifier.example)
    assert score.status == "ok" and score.reward == 1.0, score
    assert set(score.components) <= set(verifier.components), name
    assert set(score.metrics) <= set(verifier.metrics), name


class _Counting:
    def __init__(self, score: Score) -> None:
        self.score, self.calls = score, 0

    def __call__(self) -> Score:
        self.calls += 1
        return self.score


PASSED = Score.ok(1.0, {"syntax": 1.0}, metrics={"parsed_ms": 2.0})


@pytest.mark.parametrize(
    "failed",
    [
        Score.invalid("unreadable", {"syntax": 0.0}),
        Score.ok(0.5, {"syntax": 0.5}),
        Score.timeout("the parser ran out of time"),
        Score.error("the parser crashed"),
    ],
)
def test_a_gate_that_does_not_pass_is_the_verdict(failed: Score) -> None:
    then = _Counting(Score.ok(1.0, {"equivalent": 1.0}))
    assert gate(failed, then) is failed
    assert then.calls == 0  # the second, expensive part never runs


def test_a_gate_that_passes_gives_the_second_part_with_both_parts() -> None:
    then = _Counting(Score.ok(0.4, {"equivalent": 0.0}, "weaker", {"verdict": "b"}, {"k": 3.0}))
    score = gate(PASSED, then)
    assert then.calls == 1
    assert (score.reward, score.status, score.detail, score.extra) == (0.4, "ok", "weaker", {
        "verdict": "b"
    })  # fmt: skip
    assert score.components == {"syntax": 1.0, "equivalent": 0.0}
    assert score.metrics == {"parsed_ms": 2.0, "k": 3.0}
    invalid = gate(PASSED, _Counting(Score.invalid("cannot compare")))
    assert (invalid.status, invalid.reward, invalid.components) == ("invalid", 0.0, {"syntax": 1.0})


@pytest.mark.parametrize(
    "lost", [Score.timeout("the solver ran out of time"), Score.error("the solver crashed")]
)
def test_a_gate_carries_a_timeout_or_an_error_through_as_it_is(lost: Score) -> None:
    assert gate(PASSED, _Counting(lost)) is lost  # no reward, never a 0 beside a passed part


class _Threshold(Options):
    at: float = 0.5


def test_a_verifier_is_generic_over_its_options() -> None:
    seen: list[_Threshold] = []

    def check(response: str, reference: Any, options: _Threshold) -> Score:
        seen.append(options)
        return Score.ok(float(float(response) >= options.at))

    verifier: Verifier[_Threshold] = Verifier(
        "test.threshold", "1", "At least the threshold.", check, _Threshold
    )
    assert verifier("0.6", None).reward == 1.0  # the model's defaults
    assert verifier("0.6", None, _Threshold(at=0.9)).reward == 0.0
    assert [options.at for options in seen] == [0.5, 0.9]
