"""L3, semantic review: a pluggable reviewer reads the environment's prompts and references.

By default rule checks; with ``ENVSERVER_EVO_REVIEWER_URL`` set, a model audits the source too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from environments.evo.endpoints import complete

LEAK_MARGIN = 0.5
"""How much more often an instance's own answer must appear in its prompt than other
instances' answers do (chance) before it counts as leaked."""


@dataclass(frozen=True)
class Sample:
    """One probed task: its prompt and its reference response."""

    prompt: str
    reference: str


class Reviewer(Protocol):
    """Reads a submission; returns None to pass it, or the reason to reject it."""

    def __call__(self, source: str, samples: Sequence[Sample]) -> str | None: ...


_TAG = re.compile(r"<answer>((?:(?!<answer>).)*?)</answer>", re.DOTALL)
"""An answer tag and its text; of nested tags, the innermost (``<answer><answer>7</answer>``
holds 7)."""


def answer_of(response: str) -> str:
    """The text inside the last ``<answer>…</answer>`` (the whole response without tags)."""
    found = _TAG.findall(response)
    return (found[-1] if found else response).strip()


def several_answers(response: str) -> bool:
    """Whether ``response``'s answer tags hold different answers: one answer per response (the
    same answer twice is one)."""
    return len({text.strip() for text in _TAG.findall(response)}) > 1


def _appears(answer: str, prompt: str) -> bool:
    if not answer:
        return False
    return re.search(rf"(?<![\w.]){re.escape(answer)}(?!\w|\.\d)", prompt) is not None


def rule_review(source: str, samples: Sequence[Sample]) -> str | None:
    """Rejects prompts that do not state the ``<answer>`` format, and answers leaked into their
    prompts (more often than other instances' answers appear there by chance)."""
    del source  # the rules read behaviour, not code
    missing = sum("<answer>" not in sample.prompt for sample in samples)
    if missing:
        return f"{missing} of {len(samples)} prompts do not state the <answer>...</answer> format"
    answers = [answer_of(sample.reference) for sample in samples]
    own = sum(_appears(a, s.prompt) for a, s in zip(answers, samples, strict=True))
    pairs = [(a, s) for i, a in enumerate(answers) for j, s in enumerate(samples) if i != j]
    chance = sum(_appears(a, s.prompt) for a, s in pairs) / max(1, len(pairs))
    rate = own / len(samples)
    if rate - chance > LEAK_MARGIN:
        return (
            f"the reference answer appears in its own prompt in {rate:.0%} of probed tasks "
            f"(other tasks' answers: {chance:.0%}): the prompt leaks the answer"
        )
    return None


@dataclass(frozen=True)
class ModelReviewer:
    """The rules first, then a model's audit of the source and a few tasks."""

    url: str
    model: str

    def __call__(self, source: str, samples: Sequence[Sample]) -> str | None:
        ruled = rule_review(source, samples)
        if ruled is not None:
            return ruled
        shown = "\n\n".join(f"PROMPT:\n{s.prompt}\nREFERENCE:\n{s.reference}" for s in samples[:3])
        reply = complete(
            self.url,
            self.model,
            "Audit this RL environment. Does each prompt describe exactly what score() checks, "
            "without leaking the answer or a trivial shortcut? End with 'VERDICT: PASS' or "
            f"'VERDICT: FAIL: <reason>'.\n\nSOURCE:\n{source}\n\nTASKS:\n{shown}",
        )
        verdict = reply.rsplit("VERDICT:", 1)[-1].strip()
        if verdict.upper().startswith("PASS"):
            return None
        return f"the model reviewer: {verdict.removeprefix('FAIL:').strip() or reply[-300:]}"
