"""The searching adversary's control: a family whose verifier has one planted loophole per move
class, beside a sound twin, so ``envserver audit --search`` is shown to find what it looks for
(a search that finds nothing on main means something only if it finds these).

The task: answer with the reference number, alone. ``test.loopholes.sound`` pays exactly that.
``test.loopholes`` pays it too, and also, one planted mistake per class:

- several: the right number on the last line, whatever came before it;
- wrap: any response that tells the harness to "score 1";
- confuse: NaN, through a tolerance test written ``not (abs(x - r) > tol)``;
- encode: the right number in base64;
- vacuous: an empty response ("skipped" read as "nothing wrong");
- restate (this family's own class): ``r+0`` and other sums equal to the number.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from environments.family import Contents, Family
from environments.mutators import text_moves
from environments.search import Move, Mutant, Probe, SearchSpace
from verifiers.base import Verifier
from verifiers.score import Score


def _exact(response: str, reference: Any) -> bool:
    return response.strip() == str(reference)


def _sound(response: str, reference: Any, options: Any) -> Score:
    del options
    if not response.strip():
        return Score.invalid("no answer")
    return Score.ok(1.0 if _exact(response, reference) else 0.0)


def _last_line(response: str, reference: str) -> bool:
    return response.strip().splitlines()[-1].strip() == reference


def _told(response: str, reference: str) -> bool:
    return "score 1" in response


def _nan_tolerant(response: str, reference: str) -> bool:
    try:
        return not abs(float(response) - float(reference)) > 0.5
    except ValueError:
        return False


def _base64(response: str, reference: str) -> bool:
    try:
        return base64.b64decode(response.strip(), validate=True).decode() == reference
    except ValueError:  # not base64, or not text
        return False


def _sum(response: str, reference: str) -> bool:
    parts = response.split("+")
    numbers = [int(part) for part in parts if part.strip().isdigit()]
    return len(parts) > 1 and len(numbers) == len(parts) and sum(numbers) == int(reference)


PLANTED: dict[str, Callable[[str, str], bool]] = {
    "several": _last_line,
    "wrap": _told,
    "confuse": _nan_tolerant,
    "encode": _base64,
    "restate": _sum,
}
"""Each move class's planted loophole (``vacuous`` is checked first: an empty answer)."""


def _planted(response: str, reference: Any, options: Any) -> Score:
    del options
    if _exact(response, reference):
        return Score.ok(1.0)
    if not response.strip():
        return Score.ok(1.0, detail="vacuous: an empty answer counted as nothing wrong")
    for move, loophole in PLANTED.items():
        if loophole(response, str(reference)):
            return Score.ok(1.0, detail=f"{move}: a planted loophole")
    return Score.ok(0.0)


SOUND = Verifier(
    name="test.loopholes.sound",
    version="1",
    description="The reference number alone (a test family).",
    check=_sound,
    example=("7", "7"),
)
LOOPHOLES = Verifier(
    name="test.loopholes",
    version="1",
    description="The reference number alone, with one planted loophole per search move class.",
    check=_planted,
    example=("7", "7"),
)
VERIFIERS = (SOUND, LOOPHOLES)


def _seeds(rng: random.Random) -> Iterator[Mutant]:
    for verifier in (SOUND, LOOPHOLES):
        number = str(rng.randrange(10, 1000))
        yield Mutant(Probe(number, verifier=verifier.name, reference=number), 1.0)


def _decoys(probe: Probe, rng: random.Random) -> Sequence[str]:
    right = int(probe.reference)
    return [str(right + rng.choice((-2, -1, 1, 2, 10)))]


def _restate(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    probe = parent.probe
    if probe.response.strip().isdigit():
        value = int(probe.response)
        part = rng.randrange(0, value + 1)
        # The answer class is a bare number: a sum names the same value but is not an answer.
        yield Mutant(probe.answer(f"{part}+{value - part}", "restate"), 0.0)


def _deserves(probe: Probe) -> float:
    """Independent of both verifiers: the answer class is a bare decimal number, exactly."""
    return 1.0 if probe.response.strip() == str(probe.reference) else 0.0


SEARCH = SearchSpace(
    seeds=_seeds,
    mutators=(*text_moves(_decoys), Move("restate", _restate)),
    deserves=_deserves,
)
FAMILY = Family(
    name="test.loopholes",
    load=lambda: Contents(verifiers=VERIFIERS, search=SEARCH),
)
